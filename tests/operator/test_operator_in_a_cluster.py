"""The operator beside everything else in a real cluster, as a process against the emulated API: other
controllers' keys on its Ingresses, resyncs that change nothing and so write nothing, watches that a
load balancer silences, another release in the same namespace, and being uninstalled."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.operator.harness import FOLDERS, INGRESSES, World, another_release, eventually, world

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

WORK = {"title": "Work notes", "mcp": True}
INSTANCE = "ragdown.dev/instance"
OURS = {"traefik.ingress.kubernetes.io/router.entrypoints": "websecure"}
# What a cloud load-balancer controller and a policy engine add to any Ingress.
THEIR_LABELS = {"policy.example/team": "docs"}
THEIR_ANNOTATIONS = {"alb.ingress.kubernetes.io/scheme": "internal"}
CERT_MANAGER = {
    "cert-manager.io/cluster-issuer": "letsencrypt",
    "acme.cert-manager.io/http01-edit-in-place": "true",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def quiet(w: World, name: str, *events: str) -> int:
    """A mark in the request log once `name` is reconciled, its events are posted and one more resync
    has run (kopf's own bookkeeping patches after a change are behind it)."""
    await w.settled(name)
    await w.event_reasons(name, *events)
    await w.resynced(name, times=1)
    return w.mark()


async def test_other_controllers_keys_stay_and_a_quiet_resync_writes_nothing(tmp_path: Path) -> None:
    env = {"RAGDOWN_OPERATOR_INGRESS_ANNOTATIONS": json.dumps(OURS)}
    async with world(tmp_path, operator_env=env) as w:
        await w.apply("work", WORK)
        await quiet(w, "work", "FolderCreated", "RouteCreated")
        theirs = {"metadata": {"labels": THEIR_LABELS, "annotations": THEIR_ANNOTATIONS}}
        edited = await w.kube.patch(
            f"{INGRESSES}/work-mcp",
            content=json.dumps(theirs),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        edited.raise_for_status()
        mark = w.mark()
        await w.resynced("work")
        assert w.writes(mark) == []  # no patch of the Ingress, no status patch, no event
        # Nor a read: the Ingress comes from the operator's watch (docs/cluster.md#resync-at-scale).
        assert ("GET", f"{INGRESSES}/work-mcp") not in w.operator_calls(mark)
        ingress = await w.ingress("work-mcp")
        assert ingress is not None
        meta = ingress["metadata"]
        assert THEIR_LABELS.items() <= meta["labels"].items()
        assert (THEIR_ANNOTATIONS | OURS).items() <= meta["annotations"].items()

        # The chart drops its annotation: the operator removes what it had set, and only that.
        w.operator.stop()
        w.operator.extra_env["RAGDOWN_OPERATOR_INGRESS_ANNOTATIONS"] = "{}"
        w.operator.start()

        async def dropped() -> dict[str, Any] | None:
            found = await w.ingress("work-mcp")
            annotations = (found or {}).get("metadata", {}).get("annotations") or {}
            return found if found and not OURS.keys() & annotations.keys() else None

        meta = (await eventually(dropped, "the operator's annotation to be removed"))["metadata"]
        assert THEIR_LABELS.items() <= meta["labels"].items()
        assert THEIR_ANNOTATIONS.items() <= meta["annotations"].items()
        assert meta["labels"]["app.kubernetes.io/managed-by"] == "ragdown-operator"
        assert meta["annotations"]["ragdown.dev/folder"] == "work"


async def test_the_class_the_cluster_assigned_and_a_certificate_controllers_annotation_stay(
    tmp_path: Path,
) -> None:
    """With no class in the settings the operator applies no ingressClassName: the one the default
    IngressClass gave (admission, nobody's field) stays, as does what cert-manager adds, through quiet
    resyncs and through an apply that changes the operator's own fields. tests/cluster/test_ingress_ssa.py
    shows the same on a real API server."""
    env = {"RAGDOWN_OPERATOR_INGRESS_CLASS": ""}
    async with world(tmp_path, operator_env=env) as w:
        w.cluster.default_ingress_class = "nginx"
        await w.apply("work", WORK)
        await quiet(w, "work", "FolderCreated", "RouteCreated")
        assert ((await w.ingress("work-mcp")) or {})["spec"]["ingressClassName"] == "nginx"
        annotated = await w.kube.patch(
            f"{INGRESSES}/work-mcp",
            params={"fieldManager": "cert-manager"},
            content=json.dumps({"metadata": {"annotations": CERT_MANAGER}}),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        annotated.raise_for_status()
        mark = w.mark()
        await w.resynced("work")
        assert w.writes(mark) == []

        # The chart adds an annotation of its own: applied, and nothing of anyone else's is removed.
        w.operator.stop()
        w.operator.extra_env["RAGDOWN_OPERATOR_INGRESS_ANNOTATIONS"] = json.dumps(OURS)
        w.operator.start()

        async def applied() -> dict[str, Any] | None:
            found = await w.ingress("work-mcp")
            annotations = (found or {}).get("metadata", {}).get("annotations") or {}
            return found if found and OURS.items() <= annotations.items() else None

        ingress = await eventually(applied, "the operator's annotation to be applied")
        assert ingress["spec"]["ingressClassName"] == "nginx"
        assert CERT_MANAGER.items() <= ingress["metadata"]["annotations"].items()
        mark = w.mark()
        await w.resynced("work")
        assert w.writes(mark) == []


async def test_status_is_patched_only_when_it_changes(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.apply("work", {"mcp": False})
        mark = await quiet(w, "work", "FolderCreated")
        before = (await w.get("work") or {})["status"]
        await w.resynced("work")
        assert w.writes(mark) == []
        assert (await w.get("work") or {})["status"] == before

        # A new document changes the counts and the Synced message, not a condition's status: the
        # counts are patched, and no lastTransitionTime moves.
        (w.indexer.docs / "work" / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")

        async def counted() -> dict[str, Any] | None:
            status = (await w.get("work") or {})["status"]
            return status if status.get("files") == 1 else None

        after = await eventually(counted, "the new document to be counted")
        times = {c["type"]: c["lastTransitionTime"] for c in before["conditions"]}
        assert {c["type"]: c["lastTransitionTime"] for c in after["conditions"]} == times


async def test_a_watch_gone_silent_is_reopened(tmp_path: Path) -> None:
    env = {"RAGDOWN_OPERATOR_WATCH_SERVER_TIMEOUT_S": "1", "RAGDOWN_OPERATOR_WATCH_CLIENT_TIMEOUT_S": "2"}
    async with world(tmp_path, operator_env=env) as w:

        def watches() -> list[Mapping[str, str]]:
            return [r.params for r in w.cluster if r.url.path == FOLDERS and r.params.get("watch") == "true"]

        async def watching() -> bool:
            return bool(watches())

        await eventually(watching, "the operator to watch RagdownFolders")
        w.cluster.silence_watches()
        await w.apply("work", WORK)
        # Far sooner than kopf's own 70 s without events (a real API server sends bookmarks; no
        # proxy-dropped stream does): the client timeout cut the silent watch and a new one saw it.
        await w.settled("work", timeout=30)
        assert len(watches()) >= 2
        assert {params.get("timeoutSeconds") for params in watches()} == {"1"}  # whole seconds


async def test_two_releases_in_one_namespace_each_reconcile_their_own(tmp_path: Path) -> None:
    """rd (the harness's operator) claims unlabelled resources, as by default; rd2 is told not to."""
    unclaimed = {"RAGDOWN_OPERATOR_CLAIM_UNLABELLED": "false"}
    async with world(tmp_path) as w, another_release(w, tmp_path, "rd2", unclaimed) as rd2:
        await w.apply("work", WORK, labels={INSTANCE: "rd"})
        await w.apply("team", WORK, labels={INSTANCE: "rd2"})
        await w.apply("plain", {"mcp": False})
        for name in ("work", "team", "plain"):
            await w.settled(name)
        for name in ("work", "plain"):
            await w.resynced(name)  # each operator goes through its resources twice from here
        await w.resynced("team", log=tmp_path / "rd2" / "operator.log")
        assert sorted(p.name for p in w.indexer.docs.iterdir()) == ["plain", "work"]
        assert sorted(p.name for p in rd2.docs.iterdir()) == ["team"]
        assert await w.finalizers("work") == await w.finalizers("plain") == ["ragdown.dev/finalizer-rd"]
        assert await w.finalizers("team") == ["ragdown.dev/finalizer-rd2"]
        route = await w.ingress("team-mcp")
        assert route is not None
        assert route["metadata"]["labels"]["app.kubernetes.io/instance"] == "rd2"
        backend = route["spec"]["rules"][0]["http"]["paths"][0]["backend"]
        assert backend["service"]["name"] == "rd2-ragdown-reader"

        await w.delete("team")  # rd2's operator applies the deletion policy on rd2's indexer
        await eventually(lambda: w.gone("team"), "team to be released")
        assert json.loads((rd2.docs / "team" / ".ragdown.json").read_text(encoding="utf-8"))["mcp"] is False
        assert await w.finalizers("work") == ["ragdown.dev/finalizer-rd"]


async def test_deletion_gives_up_on_an_unreachable_indexer_and_says_so(tmp_path: Path) -> None:
    async with world(tmp_path, operator_env={"RAGDOWN_OPERATOR_DELETION_TIMEOUT_S": "2"}) as w:
        # Made when one finalizer served every release: it must not keep the resource forever.
        await w.apply("old", {"mcp": True}, finalizers=["ragdown.dev/finalizer"])
        await w.apply("work", WORK)
        await w.settled("old")
        await w.settled("work")
        await w.delete("old")
        await eventually(lambda: w.gone("old"), "old, with the legacy finalizer, to go")
        assert w.folder_config("old")["mcp"] is False  # its deletion policy was applied first

        w.indexer.stop()
        await w.delete("work")
        await eventually(lambda: w.gone("work"), "work to go although the indexer does not answer")
        (event,) = [e for e in w.events("work") if e.get("reason") == "DeletionAbandoned"]
        assert (
            "folder work keeps its settings and stays managed by RagdownFolder team/work" in event["message"]
        )
        assert w.folder_config("work")["managed_by"] == "RagdownFolder team/work"  # as the event says


async def test_release_all_lets_go_of_this_releases_resources_while_the_operator_runs(tmp_path: Path) -> None:
    """What the chart's pre-delete hook runs: afterwards neither `helm uninstall` nor deleting the
    namespace waits on a finalizer, and a new install of the release takes the resources back."""
    async with world(tmp_path) as w:
        await w.apply("work", WORK, labels={INSTANCE: "rd"})
        await w.apply("plain", {"mcp": False}, finalizers=["ragdown.dev/finalizer"])
        await w.apply(
            "theirs", {"mcp": False}, labels={INSTANCE: "rd2"}, finalizers=["ragdown.dev/finalizer-rd2"]
        )
        await w.settled("work")
        await w.settled("plain")
        status, out = await w.operator.command("release-all")
        assert status == 0, out
        assert "released 2 RagdownFolder(s) of release rd in namespace team: work, plain" in out
        for name in ("work", "plain"):
            assert await w.finalizers(name) == []
            assert (await w.annotations(name))["ragdown.dev/released"] == "rd"
        assert await w.finalizers("theirs") == ["ragdown.dev/finalizer-rd2"]
        assert "ragdown.dev/released" not in await w.annotations("theirs")

        # The operator, still running, does not put its finalizer back: by the time it has created and
        # twice resynced a new resource, it has seen the change to the released ones.
        await w.apply("late", {"mcp": False})
        await w.settled("late")
        await w.resynced("late")
        assert await w.finalizers("work") == await w.finalizers("plain") == []
        await w.delete("work")
        assert await w.gone("work")
        assert w.folder_config("work")["managed_by"] == "RagdownFolder team/work"  # the indexer untouched

        # Installed again: the release takes back what it let go of.
        w.operator.stop()
        w.operator.start()

        async def reclaimed() -> bool:
            return await w.finalizers("plain") == ["ragdown.dev/finalizer-rd"]

        await eventually(reclaimed, "plain to be reconciled again")
        assert "ragdown.dev/released" not in await w.annotations("plain")
        assert await w.finalizers("theirs") == ["ragdown.dev/finalizer-rd2"]
