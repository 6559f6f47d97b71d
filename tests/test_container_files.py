"""The Dockerfile, .dockerignore and kind-config.yaml, checked without a Docker engine or a cluster.

No Docker engine runs here (docs/design.md#how-it-is-tested), so the Dockerfile is parsed and its promises are
checked one by one: stages, non-root user, health check, entry point, the model built into the
image, and a build context that holds every file a COPY needs. The image's `pip install '.[operator]'` is
reproduced offline: a wheel is built from exactly the files the builder stage copies (after
.dockerignore) and must carry both packages, every module and data file, and both console scripts.
"""

from __future__ import annotations

import configparser
import http.server
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
KIND_CONFIG = ROOT / "kind-config.yaml"
MODELS_DIR = "/opt/ragdown/models"


# --- a small Dockerfile parser ---------------------------------------------------------------------


@dataclass
class Instruction:
    keyword: str
    args: str

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form instruction (ENTRYPOINT ["ragdown"]), else None."""
        text = self.args.strip()
        if not text.startswith("["):
            return None
        value = json.loads(text)
        assert isinstance(value, list)
        return [str(part) for part in value]

    def flags_and_paths(self) -> tuple[dict[str, str], list[str]]:
        """`--from=builder /opt/venv /opt/venv` -> ({"from": "builder"}, ["/opt/venv", "/opt/venv"])."""
        flags, paths = {}, []
        for word in shlex.split(self.args):
            if word.startswith("--"):
                name, _, value = word[2:].partition("=")
                flags[name] = value
            else:
                paths.append(word)
        return flags, paths


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def env(self) -> dict[str, str]:
        """The stage's ENV settings (KEY=value form), later ones winning."""
        values: dict[str, str] = {}
        for instruction in self.all("ENV"):
            for word in shlex.split(instruction.args):
                key, sep, value = word.partition("=")
                assert sep, f"ENV {instruction.args!r}: use the KEY=value form"
                values[key] = value
        return values


def parse_dockerfile(text: str) -> list[Stage]:
    """Stages with their instructions: comments dropped, `\\` continuations joined."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"

    stages: list[Stage] = []
    for line in logical:
        keyword, _, args = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            words = args.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append(Stage(_expand(words[0]), name))
            continue
        if not stages:
            assert keyword == "ARG", f"{keyword} before the first FROM (only ARG may come first)"
            name, _, default = args.strip().partition("=")
            GLOBAL_ARGS[name] = default
            continue
        stages[-1].instructions.append(Instruction(keyword, args.strip()))
    return stages


GLOBAL_ARGS: dict[str, str] = {}


def _expand(image: str) -> str:
    """A FROM's image with the global ARGs' defaults in place of `${NAME}`."""
    return re.sub(r"\$\{(\w+)\}", lambda m: GLOBAL_ARGS[m.group(1)], image)


STAGES = parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))
BUILDER = STAGES[0]
FINAL = STAGES[-1]


# --- .dockerignore, as Docker reads it ------------------------------------------------------------


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern (Go filepath.Match plus `**`) as a regex over a context path."""
    out, i = "", 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char))
        i += 1
    return re.compile(out)


def read_dockerignore() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
        rules.append((keep, pattern_regex(pattern)))
    return rules


IGNORE_RULES = read_dockerignore()


def excluded(relative: str) -> bool:
    """Whether the build context leaves `relative` out: the last rule matching the path or one of
    its parent folders decides (a folder left out takes its contents with it)."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    verdict = False
    for keep, regex in IGNORE_RULES:
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            verdict = not keep
    return verdict


def project_files(relative_dir: str) -> list[str]:
    """Files under a folder that belong to the project: tracked or new, not git-ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", relative_dir],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [path for path in listed if (ROOT / path).is_file()]


def context_copies(stage: Stage) -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY from the build context (not from another stage)."""
    copies = []
    for instruction in stage.all("COPY"):
        flags, paths = instruction.flags_and_paths()
        if "from" not in flags:
            copies.append((paths[:-1], paths[-1]))
    return copies


# --- the Dockerfile -------------------------------------------------------------------------------


def test_stages() -> None:
    # Both stages on PYTHON_IMAGE: the real python:3.12-slim by default, a stand-in where no registry is.
    assert [stage.base for stage in STAGES] == ["python:3.12-slim", "python:3.12-slim"]
    assert "FROM ${PYTHON_IMAGE}" in DOCKERFILE.read_text(encoding="utf-8")
    assert BUILDER.name == "builder"
    for stage in STAGES:
        for instruction in stage.all("COPY"):
            flags, _ = instruction.flags_and_paths()
            if "from" in flags:
                earlier = [s.name for s in STAGES[: STAGES.index(stage)]]
                assert flags["from"] in earlier, instruction.args


def test_final_stage_runs_as_the_numeric_non_root_user() -> None:
    users = FINAL.all("USER")
    assert users, "the final stage never leaves root"
    user = users[-1].args
    assert re.fullmatch(r"\d+:\d+", user), f"USER {user}: numeric, so runAsNonRoot can verify it"
    uid, gid = (int(part) for part in user.split(":"))
    assert uid != 0
    assert gid != 0
    # The named user exists in the image with that uid/gid (files it owns show a name, not a number).
    created = " ".join(i.args for i in FINAL.all("RUN"))
    assert f"--uid {uid}" in created
    assert f"--gid {gid}" in created
    # Nothing after USER switches back to root.
    last_user_at = FINAL.instructions.index(users[-1])
    assert not [i for i in FINAL.instructions[last_user_at:] if i.keyword == "RUN"]


def test_entrypoint_serves_by_default_and_operator_is_a_console_script() -> None:
    assert FINAL.all("ENTRYPOINT")[-1].exec_form() == ["ragdown"]
    assert FINAL.all("CMD")[-1].exec_form() == ["serve"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["ragdown"] == "ragdown.cli:main"
    assert scripts["ragdown-operator"] == "ragdown_operator.main:main"
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert "--entrypoint ragdown-operator" in text  # documented for `docker run`


def test_runtime_environment() -> None:
    env = FINAL.env()
    assert env["PATH"].startswith("/opt/venv/bin:")
    expected = {
        "PYTHONUNBUFFERED": "1",
        "RAGDOWN_HOST": "0.0.0.0",
        "PORT": "3000",
        "RAGDOWN_DOCS_DIR": "/data/docs",
        "RAGDOWN_DATA_DIR": "/data/index",
        "RAGDOWN_MODELS": MODELS_DIR,
        "XDG_CACHE_HOME": "/tmp/cache",
    }
    assert {key: env.get(key) for key in expected} == expected
    # lance's full-text indexing deadlocked with fewer than two threads (docs/design.md#lancedb-threads).
    assert int(env["LANCE_CPU_THREADS"]) >= 2
    exposed = {port for i in FINAL.all("EXPOSE") for port in i.args.split()}
    assert {"3000", "9090"} <= exposed
    labels = " ".join(i.args for i in FINAL.all("LABEL"))
    for key in ("title", "description", "licenses", "version"):
        assert f"org.opencontainers.image.{key}=" in labels


def test_the_int8_model_is_built_in_the_builder_and_copied() -> None:
    assert BUILDER.env()["RAGDOWN_MODELS"] == MODELS_DIR
    runs = [i.args for i in BUILDER.all("RUN")]
    install = next(
        n
        for n, run in enumerate(runs)
        if re.search(r"\bpip install -c constraints\.txt '\.\[operator\]'(\s|$)", run)
    )
    build = next(n for n, run in enumerate(runs) if "ragdown index" in run)
    assert install < build, "the model is built with the installed ragdown"
    # The build fails when the model did not come out (the embedder would quietly fall back).
    assert f"ls {MODELS_DIR}/minilm-q8-" in runs[build]
    from_builder = [
        i.flags_and_paths()[1] for i in FINAL.all("COPY") if i.flags_and_paths()[0].get("from") == "builder"
    ]
    assert ["/opt/venv", "/opt/venv"] in from_builder
    assert [MODELS_DIR, MODELS_DIR] in from_builder


def test_the_image_installs_pinned_versions_and_leaves_build_only_packages_behind() -> None:
    """constraints.txt pins every runtime dependency within pyproject's range; onnx (it only builds
    the int8 model) and the packaging tools stay in the builder."""
    from packaging.requirements import Requirement

    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # The image installs the operator extra too.
    declared = project["dependencies"] + project["optional-dependencies"]["operator"]
    for text in declared:
        requirement = Requirement(text)
        name = requirement.name.lower().replace("_", "-")
        assert name in pins, f"{name} is not pinned in constraints.txt"
        assert requirement.specifier.contains(pins[name], prereleases=True), f"{name}=={pins[name]}: {text}"
    copied = [i.flags_and_paths()[1] for i in BUILDER.all("COPY")]
    assert any("constraints.txt" in paths for paths in copied)
    runs = [i.args for i in BUILDER.all("RUN")]
    build = next(n for n, run in enumerate(runs) if "ragdown index" in run)
    cleanup = next(n for n, run in enumerate(runs) if run.startswith("pip uninstall"))
    assert build < cleanup
    assert {"onnx", "setuptools", "wheel", "hf-xet"} <= set(runs[cleanup].split())
    assert "libarrow_flight.so" in runs[cleanup]
    # Test suites, headers and sources are never read at run time (bench/README.md, "Image").
    assert "-name tests" in runs[cleanup]
    assert "pyarrow/include" in runs[cleanup]
    assert runs[cleanup].rstrip().endswith("pip uninstall --yes pip")  # last: it removes pip itself
    # The runtime finds the baked models even where RAGDOWN_MODELS is a writable volume (the chart).
    assert FINAL.env()["RAGDOWN_MODELS_BUNDLED"] == MODELS_DIR
    assert "BAKE_EMBEDDERS" in runs[build]


def test_model_file_name_matches_the_embedders_cache_name() -> None:
    """The build step's check names the file the MiniLM embedder caches (else it never passes)."""
    from ragdown.indexing.embedders.minilm import MODEL_SHA256, QUANTIZED_STEM
    from ragdown.indexing.embedders.quantize import cached_model_path

    name = cached_model_path(Path(MODELS_DIR), QUANTIZED_STEM, MODEL_SHA256).name
    assert name.startswith("minilm-q8-")
    assert name.endswith(".onnx")


def test_no_remote_or_archive_adds() -> None:
    for stage in STAGES:
        for instruction in stage.all("ADD"):
            assert not re.search(r"(https?://|git@)", instruction.args), instruction.args


def test_healthcheck_probes_healthz_with_python() -> None:
    checks = FINAL.all("HEALTHCHECK")
    assert len(checks) == 1
    command = checks[0].args.partition("CMD")[2].strip()
    argv = Instruction("CMD", command).exec_form()
    assert argv is not None
    assert argv[:2] == ["python", "-c"]
    assert "/healthz" in argv[2]


@pytest.fixture
def healthz_server() -> Iterator[int]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/healthz" else 404)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_healthcheck_command_passes_on_healthz_and_fails_without_a_server(healthz_server: int) -> None:
    argv = Instruction("CMD", FINAL.all("HEALTHCHECK")[0].args.partition("CMD")[2]).exec_form()
    assert argv is not None
    command = [sys.executable, *argv[1:]]
    up = subprocess.run(command, env={**os.environ, "PORT": str(healthz_server)}, capture_output=True)
    assert up.returncode == 0, up.stderr.decode()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
    down = subprocess.run(command, env={**os.environ, "PORT": str(closed_port)}, capture_output=True)
    assert down.returncode != 0


# --- the build context ----------------------------------------------------------------------------


def test_dockerignore_matcher() -> None:
    assert excluded(".git/config")
    assert excluded("server/ragdown/__pycache__/cli.cpython-312.pyc")
    assert excluded("tests/conftest.py")
    assert excluded("charts/ragdown/values.yaml")
    assert excluded("onnxruntime_profile__2026-01-01.json")
    assert not excluded("server/ragdown/cli.py")
    assert not excluded("README.md")
    assert not excluded("examples/notes/ops/on-call.md")


def test_every_context_copy_exists_and_survives_dockerignore() -> None:
    copies = [copy for stage in STAGES for copy in context_copies(stage)]
    sources = [source for sources, _ in copies for source in sources]
    assert {"pyproject.toml", "README.md", "server/", "operator/", "examples/notes/"} <= set(sources)
    for source in sources:
        path = ROOT / source
        assert path.exists(), f"COPY {source}: not in the repository"
        relative = source.rstrip("/")
        assert not excluded(relative), f"COPY {source}: left out by .dockerignore"
        if path.is_dir():
            files = project_files(relative)
            assert files, f"COPY {source}: no files"
            dropped = [f for f in files if excluded(f)]
            assert dropped == [], f"COPY {source}: .dockerignore drops project files"


def test_dockerignore_keeps_the_context_small() -> None:
    for path in (".git", ".venv", "tests", "bench", "charts", "crds", ".ci", ".mypy_cache", "dist"):
        assert excluded(path), path


def builder_context(destination: Path) -> None:
    """The builder's context copies up to its `pip install`, after .dockerignore, into destination."""
    runs_before_install = []
    for instruction in BUILDER.instructions:
        if instruction.keyword == "RUN" and re.search(
            r"\bpip install .*'\.\[operator\]'(\s|$)", instruction.args
        ):
            break
        runs_before_install.append(instruction)
    for instruction in runs_before_install:
        if instruction.keyword != "COPY" or "from" in instruction.flags_and_paths()[0]:
            continue
        _, paths = instruction.flags_and_paths()
        for source in paths[:-1]:
            relative = source.rstrip("/")
            files = project_files(relative) if (ROOT / relative).is_dir() else [relative]
            for file in files:
                if not excluded(file):
                    target = destination / file
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(ROOT / file, target)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    # The SPDX `license = "Apache-2.0"` in pyproject.toml needs setuptools >= 77 (PEP 639).
    assert major >= 77, (
        f"setuptools {setuptools.__version__} cannot build this project: install setuptools>=77"
    )
    context = tmp_path_factory.mktemp("context")
    out = tmp_path_factory.mktemp("wheel")
    builder_context(context)
    # Offline: the build backend comes from this environment, nothing is downloaded.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            str(context),
            "-w",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("ragdown-*.whl")
    return zipfile.ZipFile(built)


def test_wheel_from_the_builder_context_carries_both_packages(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    assert "ragdown/__init__.py" in names
    assert "ragdown/cli.py" in names
    assert "ragdown_operator/__init__.py" in names
    assert not [n for n in names if n.startswith(("tests/", "server/", "operator/"))]
    # Every module and data file of the packages is installed (a sub-folder without __init__.py,
    # or templates that are not package data, would be missing in the image).
    for package_root, package in (("server", "ragdown"), ("operator", "ragdown_operator")):
        wanted = {
            Path(f).relative_to(package_root).as_posix()
            for f in project_files(f"{package_root}/{package}")
            if not excluded(f)
        }
        assert sorted(wanted - names) == []


def test_wheel_declares_both_console_scripts(wheel: zipfile.ZipFile) -> None:
    (entry_points_name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    parser = configparser.ConfigParser()
    parser.read_string(wheel.read(entry_points_name).decode())
    assert dict(parser["console_scripts"]) == {
        "ragdown": "ragdown.cli:main",
        "ragdown-operator": "ragdown_operator.main:main",
    }


# --- kind-config.yaml -----------------------------------------------------------------------------

CLUSTER_KEYS = {
    "kind",
    "apiVersion",
    "name",
    "nodes",
    "networking",
    "featureGates",
    "runtimeConfig",
    "kubeadmConfigPatches",
    "kubeadmConfigPatchesJSON6902",
    "containerdConfigPatches",
    "containerdConfigPatchesJSON6902",
}
NODE_KEYS = {
    "role",
    "image",
    "labels",
    "extraMounts",
    "extraPortMappings",
    "kubeadmConfigPatches",
    "kubeadmConfigPatchesJSON6902",
}
PORT_MAPPING_KEYS = {"containerPort", "hostPort", "listenAddress", "protocol"}


def test_kind_config_is_a_one_node_cluster_with_ingress_ports() -> None:
    config = yaml.safe_load(KIND_CONFIG.read_text(encoding="utf-8"))
    # kind reads its config strictly: a misspelt key is an error there, so it is one here.
    assert set(config) <= CLUSTER_KEYS
    assert (config["kind"], config["apiVersion"]) == ("Cluster", "kind.x-k8s.io/v1alpha4")
    (node,) = config["nodes"]
    assert set(node) <= NODE_KEYS
    assert node["role"] == "control-plane"
    mappings = node["extraPortMappings"]
    for mapping in mappings:
        assert set(mapping) <= PORT_MAPPING_KEYS
        assert mapping.get("protocol", "TCP") in {"TCP", "UDP", "SCTP"}
    assert {(m["containerPort"], m["hostPort"]) for m in mappings} == {(80, 80), (443, 443)}

    patches = [yaml.safe_load(patch) for patch in node["kubeadmConfigPatches"]]
    (init,) = [p for p in patches if p["kind"] == "InitConfiguration"]
    labels = init["nodeRegistration"]["kubeletExtraArgs"]["node-labels"].split(",")
    assert "ingress-ready=true" in labels
    assert "kind create cluster" in KIND_CONFIG.read_text(encoding="utf-8")
