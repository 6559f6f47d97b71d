"""Every route and argument that names a folder, attacked: `/mcp/<hostile>` URLs (raw, encoded,
double-encoded), root `/mcp` with a hostile `folder` and `ragdown_create_folder`, and
`/api/folders/<hostile>`; plus the GET that hangs and the answers that name server paths.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from mcp import Client

from tests.security.conftest import (
    CORPUS,
    HOSTILE_FOLDERS,
    PROBE_TEXT,
    Hostile,
    McpTarget,
    Sandbox,
    attack,
    changes,
    ids,
    shown,
    unclear,
)
from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served

LIST_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-06-18",
}


def send(
    served: Served,
    method: str,
    target: str,
    *,
    token: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """One request with `target` sent byte for byte: httpx would resolve `..` before sending."""
    url = urlsplit(served.url)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    try:
        connection.request(
            method, target, body=body, headers={"Authorization": f"Bearer {token}", **(headers or {})}
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def http_refusal(box: Sandbox, status: int, body: bytes) -> list[str]:
    """Why an HTTP answer to a hostile request is not a clear refusal that gives nothing away."""
    text = body.decode("utf-8", errors="replace")
    found = box.leaks(text)
    if str(box.base) in text or os.path.realpath(box.base) in text:
        found.append("named the server's absolute path")
    if status == 401:
        found.append("401: the suite's token is not this route's (see ADMIN_TOKEN)")
    elif not 400 <= status < 500:
        found.append(f"answered {status}, not a 4xx refusal")
    try:
        data: Any = json.loads(body)
    except ValueError:
        return [*found, "the body is not JSON"]
    if not (isinstance(data, dict) and isinstance(data.get("error"), str)):
        return [*found, 'the body is not {"error": ...}']
    return found + unclear(data["error"])


def assert_refused(box: Sandbox, before: dict[str, Any], status: int, body: bytes) -> None:
    problems = http_refusal(box, status, body) + changes(before, box.state())
    if problems:
        pytest.fail(
            f"{'; '.join(problems)}\n  answer {status}: {shown(body.decode('utf-8', 'replace'))}", False
        )


# `/mcp/<…>` as sent on the wire: each must answer exactly as a folder that does not exist.
MCP_URLS = {
    "human_only": "/mcp/private",
    "human_only_slash": "/mcp/private/",
    "encoded_up": "/mcp/ops/%2e%2e/private",
    "encoded_up_upper": "/mcp/ops/%2E%2E/private",
    "encoded_slash": "/mcp/ops/..%2fprivate",
    "encoded_all": "/mcp/%2e%2e%2fprivate",
    "raw_up": "/mcp/ops/../private",
    "raw_dotdot": "/mcp/..",
    "encoded_dotdot": "/mcp/%2e%2e",
    "double_encoded_up": "/mcp/ops/%252e%252e/private",
    "double_encoded_all": "/mcp/%252e%252e%252fprivate",
    "up_twice_to_outside": "/mcp/ops/%2e%2e%2f%2e%2e%2foutside",
    "backslash_up": "/mcp/ops/..%5cprivate",
    "backslash_folder": "/mcp/ops%5c..%5cprivate",
    "symlink_etc": "/mcp/ops/etc",
    "symlink_dir": "/mcp/ops/outdir",
    "symlink_nested": "/mcp/ops/sub/deeper",
    "symlink_private": "/mcp/ops/private_link",
    "symlink_top": "/mcp/outside_link",
    "symlink_top_encoded": "/mcp/outside%5flink",
    "missing_top": "/mcp/private_link",
    "dot_folder": "/mcp/ops/.hidden",
    "dot_folder_encoded": "/mcp/ops/%2ehidden",
    "dot_top": "/mcp/.hidden",
    "node_modules": "/mcp/ops/node_modules",
    "file": "/mcp/ops/guide.md",
    "file_symlink": "/mcp/ops/secret_link.md",
    "encoded_absolute": "/mcp/%2fetc",
    "encoded_absolute_sub": "/mcp/ops/%2fetc",
    "nul": "/mcp/ops%00",
    "newline": "/mcp/ops%0a",
    "malformed_escape": "/mcp/%E0",
    "fullwidth_dots": "/mcp/ops/%EF%BC%8E%EF%BC%8E/private",
    "long_folder": "/mcp/" + "a" * 5000,
    "long_sub": "/mcp/ops/" + "a" * 5000,
}


def not_found_body(served: Served) -> bytes:
    status, body = send(
        served, "POST", "/mcp/no-such-folder", token=TOKEN, body=LIST_TOOLS, headers=MCP_HEADERS
    )
    assert status == 404
    return body


def test_a_real_folder_answers_so_the_404s_mean_something(served: Served) -> None:
    status, body = send(served, "POST", "/mcp/ops", token=TOKEN, body=LIST_TOOLS, headers=MCP_HEADERS)
    assert status == 200
    assert b"ragdown_read_doc" in body


@pytest.mark.parametrize("url", list(MCP_URLS.values()), ids=list(MCP_URLS))
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_mcp_url_answers_as_a_missing_folder(served: Served, sandbox: Sandbox, method: str, url: str) -> None:
    """docs/tools.md#mcp-routes: missing, human-only, a symlink, a file, a dot-folder or a climb all answer
    the same
    404 body byte for byte, so nobody can tell which folders exist (every method reaches MCP)."""
    expected = not_found_body(served)
    before = sandbox.state()
    body = LIST_TOOLS if method == "POST" else None
    status, body = send(served, method, url, token=TOKEN, body=body, headers=MCP_HEADERS)
    assert_refused(sandbox, before, status, body)
    assert (status, body) == (404, expected), shown(body.decode("utf-8", "replace"))


FOLDER_CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "read_doc": ("ragdown_read_doc", {"path": "secret.md"}),
    "backlinks": ("ragdown_backlinks", {"path": "secret.md"}),
    "write": ("ragdown_write", {"path": "pwned.md", "text": PROBE_TEXT}),
    "edit": ("ragdown_edit", {"path": "secret.md", "edits": [{"old_text": "The word is", "new_text": "x"}]}),
    "delete": ("ragdown_delete", {"path": "secret.md", "recursive": True}),
    "move": ("ragdown_move", {"from": "secret.md", "to": "moved.md"}),
    "remember": ("ragdown_remember", {"title": "Hostile probe", "content": "probe"}),
    "recall": ("ragdown_recall", {"query": "secret word", "top_k": 50}),
    "list": ("ragdown_list", {}),
    "context": ("ragdown_context", {"prompt": "what is the secret word in these notes"}),
    "stats": ("ragdown_stats", {"include_files": True}),
}


@pytest.fixture(scope="module")
async def root(root_client: Client) -> McpTarget:
    return McpTarget("root", root_client, remote=True)


@pytest.mark.anyio
@pytest.mark.parametrize("folder", HOSTILE_FOLDERS, ids=ids(HOSTILE_FOLDERS))
@pytest.mark.parametrize("call", list(FOLDER_CALLS), ids=list(FOLDER_CALLS))
async def test_root_tool_with_a_hostile_folder(
    root: McpTarget, sandbox: Sandbox, call: str, folder: Hostile
) -> None:
    """Root `/mcp`: a folder that is not one with MCP on (human-only, a symlink, a climb, a dot-folder)
    is refused by every tool, as a missing one is (docs/tools.md#root-mcp)."""
    tool, arguments = FOLDER_CALLS[call]
    await attack(sandbox, root, tool, {**arguments, "folder": folder.path}, must_refuse=True)


@pytest.mark.anyio
@pytest.mark.parametrize("call", list(FOLDER_CALLS), ids=list(FOLDER_CALLS))
async def test_root_answers_a_human_only_folder_as_a_missing_one(root: McpTarget, call: str) -> None:
    """docs/tools.md#root-mcp: nothing in the answer tells a human-only folder from a missing one."""
    tool, arguments = FOLDER_CALLS[call]
    private = await root.call(tool, {**arguments, "folder": "private"})
    missing = await root.call(tool, {**arguments, "folder": "nowhere"})
    assert private.is_error
    assert missing.is_error
    assert private.text.replace("private", "<name>") == missing.text.replace("nowhere", "<name>")


# A good folder name per docs/tools.md#folder-routes: one of these that is not taken may be created
# (`secret_link.md` is).
FOLDER_NAME_RULE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 _.-]{0,63}")
TAKEN = {"ops", "private", "scratch", "outside_link"}
FOLDER_NAMES = [
    Hostile(f"{kind}-{h.id}", h.path)
    for kind, names in (("folder", HOSTILE_FOLDERS), ("path", CORPUS))
    for h in names
    if not FOLDER_NAME_RULE.fullmatch(h.path) or h.path in TAKEN
]


@pytest.mark.anyio
@pytest.mark.parametrize("name", FOLDER_NAMES, ids=ids(FOLDER_NAMES))
async def test_create_folder_with_a_hostile_name(root: McpTarget, sandbox: Sandbox, name: Hostile) -> None:
    await attack(sandbox, root, "ragdown_create_folder", {"name": name.path, "title": "x"}, must_refuse=True)


# `/api/folders/<name>` with names a token holder must not reach through (`private` is a real folder
# there: the API manages human-only folders too).
API_NAMES = [h for h in HOSTILE_FOLDERS if h.id != "human_only"] + [
    Hostile("parent_outside", "../outside"),
    Hostile("grandparent_outside", "../../outside"),
    Hostile("absolute_passwd", "/etc/passwd"),
]


def api_targets() -> list[Any]:
    """Each name percent-encoded whole, double-encoded, and raw where it can go on the wire raw."""
    found = []
    for name in API_NAMES:
        once = quote(name.path, safe="")
        found.append(pytest.param(once, id=f"{name.id}-encoded"))
        found.append(pytest.param(quote(once, safe=""), id=f"{name.id}-double_encoded"))
        if name.path.isascii() and name.path.isprintable() and not set(name.path) & set(" ?#%\\"):
            found.append(pytest.param(name.path, id=f"{name.id}-raw"))
    return found


@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
@pytest.mark.parametrize("name", api_targets())
def test_api_folder_route_with_a_hostile_name(
    served: Served, sandbox: Sandbox, method: str, name: str
) -> None:
    before = sandbox.state()
    body = json.dumps({"mcp": True, "title": "pwned"}).encode() if method == "PATCH" else None
    query = f"?confirm={name}" if method == "DELETE" else ""
    status, answer = send(
        served,
        method,
        f"/api/folders/{name}{query}",
        token=ADMIN_TOKEN,
        body=body,
        headers={"Content-Type": "application/json"},
    )
    assert_refused(sandbox, before, status, answer)


@pytest.mark.parametrize("name", FOLDER_NAMES, ids=ids(FOLDER_NAMES))
@pytest.mark.parametrize("how", ["create", "rename"])
def test_api_folder_name_in_a_body_is_refused(
    served: Served, sandbox: Sandbox, how: str, name: Hostile
) -> None:
    """A hostile `name` in `POST /api/folders` (create) or `PATCH /api/folders/scratch` (rename)."""
    before = sandbox.state()
    method, route = ("POST", "/api/folders") if how == "create" else ("PATCH", "/api/folders/scratch")
    status, answer = send(
        served,
        method,
        route,
        token=ADMIN_TOKEN,
        body=json.dumps({"name": name.path}).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert_refused(sandbox, before, status, answer)


@pytest.mark.anyio
async def test_http_answers_never_name_server_paths(served: Served, sandbox: Sandbox) -> None:
    """Over the network the docs and data folders are the server's business: stats and the hook's
    `<ragdown-context source=…>` must not name them (stdio may: they are its own user's)."""
    answers: dict[str, str] = {}
    prompt = {"prompt": "how do we restore the database step by step"}
    for path, fixed in (("/mcp/ops", {}), ("/mcp", {}), ("/mcp", {"folder": "ops"})):
        async with served.mcp(path) as client:
            for tool, arguments in (("ragdown_stats", {"include_files": True}), ("ragdown_context", prompt)):
                result = await client.call_tool(tool, {**arguments, **fixed})
                answers[f"{path} {fixed} {tool}"] = "".join(getattr(c, "text", "") for c in result.content)
    assert "<ragdown-context" in answers["/mcp/ops {} ragdown_context"]  # the block was there to check
    with served.http(token=ADMIN_TOKEN) as client:
        for route in ("/api/status", "/api/folders", "/api/folders/ops"):
            answers[route] = client.get(route).text
    named = [where for where, text in answers.items() if str(sandbox.base) in text]
    assert not named, f"absolute server paths in: {', '.join(named)}"


def test_get_with_an_event_stream_accept_answers_405_at_once(served: Served) -> None:
    """A stateless server has no stream to offer: say so (405), never hold the request open."""
    started = time.monotonic()
    try:
        with httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5
        ) as client:
            response = client.get("/mcp/ops", headers={"Accept": "text/event-stream"})
    except httpx.TimeoutException:
        pytest.fail(
            f"GET /mcp/ops with Accept: text/event-stream hung ({time.monotonic() - started:.0f} s)", False
        )
    assert response.status_code == 405
