"""deploy/dev-cluster.sh's refusals and pins, checked without a cluster
(docs/cluster.md#a-real-control-plane): one clear line when Go (or openssl) is missing, and the
versions it builds are the wrapper modules' own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cluster.conftest import REPO, SCRIPT

TOOLS = ["bash", "dirname", "awk", "head", "id", "cat", "mkdir", "rm", "seq", "sleep", "sed", "tail", "env"]


def tools_without(tmp_path: Path, *left_out: str) -> str:
    """A PATH holding only the shell tools the script uses, without Go and without `left_out`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in [*TOOLS, "openssl"]:
        found = shutil.which(tool)
        if tool not in left_out and found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def run(tmp_path: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": path,
        "HOME": str(tmp_path),
        "RAGDOWN_K8S_CACHE": str(tmp_path / "cache"),
        "RAGDOWN_K8S_STATE": str(tmp_path / "state"),
    }
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("verb", ["build", "up"])
def test_refuses_in_one_line_without_go(tmp_path: Path, verb: str) -> None:
    done = run(tmp_path, tools_without(tmp_path), verb)
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("dev-cluster: Go is missing: install the Go toolchain")
    assert not (tmp_path / "state").exists()


def test_refuses_in_one_line_without_openssl(tmp_path: Path) -> None:
    done = run(tmp_path, tools_without(tmp_path, "openssl"), "up")
    assert done.returncode != 0
    assert (
        done.stderr == "dev-cluster: openssl is missing: install openssl (apt-get install openssl): "
        "it makes the cluster's certificates\n"
    )


def test_reports_what_is_not_built(tmp_path: Path) -> None:
    done = run(tmp_path, tools_without(tmp_path), "built")
    assert done.returncode == 1
    assert done.stderr.startswith("dev-cluster: not built: run ")


def test_env_refuses_when_not_up(tmp_path: Path) -> None:
    done = run(tmp_path, tools_without(tmp_path), "env")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "not up" in done.stderr


def test_versions_are_the_wrapper_modules_pins(tmp_path: Path) -> None:
    versions = run(tmp_path, os.environ["PATH"], "versions").stdout.strip()
    mods = REPO / "deploy" / "dev-cluster"
    required = {
        "k8s": ("kubernetes", "k8s.io/kubernetes"),
        "etcd": ("etcd", "go.etcd.io/etcd/server/v3"),
        "kwok": ("kwok", "sigs.k8s.io/kwok"),
        "helm": ("helm", "helm.sh/helm/v3"),
    }
    pins = {
        name: re.search(
            rf"^require {re.escape(module)} (v\S+)$", (mods / folder / "go.mod").read_text(), re.M
        )
        for name, (folder, module) in required.items()
    }
    assert all(pins.values())
    assert versions == "-".join(f"{name}-{match.group(1)}" for name, match in pins.items() if match)
    # Each staging module is replaced by the release of the same minor as k8s.io/kubernetes.
    k8s = (mods / "kubernetes/go.mod").read_text()
    minor = re.search(r"^require k8s.io/kubernetes v1\.(\d+\.\d+)$", k8s, re.M)
    assert minor
    staging = re.findall(r"^\t(k8s.io/\S+) => (k8s.io/\S+) (v\S+)$", k8s, re.M)
    assert len(staging) > 25
    assert all(a == b and v == f"v0.{minor.group(1)}" for a, b, v in staging)
