"""The operator's periodic resync on a real API server (docs/cluster.md#resync-at-scale): once every
folder is reconciled, resyncs send the API server nothing (the Ingresses come from the operator's
watch, status patches only on change), and drift made behind its back is still repaired from what the
watch shows. The API server's own request counters (`apiserver_request_total`) are the witness."""

from __future__ import annotations

import re
from functools import partial

import pytest

from tests.cluster.operator_process import Setup, api_requests, log_of, running, until
from tests.operator.harness import Operator, resync_runs

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.anyio]
RESYNC_S = 2
ROUTED = ["a", "b", "c", "d"]
UNROUTED = ["e", "f"]
# What a resync could send and nothing else in the cluster does: reads and applies of Ingresses, patches
# of RagdownFolders' status. (Deletes are left out: the garbage collector deletes the Ingresses of other
# tests' namespaces as they are torn down. The emulated API's test shows no write and no event at all.)
SENT = re.compile(r"^(GET|PATCH|APPLY|PUT) (ingresses|ragdownfolders/status)$")


async def resynced(operator: Operator, setup: Setup, times: int) -> None:
    """Each folder's timer has run `times` more times from now."""

    def runs(name: str) -> int:
        return resync_runs(log_of(operator), setup.namespace, name, "succeeded")

    start = {name: runs(name) for name in ROUTED + UNROUTED}
    await until(
        lambda: all(runs(n) >= start[n] + times for n in start),
        f"{times} more resyncs of every folder",
        60,
    )


async def test_quiet_resyncs_send_the_api_server_nothing_and_drift_is_still_repaired(setup: Setup) -> None:
    with running(setup.operator(RAGDOWN_OPERATOR_RESYNC_S=str(RESYNC_S))) as operator:
        for name in ROUTED:
            setup.apply(name, {"mcp": True})
        for name in UNROUTED:
            setup.apply(name, {"mcp": False})
        for name in ROUTED + UNROUTED:
            await until(partial(setup.ready, name), f"{name} to be Ready")
        await resynced(operator, setup, 2)  # kopf's own bookkeeping after the changes is behind us

        before = api_requests(setup.cluster)
        await resynced(operator, setup, 3)
        after = api_requests(setup.cluster)
        sent = {k: after[k] - before[k] for k in after if SENT.match(k) and after[k] != before[k]}
        assert sent == {}, f"quiet resyncs sent {sent}"

        # A person's edit of a label the operator owns, and a deleted route: both come back from a
        # resync, which learns of them through its watch.
        setup.cluster.kubectl(
            "label",
            "ingress",
            "a-mcp",
            "-n",
            setup.namespace,
            "app.kubernetes.io/managed-by=someone",
            "--overwrite",
        )
        setup.cluster.kubectl("delete", "ingress", "b-mcp", "-n", setup.namespace)

        def repaired() -> bool:
            a, b = setup.get("ingress", "a-mcp"), setup.get("ingress", "b-mcp")
            return bool(
                a and b and a["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "ragdown-operator"
            )

        await until(repaired, "the label and the route back", 60)
