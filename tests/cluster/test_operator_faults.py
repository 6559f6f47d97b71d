"""Faults under the operator as a real process on a real API server (docs/cluster.md#the-cluster-tests):
the API server restarted while the operator runs, and the operator killed (SIGKILL) mid-reconcile."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import Cluster
from tests.cluster.operator_process import Setup, crd, kill, log_of, rbac, role_of, running, token_kubeconfig
from tests.operator.harness import Indexer, eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.anyio]
STATE = Path(os.environ.get("RAGDOWN_K8S_STATE") or f"/tmp/ragdown-k8s-{os.getuid()}")
FOLDERS = [f"f{i}" for i in range(6)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def setup(cluster: Cluster, namespace: str, tmp_path: Path) -> AsyncIterator[Setup]:
    crd(cluster)
    objects = rbac(cluster, namespace)
    for body in objects:
        cluster.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(body))
    (tmp_path / "docs").mkdir()
    indexer = Indexer(tmp_path / "docs", tmp_path / "data")
    indexer.start()
    try:
        await indexer.ready()
        kubeconfig = token_kubeconfig(cluster, namespace, tmp_path / "kubeconfig")
        yield Setup(cluster, namespace, kubeconfig, indexer, tmp_path, role_of(objects))
    finally:
        indexer.stop()


async def until(check: Callable[[], Any], what: str, timeout: float = 90) -> Any:
    async def once() -> Any:
        return check()

    return await eventually(once, what, timeout)


def alive(pid: int) -> bool:
    """Running (not a zombie waiting for a parent that is not this test)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def restart_apiserver(cluster: Cluster, down_for: float) -> None:
    """Stop kube-apiserver (SIGTERM, as a node reboot or an upgrade does) and start it again with the
    same command line, in its own session, logging where deploy/dev-cluster.sh logs it; its pid file
    then names the new process, so `down` still stops it."""
    pid_file = STATE / "kube-apiserver.pid"
    if not pid_file.exists():
        pytest.skip(f"no {pid_file}: the cluster was not started by deploy/dev-cluster.sh with this state")
    pid = int(pid_file.read_text())
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    # SIGTERM, and SIGKILL if the graceful shutdown (which waits out open watches) takes long.
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
        while alive(pid):
            time.sleep(0.2)
    assert cluster.kubectl("get", "--raw", "/readyz", check=False, timeout=10).returncode != 0
    time.sleep(down_for)
    with (STATE / "kube-apiserver.log").open("ab") as log:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    pid_file.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + 120
    while cluster.kubectl("get", "--raw", "/readyz", check=False, timeout=10).returncode != 0:
        assert process.poll() is None, "kube-apiserver exited after its restart"
        assert time.monotonic() < deadline, "kube-apiserver did not answer /readyz after its restart"
        time.sleep(0.5)


def routes(setup: Setup) -> dict[str, list[str]]:
    """Each Ingress of the namespace: the uids of its owners."""
    return {
        i["metadata"]["name"]: [ref["uid"] for ref in i["metadata"].get("ownerReferences") or []]
        for i in setup.ingresses()
    }


def uids(setup: Setup) -> dict[str, str]:
    items = setup.cluster.get("ragdownfolders", "-n", setup.namespace)["items"]
    return {f["metadata"]["name"]: f["metadata"]["uid"] for f in items}


async def test_the_operator_reconnects_after_the_api_server_restarts(setup: Setup) -> None:
    with running(setup.operator()) as operator:
        setup.apply("work", {"mcp": True})
        await until(lambda: setup.ready("work"), "work to be Ready")
        assert setup.get("ingress", "work-mcp") is not None
        restart_apiserver(setup.cluster, down_for=3)
        # The same token still holds (the same signing key), and the operator's watch is back: a change
        # made after the restart is applied, and a new resource reconciled.
        setup.apply("work", {"mcp": False})
        setup.apply("more", {"mcp": True})
        try:
            await until(lambda: setup.get("ingress", "work-mcp") is None, "mcp: false after the restart")
            await until(lambda: setup.ready("more") and setup.ready("work"), "both Ready after the restart")
        finally:
            print(log_of(operator)[-4000:])
        assert list(routes(setup)) == ["more-mcp"]
        assert operator.process is not None
        assert operator.process.poll() is None  # reconnected, not restarted


async def test_an_operator_killed_mid_reconcile_leaves_no_duplicate_or_orphan(setup: Setup) -> None:
    operator = setup.operator()
    operator.start()
    try:
        for name in FOLDERS:
            setup.apply(name, {"mcp": True})
        await until(lambda: len(setup.ingresses()) >= 1, "the first Ingress")
        kill(operator.process)  # SIGKILL: no cleanup, reconciles half done
    finally:
        operator.stop()
    made = len(setup.ingresses())
    print(f"Ingresses when killed: {made} of {len(FOLDERS)}")
    # While it is down: one folder deleted (its finalizer holds it), one turned off.
    setup.cluster.kubectl("delete", "ragdownfolder", FOLDERS[0], "-n", setup.namespace, "--wait=false")
    setup.apply(FOLDERS[1], {"mcp": False})
    with running(setup.operator("operator-again.log")) as again:
        try:
            await until(lambda: setup.get("ragdownfolder", FOLDERS[0]) is None, "the deleted folder to go")
            await until(lambda: all(setup.ready(name) for name in FOLDERS[1:]), "every folder Ready")
            await until(lambda: len(setup.ingresses()) == len(FOLDERS) - 2, "the routes to settle")
        finally:
            print(log_of(again)[-4000:])
    owners = uids(setup)
    assert routes(setup) == {f"{name}-mcp": [owners[name]] for name in FOLDERS[2:]}
