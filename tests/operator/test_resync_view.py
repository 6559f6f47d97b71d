"""What a periodic resync takes from the watch and the shared listing instead of asking
(docs/cluster.md#resync-at-scale): nothing is sent when they show nothing to do; anything else is read
fresh before it is written; the listing is one request however many resyncs share it; the first
resyncs of many resources are spread over the interval."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import httpx
import kopf
import pytest

from ragdown_operator.errors import IndexerUnreachable, IngressConflict
from ragdown_operator.handlers import Operator
from ragdown_operator.indexer import FolderState, IndexerClient
from ragdown_operator.ingress import folder_ingress
from ragdown_operator.kube import Kube
from ragdown_operator.reconcile import Outcome, Reconciler
from ragdown_operator.resync_view import FolderListing, IngressView, ResyncView, ingress_entry
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import FolderSpec
from tests.operator.cluster import applied_by

OWNER = kopf.Body(
    {
        "apiVersion": "ragdown.dev/v1alpha1",
        "kind": "RagdownFolder",
        "metadata": {"name": "work", "namespace": "team", "uid": "uid-work"},
    }
)
PATH = "/apis/networking.k8s.io/v1/namespaces/team/ingresses/work-mcp"


def wanted(annotations: str = "{}") -> dict[str, Any]:
    settings = OperatorSettings.model_validate({"ingress_annotations": annotations})
    ingress = folder_ingress("work", "work", settings)
    kopf.adopt(ingress, owner=OWNER)
    return ingress


def recording(stored: dict[str, Any]) -> tuple[Kube, list[httpx.Request]]:
    """A Kube whose API holds `stored` (empty: no Ingress) and records what is sent."""
    sent: list[httpx.Request] = []

    def api(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.method == "GET":
            return httpx.Response(200, json=stored) if stored else httpx.Response(404)
        if request.method == "DELETE":
            return httpx.Response(200, json={})
        stored.update(applied_by("ragdown-operator", json.loads(request.content)))
        return httpx.Response(200, json=stored)

    return Kube(httpx.AsyncClient(base_url="http://api", transport=httpx.MockTransport(api))), sent


def watched(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as the index keeps it."""
    meta = obj["metadata"]
    index = ingress_entry(meta["name"], meta.get("namespace", "team"), kopf.Body(cast(kopf.RawBody, obj)))
    return dict(next(iter(index.values())))


def test_a_watched_ingress_with_nothing_to_do_sends_nothing() -> None:
    current = applied_by("ragdown-operator", wanted('{"ours": "1"}'))
    current["metadata"]["annotations"]["theirs"] = "kept"  # another controller's key: not compared
    kube, sent = recording(dict(current))
    assert asyncio.run(kube.apply_ingress("team", wanted('{"ours": "1"}'), watched(current))) == "unchanged"
    assert sent == []


def test_a_watched_ingress_that_drifted_is_read_fresh_and_applied() -> None:
    stale = applied_by("ragdown-operator", wanted('{"ours": "1"}'))
    kube, sent = recording(dict(stale))
    assert asyncio.run(kube.apply_ingress("team", wanted('{"ours": "2"}'), watched(stale))) == "updated"
    assert [(r.method, r.url.path) for r in sent] == [("GET", PATH), ("PATCH", PATH)]


def test_a_watch_that_lags_costs_a_read_never_a_wrong_write() -> None:
    """The watch shows our Ingress, but another resource's has replaced it since: the fresh read
    says so, and nothing is written."""
    ours = applied_by("ragdown-operator", wanted('{"ours": "1"}'))
    theirs = {**ours, "metadata": {**ours["metadata"], "ownerReferences": [{"uid": "someone-else"}]}}
    kube, sent = recording(dict(theirs))
    with pytest.raises(IngressConflict, match="not this resource's"):
        asyncio.run(kube.apply_ingress("team", wanted('{"ours": "2"}'), watched(ours)))
    assert [r.method for r in sent] == ["GET"]
    # A watched copy that is not ours is never the answer either: read, then refused the same way.
    kube, sent = recording(dict(theirs))
    with pytest.raises(IngressConflict):
        asyncio.run(kube.apply_ingress("team", wanted('{"ours": "1"}'), watched(theirs)))
    assert [r.method for r in sent] == ["GET"]


def test_a_route_to_remove_is_read_only_when_the_watch_shows_one_of_ours() -> None:
    ours = applied_by("ragdown-operator", wanted())
    kube, sent = recording(dict(ours))
    assert asyncio.run(kube.delete_ingress("team", "work-mcp", "uid-work", None)) is False
    assert asyncio.run(kube.delete_ingress("team", "work-mcp", "uid-other", watched(ours))) is False
    assert sent == []
    assert asyncio.run(kube.delete_ingress("team", "work-mcp", "uid-work", watched(ours))) is True
    assert [r.method for r in sent] == ["GET", "DELETE"]


def test_the_index_keeps_what_is_compared_and_names_it_by_namespace_and_name() -> None:
    body = applied_by("ragdown-operator", wanted())
    body["metadata"] |= {"namespace": "team", "resourceVersion": "7", "uid": "i-1"}
    body["status"] = {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}
    ((key, kept),) = ingress_entry("work-mcp", "team", kopf.Body(cast(kopf.RawBody, body))).items()
    assert key == ("team", "work-mcp")
    assert set(kept) == {"metadata", "spec"}
    assert "resourceVersion" not in kept["metadata"]
    assert "managedFields" in kept["metadata"]
    view = IngressView({key: [kept]})
    assert view.get("team", "work-mcp") == kept
    assert view.get("team", "other-mcp") is None


def listing_of(*folders: dict[str, Any]) -> tuple[FolderListing, list[float], list[int]]:
    now = [0.0]
    calls = [0]

    async def fetch() -> list[dict[str, Any]]:
        calls[0] += 1
        await asyncio.sleep(0.01)  # the others arrive while this one is in flight
        return list(folders)

    return FolderListing(fetch, max_age_s=15, clock=lambda: now[0]), now, calls


def test_resyncs_share_one_listing_of_the_indexers_folders() -> None:
    listing, now, calls = listing_of({"name": "a", "files": 1}, {"name": "b", "files": 2})

    async def many() -> list[FolderState | None]:
        return await asyncio.gather(*(listing.get(name) for name in ["a", "b", "c"] * 100))

    found = asyncio.run(many())
    assert calls[0] == 1  # 300 resyncs, one request
    assert [f.files if f else None for f in found[:3]] == [1, 2, None]
    now[0] = 10.0
    asyncio.run(listing.get("a"))
    assert calls[0] == 1  # still fresh
    now[0] = 16.0
    asyncio.run(listing.get("a"))
    assert calls[0] == 2  # older than max_age_s: listed again


def test_a_listing_that_fails_fails_every_waiter_and_is_tried_again() -> None:
    attempts = [0]

    async def fetch() -> list[dict[str, Any]]:
        attempts[0] += 1
        await asyncio.sleep(0.01)
        if attempts[0] == 1:
            raise IndexerUnreachable("the indexer did not answer")
        return [{"name": "a"}]

    listing = FolderListing(fetch, max_age_s=15)

    async def scenario() -> None:
        results = await asyncio.gather(*(listing.get("a") for _ in range(5)), return_exceptions=True)
        assert all(isinstance(r, IndexerUnreachable) for r in results)
        assert await listing.get("a") == FolderState({"name": "a"})

    asyncio.run(scenario())
    assert attempts[0] == 2


def indexer_recording(folder: dict[str, Any]) -> tuple[IndexerClient, list[str]]:
    sent: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        sent.append(f"{request.method} {request.url.path}")
        return httpx.Response(200, json={"folder": folder})

    client = IndexerClient("http://indexer", None, 5)
    client._http = httpx.AsyncClient(base_url="http://indexer", transport=httpx.MockTransport(api))
    return client, sent


def test_a_listed_folder_as_the_spec_wants_is_not_asked_for_and_a_drifted_one_is_read_fresh() -> None:
    spec = FolderSpec.of({"title": "Work", "mcp": True}, "work")
    manager = "RagdownFolder team/work"
    as_wanted = {"name": "work", "title": "Work", "mcp": True, "managed_by": manager, "files": 3, "chunks": 9}
    drifted = {**as_wanted, "mcp": False}

    async def once(listed: dict[str, Any], fresh: dict[str, Any]) -> tuple[FolderState, list[str]]:
        indexer, sent = indexer_recording(fresh)
        reconciler = Reconciler(OperatorSettings(), indexer, Kube())

        async def fetch() -> list[dict[str, Any]]:
            return [listed]

        view = ResyncView(IngressView({}), FolderListing(fetch, max_age_s=15))
        state = await reconciler.ensure_folder(spec, manager, Outcome(), None, view)
        return state, sent

    state, sent = asyncio.run(once(as_wanted, as_wanted))
    assert sent == []
    assert (state.files, state.chunks) == (3, 9)
    state, sent = asyncio.run(once(drifted, drifted))
    assert sent == ["GET /api/folders/work", "PATCH /api/folders/work"]


def test_the_first_resyncs_of_many_resources_spread_over_the_interval() -> None:
    operator = Operator(OperatorSettings(resync_s=60))
    firsts = [operator.first_resync(kopf.Body({"metadata": {"uid": f"uid-{i}"}})) for i in range(1000)]
    assert all(60 <= f < 120 for f in firsts)
    per_tenth = [sum(1 for f in firsts if 60 + 6 * k <= f < 60 + 6 * (k + 1)) for k in range(10)]
    assert min(per_tenth) > 50
    assert max(per_tenth) < 150  # about 100 in each tenth of the interval
    # The same resource gets the same delay after a restart: it resyncs at its usual place.
    assert operator.first_resync(kopf.Body({"metadata": {"uid": "uid-0"}})) == firsts[0]
