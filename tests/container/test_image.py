"""The image, built from the Dockerfile and run by a real container engine (docs/cluster.md#the-image-in-ci):
read-only and non-root with only the chart's writable mounts, an indexer and two readers sharing
one volume (the readers' mount read-only), the operator's entrypoint answering its liveness probe
and reconciling, and SIGTERM ending each cleanly.

The base is a stand-in for python:3.12-slim built from Debian packages (tests/container/build_images.sh),
because no image registry is reachable here. Skipped where no container engine runs, unless
RAGDOWN_REQUIRE_CONTAINERS is set (CI sets it: there they must run).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.operator.cluster import emulated_cluster
from tests.operator.harness import TESTS_AGENT, Indexer, Operator, World, eventually
from tests.serving.conftest import call_tool, mcp_session

REPO = Path(__file__).resolve().parents[2]
TOKEN = "container-token"
INTERNAL = "container-internal-token"
UID = 10001
pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.container]


def docker(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=check, timeout=timeout)


def engine_runs() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return docker("info", check=False, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="module")
def image() -> str:
    if not engine_runs():
        if os.environ.get("RAGDOWN_REQUIRE_CONTAINERS"):
            pytest.fail("no container engine answers `docker info`; CI must run the container tests")
        pytest.skip("no container engine here")
    built = subprocess.run(
        [str(REPO / "tests/container/build_images.sh")], capture_output=True, text=True, timeout=1800
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return os.environ.get("RAGDOWN_CI_IMAGE", "ragdown:ci")


@pytest.fixture
def network() -> Iterator[str]:
    name = f"ragdown-test-{uuid.uuid4().hex[:8]}"
    docker("network", "create", name)
    yield name
    docker("network", "rm", name, check=False)


@pytest.fixture
def volume(tmp_path: Path) -> Path:
    """A host directory standing in for the chart's claim: docs/ (the examples) and index/, owned by
    the image's user as the chart's fsGroup makes them."""
    data = tmp_path / "data"
    shutil.copytree(REPO / "examples", data / "docs")
    (data / "index").mkdir()
    for path in [data, *data.rglob("*")]:
        os.chown(path, UID, UID)
    return data


class Container:
    def __init__(self, name: str) -> None:
        self.name = name
        port = docker("port", name, "3000/tcp").stdout.strip().splitlines()[0]
        self.url = f"http://127.0.0.1:{port.rsplit(':', 1)[1]}"

    def wait_ready(self, timeout: float = 180) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                answer = httpx.get(f"{self.url}/readyz", timeout=3)
                if answer.status_code == 200:
                    return dict(answer.json())
            except httpx.HTTPError:
                pass
            running = docker("inspect", "-f", "{{.State.Running}}", self.name).stdout.strip()
            assert running == "true", docker("logs", self.name, check=False).stderr[-3000:]
            assert time.monotonic() < deadline, docker("logs", self.name, check=False).stderr[-3000:]
            time.sleep(0.5)

    async def call(self, tool: str, arguments: dict[str, Any], path: str = "/mcp/notes") -> str:
        return await call_tool(f"{self.url}{path}", TOKEN, tool, arguments)

    async def tool_names(self) -> list[str]:
        async with mcp_session(f"{self.url}/mcp/notes", TOKEN) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    def stop(self, grace_s: int = 30) -> int:
        """`docker stop` (SIGTERM, then SIGKILL after the grace period); the exit code."""
        docker("stop", "-t", str(grace_s), self.name, timeout=grace_s + 60)
        return int(docker("inspect", "-f", "{{.State.ExitCode}}", self.name).stdout.strip())


@pytest.fixture
def run(image: str, network: str) -> Iterator[Callable[..., Container]]:
    started: list[str] = []

    def start(name: str, volume: Path, *, read_only_data: bool = False, **env: str) -> Container:
        full = f"{network}-{name}"
        environment = {
            "RAGDOWN_TOKEN": TOKEN,
            "RAGDOWN_INTERNAL_TOKEN": INTERNAL,
            "RAGDOWN_EMBEDDER": "hash",
            "RAGDOWN_METRICS_PORT": "0",
            **env,
        }
        command = [
            "run", "-d", "--name", full, "--network", network, "--network-alias", name,
            # The chart's shape: read-only root, non-root, no capabilities, only /tmp and /data writable.
            "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "-v", f"{volume}:/data{':ro' if read_only_data else ''}",
            "-p", "127.0.0.1::3000",
        ]  # fmt: skip
        for key, value in environment.items():
            command += ["-e", f"{key}={value}"]
        docker(*command, image)
        started.append(full)
        return Container(full)

    yield start
    for name in started:
        docker("rm", "-f", name, check=False)


async def test_the_image_serves_read_only_as_non_root_and_stops_on_sigterm(
    run: Callable[..., Container], volume: Path
) -> None:
    server = run("indexer", volume, RAGDOWN_ROLE="primary", RAGDOWN_INTERNAL_PORT="3001")
    assert server.wait_ready() == {"ready": True, "role": "primary"}
    assert docker("exec", server.name, "id", "-u").stdout.strip() == str(UID)
    # The root filesystem is read-only: nothing outside /tmp and /data can be written.
    refused = docker("exec", server.name, "sh", "-c", "touch /opt/venv/x", check=False)
    assert refused.returncode != 0
    names = await server.tool_names()
    assert {"ragdown_recall", "ragdown_write", "ragdown_read_doc"} <= set(names)
    assert len(names) >= 12
    arguments = {"path": "from-container.md", "text": "# Boxed\n\nWritten in."}
    assert "from-container.md" in await server.call("ragdown_write", arguments)
    assert (volume / "docs/notes/from-container.md").read_text(encoding="utf-8").endswith("Written in.")
    # A folder the image's user may not write (a host folder mounted as is): the refusal says who to let in.
    locked = volume / "docs/notes/locked"
    locked.mkdir()
    os.chown(locked, 0, 0)
    denied = await server.call("ragdown_write", {"path": "locked/x.md", "text": "# X"})
    assert "(Permission denied); it runs as user id 10001: give that user access" in denied
    assert not (locked / "x.md").exists()
    assert server.stop() == 0  # SIGTERM handled: a clean exit, not the grace period's SIGKILL (137)


async def test_an_indexer_and_two_readers_share_one_volume(
    run: Callable[..., Container], volume: Path
) -> None:
    indexer = run("indexer", volume, RAGDOWN_ROLE="primary", RAGDOWN_INTERNAL_PORT="3001")
    indexer.wait_ready()
    readers = [
        run(
            f"reader-{n}",
            volume,
            read_only_data=True,
            RAGDOWN_ROLE="reader",
            RAGDOWN_PRIMARY_URL="http://indexer:3001",
        )
        for n in (1, 2)
    ]
    for reader in readers:
        ready = reader.wait_ready()
        assert ready["role"] == "reader"
        assert ready["primary_reachable"] is True
    written = await readers[0].call(
        "ragdown_write", {"path": "shared.md", "text": "# Shared\n\nQuasar calibration checklist."}
    )
    assert "shared.md" in written
    assert (volume / "docs/notes/shared.md").exists()  # the indexer wrote it; the readers cannot
    deadline = time.monotonic() + 60
    found = ""
    while time.monotonic() < deadline:
        found = await readers[1].call("ragdown_recall", {"query": "quasar calibration checklist", "top_k": 1})
        if found.startswith("[1] shared.md:"):
            break
        time.sleep(0.5)
    assert found.startswith("[1] shared.md:")
    refused = docker("exec", readers[1].name, "sh", "-c", "touch /data/docs/x", check=False)
    assert refused.returncode != 0  # the readers' mount is read-only
    for container in (*readers, indexer):
        assert container.stop() == 0


async def adocker(*args: str, timeout: float = 120) -> tuple[int, str]:
    """`docker` without blocking the event loop, which serves the emulated Kubernetes API."""
    process = await asyncio.create_subprocess_exec(
        "docker", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout)
    return int(process.returncode or 0), out.decode(errors="replace")


async def test_the_operator_entrypoint_answers_its_liveness_probe_and_reconciles(
    image: str, tmp_path: Path
) -> None:
    """The chart's operator container: `ragdown-operator` from the image, read-only and non-root,
    against the emulated API and an indexer (both on the host's loopback: host network)."""
    indexer = Indexer(tmp_path / "docs", tmp_path / "data")
    indexer.docs.mkdir()
    indexer.start()
    name = f"ragdown-test-operator-{uuid.uuid4().hex[:8]}"
    try:
        await indexer.ready()
        async with emulated_cluster() as cluster:
            kube_url = str(cluster.url).rstrip("/")
            operator = Operator(kube_url, indexer.url, tmp_path / "operator.log")
            environment = {
                k: v for k, v in operator.env().items() if k not in os.environ or k.startswith("RAGDOWN_")
            }
            command = [
                "run", "-d", "--name", name, "--network", "host", "--entrypoint", "ragdown-operator",
                "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            ]  # fmt: skip
            for key, value in environment.items():
                command += ["-e", f"{key}={value}"]
            started, out = await adocker(*command, image)
            assert started == 0, out

            async def live() -> bool:
                running = (await adocker("inspect", "-f", "{{.State.Running}}", name))[1].strip()
                assert running == "true", (await adocker("logs", name))[1][-3000:]
                async with httpx.AsyncClient(timeout=3) as http:
                    probe = await http.get(f"http://127.0.0.1:{operator.liveness_port}/healthz")
                return probe.status_code == 200

            await eventually(live, "the operator's /healthz (the chart's liveness probe)", timeout=120)
            headers = {"User-Agent": TESTS_AGENT}
            async with httpx.AsyncClient(base_url=kube_url, timeout=10, headers=headers) as kube:
                w = World(cluster, kube, indexer, operator)
                await w.apply("work", {"title": "Work notes", "mcp": True})
                await w.settled("work", timeout=120)
                route = await w.ingress("work-mcp")
                assert route is not None
                assert route["spec"]["rules"][0]["http"]["paths"][0]["path"] == "/mcp/work"
            assert (indexer.docs / "work").is_dir()  # made through the indexer's API, by the container
            uid = (await adocker("exec", name, "id", "-u"))[1].strip()
            assert uid == str(UID)
            stopped, out = await adocker("stop", "-t", "30", name, timeout=90)
            assert stopped == 0, out
            code = (await adocker("inspect", "-f", "{{.State.ExitCode}}", name))[1].strip()
            assert code == "0", (await adocker("logs", name))[1][-3000:]  # SIGTERM: kopf stops cleanly
    finally:
        await adocker("rm", "-f", name)
        indexer.stop()
