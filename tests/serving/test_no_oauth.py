"""A client refused with 401 goes looking for OAuth; ragdown has none, and says so where the client
looks (docs/security.md#bearer-tokens-not-oauth): the 401's challenge names no metadata or scope,
the discovery routes answer a plain 404, and registration answers an OAuth error whose description
is ragdown's reason. Checked with the real MCP Inspector CLI when it is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ragdown.serving.no_oauth import NO_OAUTH
from tests.serving.conftest import MCP_INIT, Served

HEADERS = {"Accept": "application/json, text/event-stream"}
ANSWER = {"error": "oauth_not_supported", "error_description": NO_OAUTH}
# Where the SDKs look, for the endpoint /mcp/ops: path-aware first, then at the origin.
DISCOVERY = [
    f"/.well-known/{name}{suffix}"
    for name in ("oauth-protected-resource", "oauth-authorization-server", "openid-configuration")
    for suffix in ("", "/mcp/ops")
]


def test_the_401_offers_no_oauth(served: Served) -> None:
    with served.http(token=None) as anonymous:
        missing = anonymous.post("/mcp/ops", json=MCP_INIT, headers=HEADERS)
    with served.http(token="wrong-token") as wrong:
        unknown = wrong.post("/mcp/ops", json=MCP_INIT, headers=HEADERS)
    assert (missing.status_code, unknown.status_code) == (401, 401)
    # No token: the bare challenge (RFC 6750 gives no error then).
    assert missing.headers["www-authenticate"] == 'Bearer realm="ragdown"'
    # A wrong one: invalid_token, and the reason where a client that shows challenges shows it.
    assert unknown.headers["www-authenticate"] == (
        'Bearer realm="ragdown", error="invalid_token", error_description="the bearer token is not '
        'one this server knows (check it, and that it is for this route)"'
    )
    for answer in (missing, unknown):
        # The parameters that tell a client OAuth is on offer are never there.
        challenge = answer.headers["www-authenticate"]
        assert "resource_metadata" not in challenge
        assert "scope" not in challenge
        assert answer.json()["error"].startswith("Unauthorized: ")


@pytest.mark.parametrize("path", DISCOVERY)
def test_the_discovery_routes_answer_a_plain_404(served: Served, path: str) -> None:
    with served.http(token=None) as anonymous:
        answer = anonymous.get(path, headers={"MCP-Protocol-Version": "2025-06-18"})
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == ANSWER


def test_registration_and_the_oauth_endpoints_give_ragdowns_reason(served: Served) -> None:
    with served.http(token=None) as anonymous:
        registered = anonymous.post("/register", json={"client_name": "inspector", "redirect_uris": ["x"]})
        authorize = anonymous.get("/authorize", params={"response_type": "code"})
        token = anonymous.post("/token", json={})
        other = anonymous.get("/.well-known/security.txt")
    for answer in (registered, authorize, token):
        assert answer.status_code == 404
        assert answer.json() == ANSWER
    assert other.json() == {"error": "Not found"}  # nothing else under /.well-known is made up
    assert "RAGDOWN_TOKEN" in NO_OAUTH
    assert "Authorization: Bearer <token>" in NO_OAUTH


def _inspector() -> Path | None:
    """The MCP Inspector's launcher: RAGDOWN_MCP_INSPECTOR names it, else `mcp-inspector` on PATH."""
    named = os.environ.get("RAGDOWN_MCP_INSPECTOR") or shutil.which("mcp-inspector")
    return Path(named) if named and Path(named).is_file() else None


def _run_inspector(inspector: Path, url: str, *extra: str, terminal: bool = False) -> str:
    """The CLI's `tools/list` against `url` with a wrong token: what it prints, stdout and stderr. With
    `terminal`, under `script`, as a person at a terminal runs it (interactive OAuth is tried then)."""
    command = [
        str(inspector), "--cli", url, "--transport", "http",
        "--header", "Authorization: Bearer WRONG", "--method", "tools/list", *extra,
    ]  # fmt: skip
    environment = {
        **os.environ,
        "PATH": f"{inspector.parent}{os.pathsep}{os.environ.get('PATH', '')}",  # its own node, if any
        "MCP_INSPECTOR_SECRET_STORE": "memory",
        "BROWSER": "true",  # nothing may open a browser
    }
    if terminal:
        script = shutil.which("script")
        if script is None:
            pytest.skip("`script` (util-linux) is not installed")
        command = [script, "-qec", subprocess.list2cmdline(command), "/dev/null"]
    done = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, timeout=120, env=environment, check=False
    )
    return (done.stdout + done.stderr).decode("utf-8", errors="replace")


def _error_message(output: str) -> str:
    """The message of the `{"error": {...}}` line the CLI ends with."""
    lines = [line for line in output.splitlines() if line.strip().startswith('{"error"')]
    assert lines, output
    return str(json.loads(lines[-1])["error"]["message"])


def test_the_inspector_shows_ragdowns_reason(served: Served) -> None:
    inspector = _inspector()
    if inspector is None:
        pytest.skip("the MCP Inspector is not installed (RAGDOWN_MCP_INSPECTOR or mcp-inspector on PATH)")
    url = served.url + "/mcp/ops"
    # At a terminal the CLI tries OAuth after the 401, and reports the registration ragdown refused.
    at_terminal = _error_message(_run_inspector(inspector, url, terminal=True))
    assert at_terminal.startswith("Dynamic Client Registration rejected (HTTP 404)")
    assert "ragdown does not use OAuth" in at_terminal
    assert "RAGDOWN_TOKEN" in at_terminal
    # Told not to try OAuth, it reports the 401's own message.
    stored_only = _error_message(_run_inspector(inspector, url, "--stored-auth-only"))
    assert "the bearer token is not one this server knows" in stored_only
