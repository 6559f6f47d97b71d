"""The agents' token at a folder that takes its own tokens only is told so (403), not "no folder with
MCP turned on" (issue 28 item 13) — and no caller learns more than before about folders it cannot
use: a token the server does not know gets the same 403 at a real folder and a missing one, a team's
token the same 404 at another team's folder and a missing one, and the agents' token that reaches
no folder at all the same 404 everywhere (docs/security.md#tenants)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import httpx
import pytest

from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served, text_of
from tests.serving.test_auth import LIST, MCP_HEADERS, bearer, set_config

TEAM_TOKEN = "team-a-own-token"
OWN_TOKENS_ONLY = (
    b'{"error": "this folder takes its own tokens only, and the agents\' token (RAGDOWN_TOKEN) is not '
    b"one of them: send one of the folder's tokens (its `tokens`, given by whoever runs the server) "
    b'or the admin token"}'
)


def _team_folder(served: Served) -> None:
    digest = hashlib.sha256(TEAM_TOKEN.encode()).hexdigest()
    set_config(served, "ops", tokens=[{"name": "team-a", "sha256": digest}])


def _post(served: Served, path: str, token: str) -> httpx.Response:
    with httpx.Client(base_url=served.url, timeout=30) as http:
        return http.post(path, json=LIST, headers={**MCP_HEADERS, **bearer(token)})


def test_the_agents_token_is_told_the_folder_takes_its_own_tokens(served: Served) -> None:
    _team_folder(served)
    set_config(served, "shared", title="Shared", mcp=True)  # the agents' token reaches this one
    refused = _post(served, "/mcp/ops", TOKEN)
    assert refused.status_code == 403
    assert refused.content == OWN_TOKENS_ONLY
    assert "www-authenticate" not in refused.headers  # a 403 sends no client off to sign in
    # The same answer whatever the sub-path: nothing is told of what lies inside the folder.
    assert _post(served, "/mcp/ops/db", TOKEN).content == OWN_TOKENS_ONLY
    assert _post(served, "/mcp/ops/no/such/place", TOKEN).content == OWN_TOKENS_ONLY
    # The folder's own token and the admin token still reach it.
    assert _post(served, "/mcp/ops", TEAM_TOKEN).status_code == 200
    assert _post(served, "/mcp/ops", ADMIN_TOKEN).status_code == 200


def test_nobody_else_learns_more_than_a_missing_folder_tells(served: Served) -> None:
    _team_folder(served)
    set_config(served, "shared", title="Shared", mcp=True)
    set_config(served, "other", title="Other", mcp=True, tokens=[{"name": "b", "sha256": "0" * 64}])
    missing = _post(served, "/mcp/nothing", TOKEN)
    assert missing.status_code == 404
    # A human-only folder answers as a missing one, to the agents' token too.
    assert _post(served, "/mcp/private", TOKEN).content == missing.content
    # A token the server does not know: the same 403 at a real folder and a missing one, without
    # the challenge that would send a client off to OAuth.
    unknown = [_post(served, path, "a-token-nobody-has") for path in ("/mcp/ops", "/mcp/nothing")]
    assert [r.status_code for r in unknown] == [403, 403]
    assert unknown[0].content == unknown[1].content
    assert [r.headers.get("www-authenticate") for r in unknown] == [None, None]
    # A team's token at another team's folder: the same 404 as at a missing folder.
    assert (
        _post(served, "/mcp/other", TEAM_TOKEN).content == _post(served, "/mcp/nothing", TEAM_TOKEN).content
    )


def test_the_agents_token_that_reaches_no_folder_learns_nothing(make_served: Callable[..., Served]) -> None:
    served = make_served()
    _team_folder(served)  # ops takes its own tokens; private is human-only: the shared token reaches none
    at_folder = _post(served, "/mcp/ops", TOKEN)
    at_nothing = _post(served, "/mcp/nothing", TOKEN)
    assert at_folder.status_code == 404
    assert at_folder.content == at_nothing.content


@pytest.mark.anyio
async def test_root_mcp_tells_the_agents_token_the_same(make_served: Callable[..., Served]) -> None:
    served = make_served(root_mcp=True)
    _team_folder(served)
    set_config(served, "shared", title="Shared", mcp=True)
    set_config(served, "other", title="Other", mcp=True, tokens=[{"name": "b", "sha256": "0" * 64}])
    read = {"path": "backups.md"}
    async with served.mcp("/mcp", token=TOKEN) as client:
        told = await client.call_tool("ragdown_read_doc", {**read, "folder": "ops"})
        missing = await client.call_tool("ragdown_read_doc", {**read, "folder": "nothing"})
    assert told.is_error
    assert text_of(told) == OWN_TOKENS_ONLY.decode()[len('{"error": "') : -2]
    assert text_of(missing) == 'no folder with MCP turned on named "nothing"'
    async with served.mcp("/mcp", token=TEAM_TOKEN) as client:
        other = await client.call_tool("ragdown_read_doc", {**read, "folder": "other"})
    assert text_of(other) == 'no folder with MCP turned on named "other"'  # another team's: as if missing
