"""MCP over real streamable HTTP with the official client: tools, formats, scoping, auth, 404s."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import httpx
import pytest

from ragdown.serving.auth import UNKNOWN_TOKEN
from tests.serving.conftest import Served, text_of

pytestmark = pytest.mark.anyio

READ_TOOLS = {"ragdown_context", "ragdown_recall", "ragdown_read_doc", "ragdown_list", "ragdown_stats"}


async def test_the_folder_server_is_named_and_instructed_with_the_title(served: Served) -> None:
    async with served.mcp() as client:
        assert client.server_info is not None
        assert client.server_info.name == "ragdown-ops"
        assert '"Ops runbooks"' in (client.instructions or "")
        names = {t.name for t in (await client.list_tools()).tools}
        assert names >= READ_TOOLS
        assert "ragdown_reindex" in names


async def test_recall_text_and_json_are_scoped_to_the_folder(served: Served) -> None:
    async with served.mcp() as client:
        text = text_of(await client.call_tool("ragdown_recall", {"query": "redis eviction", "top_k": 3}))
        assert text.startswith("[1] cache.md:")  # folder-relative paths
        assert "diary" not in text  # a human-only folder is never searched
        data = json.loads(
            text_of(await client.call_tool("ragdown_recall", {"query": "pg_restore", "format": "json"}))
        )
        hit = data["hits"][0]
        assert hit["path"] == "backups.md"
        assert set(hit) >= {
            "path",
            "title",
            "heading",
            "line_start",
            "line_end",
            "similarity",
            "score",
            "sources",
            "tags",
            "modified",
            "text",
        }
        assert "created_by" not in hit


async def test_the_clip_marker_names_the_read_call(served: Served) -> None:
    async with served.mcp() as client:
        text = text_of(
            await client.call_tool("ragdown_recall", {"query": "pg_restore fresh database", "max_chars": 5})
        )
        assert "[clipped: 5 of " in text
        assert 'ragdown_read_doc {path: "backups.md", start_line: ' in text


async def test_read_doc_header_hash_and_wikilink_reads(served: Served) -> None:
    async with served.mcp() as client:
        text = text_of(await client.call_tool("ragdown_read_doc", {"path": "backups.md"}))
        header, _, body = text.partition("\n")
        assert header.startswith("backups.md:1-10 of 10 (hash ")
        assert body.splitlines()[-1] == "Then compare row counts."
        linked = text_of(await client.call_tool("ragdown_read_doc", {"path": "Restores#Restore"}))
        assert linked.startswith("backups.md:7-10 of 10 (hash ")
        assert 'resolved from "Restores#Restore"' in linked.splitlines()[0]
        missing = await client.call_tool("ragdown_read_doc", {"path": "nothing-here"})
        assert missing.is_error
        assert "no such document: nothing-here" in text_of(missing)
        escape = await client.call_tool("ragdown_read_doc", {"path": "../private/diary.md"})
        assert escape.is_error
        assert "outside the docs folder" in text_of(escape)


async def test_list_and_stats(served: Served) -> None:
    async with served.mcp() as client:
        listing = text_of(await client.call_tool("ragdown_list", {}))
        lines = listing.splitlines()
        assert lines[0] == "documents: 3"
        assert lines[1].startswith("backups.md — Backups [#db #ops] (changed ")
        assert "aliases Restores" in lines[1]
        stats = json.loads(text_of(await client.call_tool("ragdown_stats", {})))
        assert (stats["role"], stats["embedder"], stats["files"], stats["syncing"]) == (
            "primary",
            "hash-384",
            3,
            False,
        )
        assert stats["scope"] == "ops"


async def test_a_subfolder_endpoint_sees_only_below_it(served: Served) -> None:
    async with served.mcp("/mcp/ops/db") as client:
        text = text_of(
            await client.call_tool("ragdown_recall", {"query": "nightly vacuum postgres", "top_k": 5})
        )
        assert text.startswith("[1] vacuum.md:")
        assert "backups.md" not in text
        listing = text_of(await client.call_tool("ragdown_list", {}))
        assert listing.splitlines()[0] == "documents: 1"
        assert listing.splitlines()[1].startswith("vacuum.md — Vacuum (changed ")


async def test_context_remembers_a_session_across_stateless_clients(served: Served) -> None:
    prompt = "how do I restore the postgres database from a dump"
    async with served.mcp() as first:
        one = text_of(
            await first.call_tool("ragdown_context", {"prompt": prompt, "session_id": "s1", "top_k": 1})
        )
    async with served.mcp() as second:
        two = text_of(
            await second.call_tool("ragdown_context", {"prompt": prompt, "session_id": "s1", "top_k": 1})
        )
    assert one.startswith("<ragdown-context ")
    assert two.startswith("<ragdown-context ")
    assert one.splitlines()[4] != two.splitlines()[4]  # a different section the second time
    async with served.mcp() as third:
        hook = text_of(await third.call_tool("ragdown_context", {"prompt": prompt, "format": "claude-code"}))
        assert json.loads(hook)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert text_of(await third.call_tool("ragdown_context", {"prompt": "ok"})) == ""


def test_every_mcp_route_needs_the_token(served: Served) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    with served.http(token=None) as anonymous:
        missing = anonymous.post("/mcp/ops", json=body, headers=headers)
    assert missing.status_code == 401
    assert missing.json() == {"error": "Unauthorized: send Authorization: Bearer <token>"}
    # A standard client needs the Bearer challenge, else it assumes OAuth and says something else.
    assert missing.headers["www-authenticate"] == 'Bearer realm="ragdown"'
    with served.http(token="wrong-token") as wrong:
        response = wrong.post("/mcp/ops", json=body, headers=headers)
        api = wrong.get("/api/folders")
    # A wrong token on MCP: 403 with the reason and no challenge, which MCP clients would take as an
    # invitation to OAuth (docs/security.md#bearer-tokens-not-oauth).
    assert response.status_code == 403
    assert response.json() == {"error": UNKNOWN_TOKEN}
    assert response.json()["error"].startswith("the bearer token is not one this server knows")
    assert "www-authenticate" not in response.headers
    # /api (the web UI's sign-in relies on it) keeps its 401 and RFC 6750's invalid_token.
    assert (api.status_code, api.headers["www-authenticate"]) == (
        401,
        'Bearer realm="ragdown", error="invalid_token", error_description="the bearer token is not one '
        'this server knows (check it, and that it is for this route)"',
    )


@pytest.mark.parametrize(
    "path",
    ["/mcp/private/", "/mcp/missing", "/mcp/ops/backups.md", "/mcp/%2E%2E", "/mcp/%E0", "/mcp/ops/.git"],
)
def test_human_only_and_missing_folders_answer_the_same_404(served: Served, path: str) -> None:
    with served.http() as http:
        response = http.post(path, json={}, headers={"Accept": "application/json, text/event-stream"})
        assert response.status_code == 404
        assert response.content == b'{"error": "Not found: no folder with MCP turned on at this path"}'


def test_bare_mcp_asks_for_a_folder_and_status_is_open(served: Served) -> None:
    with served.http() as http:
        assert http.post("/mcp", json={}).json() == {"error": "Pick a folder: /mcp/<folder>"}
    with served.http(token=None) as anonymous:
        status = anonymous.get("/api/status").json()
        assert status["ready"] is True
        assert (status["files"], status["auth_required"]) == (4, True)
        assert "test-token" not in json.dumps(status)
        assert str(served.docs) not in json.dumps(status)  # no paths either
        # The tuning in effect, for the web UI's settings: the environment's hook value (here 0.0)
        # wins over the embedder's own.
        hook = {"top_k": 4, "min_score": 0.0, "min_ratio": 0.0, "max_chars": 6000}
        assert status["settings"]["hook"] == hook
        assert (status["settings"]["watch"], status["settings"]["read_only"]) == (False, False)


async def test_read_only_and_disabled_tools_are_neither_listed_nor_callable(
    make_served: Callable[..., Served],
) -> None:
    served = make_served(read_only=True, disabled_tools="ragdown_stats, ragdown_list")
    async with served.mcp() as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "ragdown_reindex" not in names
        assert "ragdown_stats" not in names
        assert "ragdown_list" not in names
        assert "ragdown_recall" in names
        result = await client.call_tool("ragdown_stats", {})
        assert result.is_error


def test_servers_for_sub_folders_are_bounded_and_rebuilt_when_needed(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sub-folder an agent names gets a server and a transport of its own; an agent that names
    thousands must not grow the process without end."""
    from ragdown.serving import mcp_routes

    monkeypatch.setattr(mcp_routes, "MAX_SERVERS", 4)
    monkeypatch.setattr(mcp_routes, "RETIRE_AFTER_S", 0.0)
    for n in range(12):
        (served.docs / "ops" / f"sub{n}").mkdir()
    headers = {"Accept": "application/json, text/event-stream", "Authorization": "Bearer test-token-1234"}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for n in [*range(12), 0]:  # sub0 again at the end: dropped, and built anew
            answer = http.post(f"/mcp/ops/sub{n}", json=listing, headers=headers)
            assert answer.status_code == 200
            assert "ragdown_recall" in answer.text
        routes = served.app.mcp
        assert len(routes._servers) <= 4
        deadline = time.monotonic() + 10
        while len([t for _, t in routes._tasks.values() if not t.done()]) > 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len([t for _, t in routes._tasks.values() if not t.done()]) <= 4
