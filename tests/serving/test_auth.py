"""Tokens with roles and where a request may come from (docs/security.md), over real HTTP: the agents'
token reaches MCP only, the admin token `/api`, a folder's own tokens that folder only; Host and
Origin are checked on every route but the open ones, and `/api` changes take JSON only."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from ragdown.folders.registry import tokens_fingerprint
from tests.conftest import run_cli
from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served

pytestmark = pytest.mark.anyio
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
TEAM_TOKEN = "team-a-own-token"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def config(served: Served, folder: str) -> dict[str, Any]:
    return dict(json.loads((served.docs / folder / ".ragdown.json").read_text(encoding="utf-8")))


def set_config(served: Served, folder: str, **changes: Any) -> None:
    path = served.docs / folder / ".ragdown.json"
    path.parent.mkdir(exist_ok=True)
    current = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    path.write_text(json.dumps({**current, **changes}), encoding="utf-8")


def test_the_agents_token_cannot_change_folder_settings(served: Served) -> None:
    """An agent cannot lift its own folder's read_only: /api is the admin's."""
    set_config(served, "ops", read_only=True)
    with httpx.Client(base_url=served.url, timeout=30) as http:
        refused = http.patch("/api/folders/ops", json={"read_only": False}, headers=bearer(TOKEN))
        assert refused.status_code == 403
        assert "RAGDOWN_ADMIN_TOKEN" in refused.json()["error"]
        assert http.get("/api/folders", headers=bearer(TOKEN)).status_code == 403
        assert http.post("/api/folders", json={"name": "x"}, headers=bearer(TOKEN)).status_code == 403
        assert http.get("/api/folders", headers=bearer("nobody's token")).status_code == 401
        assert config(served, "ops")["read_only"] is True
        assert not (served.docs / "x").exists()
        allowed = http.patch("/api/folders/ops", json={"read_only": False}, headers=bearer(ADMIN_TOKEN))
        assert allowed.status_code == 200
    assert "read_only" not in config(served, "ops")


def test_without_an_admin_token_the_admin_api_is_off(make_served: Callable[..., Served]) -> None:
    served = make_served(admin_token=None)
    with httpx.Client(base_url=served.url, timeout=30) as http:
        off = http.get("/api/folders", headers=bearer(TOKEN))
        assert off.status_code == 403
        assert off.json()["error"].startswith("the admin API is off: set RAGDOWN_ADMIN_TOKEN")
        mcp = http.post("/mcp/ops", json=LIST, headers={**MCP_HEADERS, **bearer(TOKEN)})
        assert mcp.status_code == 200


def test_the_admin_token_reaches_every_mcp_folder(served: Served) -> None:
    set_config(served, "ops", tokens=[{"name": "team-a", "sha256": hashlib.sha256(b"x").hexdigest()}])
    with httpx.Client(base_url=served.url, timeout=30) as http:
        answer = http.post("/mcp/ops", json=LIST, headers={**MCP_HEADERS, **bearer(ADMIN_TOKEN)})
        assert answer.status_code == 200
        assert "ragdown_recall" in answer.text


async def test_a_folders_own_token_reaches_that_folder_only(make_served: Callable[..., Served]) -> None:
    served = make_served(root_mcp=True)
    digest = hashlib.sha256(TEAM_TOKEN.encode()).hexdigest()
    set_config(served, "ops", tokens=[{"name": "team-a", "sha256": digest}])
    set_config(served, "team", title="Team", mcp=True)
    (served.docs / "team" / "plan.md").write_text("# Plan\n\nShip it.\n", encoding="utf-8")
    served.engine.sync()
    with httpx.Client(base_url=served.url, timeout=30) as http:

        def status(path: str, token: str) -> int:
            return http.post(path, json=LIST, headers={**MCP_HEADERS, **bearer(token)}).status_code

        assert status("/mcp/ops", TEAM_TOKEN) == 200
        # Another team's folder answers as a missing folder does: a team's token learns nothing of
        # folders it cannot use. The shared token is told the folder takes its own tokens only
        # (tests/serving/test_own_tokens_refusal.py).
        assert status("/mcp/team", TEAM_TOKEN) == 404
        assert status("/mcp/ops", TOKEN) == 403
        missing = http.post("/mcp/nothing", json=LIST, headers={**MCP_HEADERS, **bearer(TEAM_TOKEN)})
        other = http.post("/mcp/team", json=LIST, headers={**MCP_HEADERS, **bearer(TEAM_TOKEN)})
        assert other.content == missing.content
        assert status("/mcp/team", TOKEN) == 200
        # A token no folder takes: 403, never the 401 that sends MCP clients off to OAuth.
        assert status("/mcp/ops", "a-token-nobody-has") == 403
        assert status("/mcp/team", "a-token-nobody-has") == 403
        assert status("/mcp", "a-token-nobody-has") == 403
    async with served.mcp("/mcp", token=TEAM_TOKEN) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        folders = await client.call_tool("ragdown_folders", {})
        read = await client.call_tool("ragdown_read_doc", {"path": "plan.md", "folder": "team"})
    assert "ragdown_create_folder" not in tools  # a folder's token makes no new folders
    text = "".join(getattr(c, "text", "") for c in folders.content)
    assert text.startswith("ops — ")
    assert "team" not in text
    assert read.is_error
    assert "Ship it" not in "".join(getattr(c, "text", "") for c in read.content)
    async with served.mcp("/mcp", token=TOKEN) as client:
        shared = "".join(
            getattr(c, "text", "") for c in (await client.call_tool("ragdown_folders", {})).content
        )
    assert shared.startswith("team — Team")
    assert "ops" not in shared


def test_a_foreign_host_or_origin_is_refused_on_every_route(make_served: Callable[..., Served]) -> None:
    served = make_served(secure_local_net=True)  # no token needed: the headers are all that is left
    port = served.url.rsplit(":", 1)[1]
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for path in ("/api/folders", "/mcp/ops", "/api/nothing"):
            rebound = http.post(path, json={}, headers={"Host": "attacker.example"})
            assert rebound.status_code == 421, path
            assert "RAGDOWN_ALLOWED_HOSTS" in rebound.json()["error"]
        # A page on another site posting to us (CSRF), as JSON or as a form-like text body.
        csrf = http.post(
            "/api/folders", json={"name": "pwned"}, headers={"Origin": "http://attacker.example"}
        )
        assert csrf.status_code == 403
        text = http.post(
            "/api/folders",
            content=json.dumps({"name": "pwned"}),
            headers={"Content-Type": "text/plain"},
        )
        assert text.status_code == 415
        null = http.post("/api/folders", json={"name": "pwned"}, headers={"Origin": "null"})
        assert null.status_code == 403
        assert not (served.docs / "pwned").exists()
        # The open routes answer anyone; this server's own pages may post.
        assert http.get("/api/status", headers={"Host": "attacker.example"}).status_code == 200
        assert http.get("/healthz", headers={"Host": "10.0.0.7:3000"}).status_code == 200
        own = http.post("/api/folders", json={"name": "mine"}, headers={"Origin": f"http://localhost:{port}"})
        assert own.status_code == 201


def test_any_host_still_needs_the_page_to_be_this_one(make_served: Callable[..., Served]) -> None:
    served = make_served(secure_local_net=True, allowed_hosts="*")
    with httpx.Client(base_url=served.url, timeout=30) as http:
        headers = {"Host": "docs.example.com"}
        assert http.get("/api/folders", headers=headers).status_code == 200
        foreign = {**headers, "Origin": "https://attacker.example"}
        assert http.post("/api/folders", json={"name": "a"}, headers=foreign).status_code == 403
        same = {**headers, "Origin": "https://docs.example.com"}
        assert http.post("/api/folders", json={"name": "b"}, headers=same).status_code == 201
    assert not (served.docs / "a").exists()


def test_the_public_listener_has_no_internal_api(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for token in (TOKEN, ADMIN_TOKEN):
            forged = {"scope": "/etc", "tool": "ragdown_read_doc", "arguments": {"path": "passwd"}}
            answer = http.post("/internal/tool", json=forged, headers=bearer(token))
            assert answer.status_code == 404
            assert "root:" not in answer.text


def test_folder_tokens_are_set_by_the_admin_listed_by_name_and_made_by_the_cli(served: Served) -> None:
    made = run_cli("token", "team-a")
    assert made.returncode == 0
    token = made.stdout.split("token: ", 1)[1].split()[0]
    entry = json.loads(made.stdout.split("entry: ", 1)[1])
    assert entry == {"name": "team-a", "sha256": hashlib.sha256(token.encode()).hexdigest()}
    assert token not in made.stdout.split("entry: ", 1)[1]  # the entry holds no secret
    with served.admin() as http:
        for bad in (
            [{"name": "x", "sha256": "abc"}],
            [{"name": "a b", "sha256": entry["sha256"]}],
            [entry, entry],
            [{"name": "x"}],
            "team-a",
        ):
            refused = http.patch("/api/folders/ops", json={"tokens": bad})
            assert refused.status_code == 400, bad
        assert "tokens" not in config(served, "ops")
        answer = http.patch("/api/folders/ops", json={"tokens": [entry]})
        assert answer.json()["folder"]["tokens"] == ["team-a"]
        assert entry["sha256"] not in answer.text
        # In place of the digests, one fingerprint of the entries: what the operator compares (drift).
        assert answer.json()["folder"]["tokens_fingerprint"] == tokens_fingerprint([entry])
    assert config(served, "ops")["tokens"] == [entry]
    with httpx.Client(base_url=served.url, timeout=30) as http:
        own = http.post("/mcp/ops", json=LIST, headers={**MCP_HEADERS, **bearer(token)})
        assert own.status_code == 200
        shared = http.post("/mcp/ops", json=LIST, headers={**MCP_HEADERS, **bearer(TOKEN)})
        assert shared.status_code == 404


def test_a_tokens_value_that_is_not_a_list_closes_the_folder(served: Served) -> None:
    for broken in ({"name": "b", "sha256": hashlib.sha256(b"b").hexdigest()}, "team-b", 5, [], ["junk"]):
        set_config(served, "ops", tokens=broken)
        with httpx.Client(base_url=served.url, timeout=30) as http:
            shared = http.post("/mcp/ops", json=LIST, headers={**MCP_HEADERS, **bearer(TOKEN)})
            admin = http.post("/mcp/ops", json=LIST, headers={**MCP_HEADERS, **bearer(ADMIN_TOKEN)})
        # An empty list is no tokens at all; anything else malformed keeps the shared token out.
        assert shared.status_code == (200 if broken == [] else 404), broken
        assert admin.status_code == 200


def test_malformed_hosts_and_origins_are_refused(make_served: Callable[..., Served]) -> None:
    served = make_served(secure_local_net=True)
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for host in ("[::1]evil", "localhost:80:evil", "127.0.0.1.nip.io", "localhost:99999999", "a b"):
            assert http.get("/api/folders", headers={"Host": host}).status_code == 421, host
        for origin in (
            "http://[::1]@evil.com",
            "http://localhost@evil.com",
            "http://[::1]]evil.com",
            "ftp://localhost",
        ):
            answer = http.post("/api/folders", json={"name": "x"}, headers={"Origin": origin})
            assert answer.status_code == 403, origin
        assert http.get("/api/folders", headers={"Host": "[::1]:3000"}).status_code == 200
        assert http.get("/api/folders", headers={"Host": "LOCALHOST"}).status_code == 200
    assert not (served.docs / "x").exists()


async def test_root_hook_memory_is_kept_per_caller_kind(make_served: Callable[..., Served]) -> None:
    """Two teams on root /mcp with the same session id: one's memory must not hide sections from the
    other (nor can one reset the other's)."""
    served = make_served(root_mcp=True)
    prompt = {"prompt": "redis eviction policy", "session_id": "shared-id"}
    async with served.mcp("/mcp", token=TOKEN) as agent:
        first = "".join(
            getattr(c, "text", "") for c in (await agent.call_tool("ragdown_context", prompt)).content
        )
        again = "".join(
            getattr(c, "text", "") for c in (await agent.call_tool("ragdown_context", prompt)).content
        )
    async with served.mcp("/mcp", token=ADMIN_TOKEN) as admin:
        other = "".join(
            getattr(c, "text", "") for c in (await admin.call_tool("ragdown_context", prompt)).content
        )
    assert "cache.md" in first
    assert "cache.md" not in again  # the same caller's memory works
    assert "cache.md" in other  # another caller's is its own


def test_sync_failures_are_shown_only_where_the_caller_can_look(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdown.documents import files

    real = files.read_file

    def unreadable(root: Any, parts: Any, *, display: str = "") -> bytes | None:
        if parts[-1] == "diary.md":
            raise PermissionError(13, "Permission denied")
        return real(root, parts, display=display)

    (served.docs / "private" / "diary.md").write_text("# Diary\n\nchanged\n", encoding="utf-8")
    monkeypatch.setattr(files, "read_file", unreadable)
    report = served.engine.sync()
    assert [f.path for f in report.failed] == ["private/diary.md"]
    listing = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ragdown_stats", "arguments": {}},
    }
    with httpx.Client(base_url=served.url, timeout=30) as http:
        answer = http.post("/mcp/ops", json=listing, headers={**MCP_HEADERS, **bearer(TOKEN)})
    assert "diary" not in answer.text
    assert '\\"failed\\":[]' in answer.text


def test_a_token_nobody_has_is_403_at_bare_mcp_too(served: Served) -> None:
    """Root /mcp is off here: a known token is told to pick a folder, an unknown one is refused as on
    /mcp/<folder> (403 without a challenge), a request without a token asked for one (401)."""
    with httpx.Client(base_url=served.url, timeout=30) as http:
        known = http.post("/mcp", json=LIST, headers={**MCP_HEADERS, **bearer(TOKEN)})
        unknown = http.post("/mcp", json=LIST, headers={**MCP_HEADERS, **bearer("a-token-nobody-has")})
        at_folder = http.post("/mcp/ops", json=LIST, headers={**MCP_HEADERS, **bearer("a-token-nobody-has")})
        missing = http.post("/mcp", json=LIST, headers=MCP_HEADERS)
    assert (known.status_code, known.json()) == (404, {"error": "Pick a folder: /mcp/<folder>"})
    assert unknown.status_code == 403
    assert "www-authenticate" not in unknown.headers
    assert unknown.content == at_folder.content
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, 'Bearer realm="ragdown"')
