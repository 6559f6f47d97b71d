"""`ragdown-operator` as a process, against an emulated Kubernetes API (kmock, no cluster here) and a
real `ragdown serve` indexer: what a RagdownFolder turns into, and what each change does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.operator.harness import HOST, INGRESSES, NAMESPACE, World, eventually, world

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

WORK = {"title": "Work notes", "mcp": True, "hook": {"topK": 3, "minScore": 0.5}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_new_folder_is_created_managed_routed_and_reported(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        created = await w.apply("work", WORK)
        found = await w.settled("work")
        assert w.folder_config("work") == {
            "title": "Work notes",
            "mcp": True,
            "hook": {"top_k": 3, "min_score": 0.5},
            "managed_by": f"RagdownFolder {NAMESPACE}/work",
            "created_by": f"RagdownFolder {NAMESPACE}/work",
        }
        status = found["status"]
        assert status["endpoint"] == f"http://{HOST}/mcp/work"
        assert (status["files"], status["chunks"]) == (0, 0)
        assert {c["type"]: c["reason"] for c in status["conditions"]} == {
            "Ready": "Reconciled",
            "Synced": "SettingsApplied",
            "Routed": "IngressReady",
        }
        ingress = await w.ingress("work-mcp")
        assert ingress is not None
        assert ingress["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
        assert ingress["spec"]["ingressClassName"] == "traefik"
        rule = ingress["spec"]["rules"][0]
        assert rule["host"] == HOST
        assert rule["http"]["paths"] == [
            {
                "path": "/mcp/work",
                "pathType": "Prefix",
                "backend": {"service": {"name": "rd-ragdown-reader", "port": {"number": 3000}}},
            }
        ]
        await w.event_reasons("work", "FolderCreated", "RouteCreated")
        # A person's change through the web API is refused and told which resource to edit.
        async with w.indexer.api() as api:
            refused = await api.patch("/api/folders/work", json={"mcp": False})
        assert refused.status_code == 409
        assert "kubectl edit ragdownfolder work -n team" in refused.json()["error"]


async def test_spec_changes_reach_the_folder_and_mcp_off_removes_the_route(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.apply("work", WORK)
        await w.settled("work")
        await w.edit(
            "work",
            {
                "title": "Renamed",
                "readOnly": True,
                "disabledTools": ["ragdown_stats"],
                "hook": {"topK": None},
            },
        )
        found = await w.settled("work")
        assert found["metadata"]["generation"] == 2
        assert w.folder_config("work") == {
            "title": "Renamed",
            "mcp": True,
            "read_only": True,
            "disabled_tools": ["ragdown_stats"],
            "hook": {"min_score": 0.5},
            "managed_by": f"RagdownFolder {NAMESPACE}/work",
            "created_by": f"RagdownFolder {NAMESPACE}/work",
        }
        await w.edit("work", {"mcp": False})
        found = await w.settled("work")
        assert await w.ingress("work-mcp") is None
        assert found["status"]["endpoint"] == ""
        assert await w.condition("work", "Routed") == {
            **(await w.condition("work", "Routed") or {}),
            "status": "True",
            "reason": "McpOff",
        }
        assert w.folder_config("work")["mcp"] is False
        await w.edit("work", {"mcp": True})
        await w.settled("work")
        assert await eventually(lambda: w.ingress("work-mcp"), "the route to come back")


async def test_drift_is_repaired_and_counts_refresh(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.apply("work", WORK)
        await w.settled("work")
        # Behind the operator's back: the settings file edited, the Ingress deleted, a document added.
        path = w.indexer.docs / "work" / ".ragdown.json"
        path.write_text('{"title": "Hijacked", "mcp": false}', encoding="utf-8")
        await w.kube.delete("/apis/networking.k8s.io/v1/namespaces/team/ingresses/work-mcp")
        (w.indexer.docs / "work" / "a.md").write_text("# A\n\nalpha\n\n## B\n\nbeta\n", encoding="utf-8")

        async def repaired() -> bool:
            config = w.folder_config("work")
            return config.get("title") == "Work notes" and config.get("mcp") is True

        await eventually(repaired, "the settings to be re-applied")
        assert await eventually(lambda: w.ingress("work-mcp"), "the Ingress to be re-created")

        async def counted() -> bool:
            found = await w.get("work")
            return bool(found and found["status"].get("files") == 1 and found["status"]["chunks"] >= 2)

        await eventually(counted, "the new document to be counted")
        await w.event_reasons("work", "SettingsApplied", "RouteCreated")


async def test_an_unreachable_indexer_is_retried_until_it_answers(tmp_path: Path) -> None:
    async with world(tmp_path, start_indexer=False) as w:
        await w.apply("work", WORK)

        async def waiting() -> dict[str, Any] | None:
            ready = await w.condition("work", "Ready")
            return ready if ready and ready["reason"] == "IndexerUnreachable" else None

        ready = await eventually(waiting, "Ready=False IndexerUnreachable")
        assert ready["status"] == "False"
        assert "did not answer" in str(ready["message"])
        assert not (w.indexer.docs / "work").exists()
        w.indexer.start()
        await w.indexer.ready()
        await w.settled("work")
        assert w.folder_config("work")["mcp"] is True


async def test_an_invalid_spec_is_reported_and_applied_once_fixed(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        # The API server's schema would refuse these; the operator must not trust that it ran.
        await w.apply("bad", {"folder": "fixed", "mcp": "yes", "hook": {"topK": 500}})

        async def invalid() -> dict[str, Any] | None:
            synced = await w.condition("bad", "Synced")
            return synced if synced and synced["reason"] == "InvalidSpec" else None

        synced = await eventually(invalid, "Synced=False InvalidSpec")
        assert str(synced["message"]).startswith("spec.")
        ready = await w.condition("bad", "Ready")
        assert ready is not None
        assert ready["status"] == "False"
        assert ready["reason"] == "InvalidSpec"
        await w.event_reasons("bad", "InvalidSpec")
        assert [p.name for p in w.indexer.docs.iterdir()] == []
        await w.edit("bad", {"mcp": True, "hook": {"topK": 5}})  # spec.folder stays: the CRD forbids it
        await w.settled("bad")
        assert w.folder_config("fixed")["mcp"] is True


async def test_delete_with_retain_keeps_documents_and_turns_mcp_off(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.apply("work", WORK)
        await w.settled("work")
        (w.indexer.docs / "work" / "keep.md").write_text("# Keep\n\nme\n", encoding="utf-8")
        await w.delete("work")
        await eventually(lambda: _gone(w, "work"), "the resource to be released")
        assert (w.indexer.docs / "work" / "keep.md").is_file()
        kept = {
            "title": "Work notes",
            "mcp": False,
            "hook": {"top_k": 3, "min_score": 0.5},
            "created_by": f"RagdownFolder {NAMESPACE}/work",  # a record of who made it, not a lock
        }
        assert w.folder_config("work") == kept
        assert await w.ingress("work-mcp") is None
        async with w.indexer.api() as api:  # no longer managed: people may change it again
            assert (await api.patch("/api/folders/work", json={"title": "Mine"})).status_code == 200


async def test_delete_with_delete_policy_removes_the_folder(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.apply("scratch", {"mcp": True, "deletionPolicy": "Delete"})
        await w.settled("scratch")
        (w.indexer.docs / "scratch" / "tmp.md").write_text("# Tmp\n", encoding="utf-8")
        await w.delete("scratch")
        await eventually(lambda: _gone(w, "scratch"), "the resource to be released")
        assert not (w.indexer.docs / "scratch").exists()
        await w.event_reasons("scratch", "FolderDeleted")


async def test_two_resources_for_one_folder_and_the_operators_own_health(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.apply("work", WORK)
        await w.settled("work")
        await w.apply("work-again", {"folder": "work", "mcp": False})

        async def conflict() -> dict[str, Any] | None:
            synced = await w.condition("work-again", "Synced")
            return synced if synced and synced["reason"] == "FolderManagedElsewhere" else None

        synced = await eventually(conflict, "Synced=False FolderManagedElsewhere")
        assert "RagdownFolder team/work" in str(synced["message"])
        assert w.folder_config("work")["mcp"] is True  # the first resource's settings stand
        async with httpx.AsyncClient(timeout=5) as http:
            health = await http.get(f"http://127.0.0.1:{w.operator.liveness_port}/healthz")
            metrics = (await http.get(f"http://127.0.0.1:{w.operator.metrics_port}/metrics")).text
        assert health.status_code == 200
        assert health.json()["indexer"]["reachable"] is True
        assert 'ragdown_operator_reconciles_total{outcome="ok",trigger="change"}' in metrics
        assert 'ragdown_operator_changes_total{change="folder_created"} 1.0' in metrics


async def test_delete_policy_keeps_a_folder_that_existed_before_the_resource(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        (w.indexer.docs / "notes").mkdir()
        (w.indexer.docs / "notes" / "mine.md").write_text("# Mine\n\nwritten by a person\n", encoding="utf-8")
        await w.apply("notes", {"mcp": True, "deletionPolicy": "Delete"})
        await w.settled("notes")
        assert w.folder_config("notes")["managed_by"] == f"RagdownFolder {NAMESPACE}/notes"
        await w.delete("notes")
        await eventually(lambda: _gone(w, "notes"), "the resource to be released")
        assert (w.indexer.docs / "notes" / "mine.md").is_file()
        assert w.folder_config("notes") == {"mcp": False}
        await w.event_reasons("notes", "FolderKept", "FolderReleased")


async def test_an_ingress_that_is_not_ours_is_left_alone_and_settings_changes_reach_ours(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        theirs = {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "other-mcp", "namespace": NAMESPACE},
            "spec": {"rules": [{"http": {"paths": []}}]},
        }
        (await w.kube.post(INGRESSES, json=theirs)).raise_for_status()
        await w.apply("other", {"mcp": True})

        async def conflict() -> dict[str, Any] | None:
            routed = await w.condition("other", "Routed")
            return routed if routed and routed["reason"] == "IngressConflict" else None

        await eventually(conflict, "Routed=False IngressConflict")
        assert (await w.ingress("other-mcp") or {})["spec"] == theirs["spec"]
        await w.delete("other")
        await eventually(lambda: _gone(w, "other"), "the resource to be released")
        assert await w.ingress("other-mcp") is not None  # not ours: not deleted either

        await w.apply("work", WORK)
        await w.settled("work")
        assert (await w.ingress("work-mcp") or {})["spec"]["rules"][0]["host"] == HOST
        # The chart's ingress host is unset: the next reconcile drops it from the route.
        w.operator.stop()
        w.operator.extra_env["RAGDOWN_OPERATOR_INGRESS_HOST"] = ""
        w.operator.start()

        async def hostless() -> bool:
            rule = ((await w.ingress("work-mcp")) or {})["spec"]["rules"][0]
            return "host" not in rule

        await eventually(hostless, "the host to be removed from the route")


async def _gone(w: World, name: str) -> bool:
    return await w.get(name) is None
