"""Faults under the operator as a real process on a real API server (docs/cluster.md#the-cluster-tests):
the API server restarted while the operator runs, and the operator killed (SIGKILL) mid-reconcile."""

from __future__ import annotations

import pytest

from tests.cluster.operator_process import (
    Setup,
    kill,
    log_of,
    restart_apiserver,
    running,
    until,
)

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.anyio]
FOLDERS = [f"f{i}" for i in range(6)]


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
