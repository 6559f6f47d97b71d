"""The operator as a real process on a real API server, as the chart's operator ServiceAccount
(docs/cluster.md#a-real-control-plane): it reconciles RagdownFolders into Ingresses and status with
only the chart's Role, and each verb of that Role is needed by something it does."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest

from tests.cluster.operator_process import (
    ACCOUNT,
    Setup,
    api_requests,
    log_of,
    restart_apiserver,
    running,
    until,
    without,
)

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.anyio]
TOKENS = [{"name": "a", "secretKeyRef": {"name": "agents", "key": "token"}}]


async def test_the_operator_reconciles_with_only_the_charts_role(setup: Setup) -> None:
    setup.secret("agents", {"token": "a-folder-token-of-enough-length"})
    with running(setup.operator()) as operator:
        setup.apply("work", {"mcp": True, "tokens": TOKENS})
        await until(lambda: setup.ready("work"), "work to be Ready")
        folder = setup.get("ragdownfolder", "work")
        assert folder is not None
        ingress = setup.get("ingress", "work-mcp")
        assert ingress is not None
        assert [ref["uid"] for ref in ingress["metadata"]["ownerReferences"]] == [folder["metadata"]["uid"]]
        assert folder["status"]["endpoint"]
        assert any(f.startswith("ragdown.dev/") for f in folder["metadata"]["finalizers"])
        reasons = {e["reason"] for e in setup.cluster.get("events", "-n", setup.namespace)["items"]}
        assert "RouteCreated" in reasons, reasons
        setup.apply("work", {"mcp": False})
        await until(lambda: setup.get("ingress", "work-mcp") is None, "mcp: false to remove the route")
        setup.cluster.kubectl("delete", "ragdownfolder", "work", "-n", setup.namespace, "--wait=false")
        await until(lambda: setup.get("ragdownfolder", "work") is None, "the finalizer to let work go")
        assert "forbidden" not in log_of(operator).lower()
    whoami = setup.cluster.kubectl("auth", "whoami", "--kubeconfig", str(setup.kubeconfig)).stdout
    assert f"system:serviceaccount:{setup.namespace}:{ACCOUNT}" in whoami


def forbidden(text: str, verb: str, resource: str) -> bool:
    """The API server's own refusal, as kopf logs it."""
    return f'cannot {verb} resource "{resource}"' in text.replace('\\"', '"')


def refused(text: str, path: str) -> bool:
    """A 403 for `path`, as the operator's own calls report it (logs and the folder's conditions)."""
    return any("403 Forbidden" in line and path in line for line in text.splitlines())


# Each verb the chart's Role grants, how the API server's refusal shows, and what is then not done.
VERBS: list[tuple[str, str, str, str]] = [
    ("ragdown.dev", "ragdownfolders", "list", "nothing reconciled"),
    ("ragdown.dev", "ragdownfolders", "watch", "changes unseen"),
    ("ragdown.dev", "ragdownfolders", "patch", "no finalizer"),
    ("ragdown.dev", "ragdownfolders", "get", "release-all fails"),
    ("ragdown.dev", "ragdownfolders/status", "patch", "no status"),
    ("networking.k8s.io", "ingresses", "list", "nothing reconciled"),
    ("networking.k8s.io", "ingresses", "watch", "resyncs read"),
    ("networking.k8s.io", "ingresses", "get", "no route"),
    ("networking.k8s.io", "ingresses", "create", "no route"),
    ("networking.k8s.io", "ingresses", "patch", "no route"),
    ("networking.k8s.io", "ingresses", "delete", "route kept"),
    ("", "secrets", "get", "tokens unread"),
    ("", "events", "create", "no events"),
]


@pytest.mark.parametrize(
    ("group", "resource", "verb", "effect"), VERBS, ids=[f"{r}-{v}" for _, r, v, _ in VERBS]
)
async def test_each_verb_of_the_role_is_needed(
    setup: Setup, group: str, resource: str, verb: str, effect: str
) -> None:
    setup.role(without(setup.chart_role, group, resource, verb))
    setup.secret("agents", {"token": "a-folder-token-of-enough-length"})
    folders = f"/apis/ragdown.dev/v1alpha1/namespaces/{setup.namespace}/ragdownfolders"
    # Resyncs every 2 s where what is lost shows only in what a resync does.
    operator = setup.operator(**({"RAGDOWN_OPERATOR_RESYNC_S": "2"} if effect == "resyncs read" else {}))
    if effect == "release-all fails":  # only the chart's pre-delete hook reads one resource to edit it
        setup.apply("work", {"mcp": True})
        done = subprocess.run(
            [sys.executable, "-m", "ragdown_operator.main", "release-all"],
            env=operator.env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert refused(done.stderr, f"{folders}/work"), done.stderr
        return

    def seen() -> str:
        return log_of(operator) + json.dumps(setup.get("ragdownfolder", "work"))

    ingress = f"/apis/networking.k8s.io/v1/namespaces/{setup.namespace}/ingresses/work-mcp"
    shows = {
        "nothing reconciled": lambda: refused(seen(), folders) or forbidden(seen(), verb, resource),
        "resyncs read": lambda: forbidden(seen(), verb, resource),
        "changes unseen": lambda: forbidden(seen(), verb, resource),
        "no finalizer": lambda: forbidden(seen(), verb, resource),
        "no status": lambda: forbidden(seen(), verb, resource),
        "no route": lambda: refused(seen(), ingress),
        "route kept": lambda: refused(seen(), ingress),
        "tokens unread": lambda: "TokenSecretForbidden" in seen(),
        "no events": lambda: forbidden(seen(), verb, resource),
    }[effect]
    with running(operator):
        spec: dict[str, Any] = {"mcp": True, "tokens": TOKENS} if effect == "tokens unread" else {"mcp": True}
        setup.apply("work", spec)
        if effect in ("route kept", "changes unseen"):
            await until(lambda: setup.get("ingress", "work-mcp"), "the Ingress")
            setup.apply("work", {"mcp": False})
        try:
            await until(shows, f"the API server to refuse {verb} {resource}", 30)
            time.sleep(2)  # a retry or a resync more
            folder = setup.get("ragdownfolder", "work") or {}
            routed = setup.get("ingress", "work-mcp") is not None
            events = setup.cluster.get("events", "-n", setup.namespace)["items"]
            if effect == "nothing reconciled":
                assert not folder["metadata"].get("finalizers")
                assert "status" not in folder
                assert not routed
            elif effect == "changes unseen":
                assert routed  # mcp: false never reached the operator
            elif effect == "no finalizer":
                assert not folder["metadata"].get("finalizers")  # deletion would not wait for the cleanup
            elif effect == "no status":
                assert "status" not in folder
            elif effect == "no route":
                assert not routed
                assert not setup.ready("work")
            elif effect == "route kept":
                assert routed
            elif effect == "tokens unread":
                assert not setup.ready("work")
            elif effect == "resyncs read":  # no watch: each resync reads its Ingress instead
                assert routed
                reads = api_requests(setup.cluster)["GET ingresses"]
                await until(
                    lambda: api_requests(setup.cluster)["GET ingresses"] >= reads + 3, "resyncs to read"
                )
            elif effect == "no events":
                assert events == []
        finally:
            print(log_of(operator)[-3000:])


async def test_finalizers_update_is_needed_where_owner_references_are_enforced(setup: Setup) -> None:
    """OwnerReferencesPermissionEnforcement (on in OpenShift, for one; off in the dev cluster by
    default): an owner reference with blockOwnerDeletion needs `update` on the owner's finalizers."""
    setup.role(without(setup.chart_role, "ragdown.dev", "ragdownfolders/finalizers", "update"))
    had = restart_apiserver(setup.cluster, admission="NodeRestriction,OwnerReferencesPermissionEnforcement")
    try:
        with running(setup.operator()) as operator:
            setup.apply("work", {"mcp": True})
            ingress = f"/apis/networking.k8s.io/v1/namespaces/{setup.namespace}/ingresses/work-mcp"
            await until(lambda: refused(log_of(operator), ingress), "the apply to be refused", 60)
            await until(
                lambda: refused(json.dumps(setup.get("ragdownfolder", "work")), ingress), "its Routed"
            )
            assert setup.get("ingress", "work-mcp") is None
            setup.role(setup.chart_role)  # the chart's Role: the next retry routes it
            await until(lambda: setup.ready("work"), "work Ready with the chart's Role")
    finally:
        restart_apiserver(setup.cluster, admission=had)
