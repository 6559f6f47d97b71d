"""ragdown has no OAuth, and no MCP client is sent looking for it where that cannot help
(docs/security.md#bearer-tokens-not-oauth): a wrong token on the MCP routes is a 403 without a
challenge, which clients show as it is; a missing one is a 401 whose challenge names no metadata or
scope; and for a client that goes looking anyway, the discovery routes answer a plain 404 and
registration an OAuth error whose description is ragdown's reason. Checked with the real MCP
Inspector CLI when it is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ragdown.serving.auth import UNKNOWN_TOKEN
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


def test_only_a_missing_token_is_a_401_and_it_offers_no_oauth(served: Served) -> None:
    with served.http(token=None) as anonymous:
        missing = anonymous.post("/mcp/ops", json=MCP_INIT, headers=HEADERS)
    with served.http(token="wrong-token") as wrong:
        unknown = wrong.post("/mcp/ops", json=MCP_INIT, headers=HEADERS)
    assert (missing.status_code, unknown.status_code) == (401, 403)
    # No token: the bare challenge (RFC 6750 gives no error then), and never the parameters that
    # tell a client OAuth is on offer.
    assert missing.headers["www-authenticate"] == 'Bearer realm="ragdown"'
    assert missing.json()["error"].startswith("Unauthorized: ")
    # A wrong one: no challenge at all (a 403 with one is a step-up request to the SDKs), the reason
    # in the body, which is what clients print.
    assert "www-authenticate" not in unknown.headers
    assert unknown.json() == {"error": UNKNOWN_TOKEN}
    assert "RAGDOWN_TOKEN" in UNKNOWN_TOKEN
    assert "Authorization: Bearer <token>" in UNKNOWN_TOKEN


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


def _run_inspector(
    inspector: Path, url: str, *extra: str, token: str | None = "WRONG", terminal: bool = False
) -> str:
    """The CLI's `tools/list` against `url` with `token` (None: no Authorization header): what it
    prints, stdout and stderr. With `terminal`, under `script`, as a person at a terminal runs it
    (interactive OAuth is tried then); without, stdin is not a terminal either, as in CI."""
    header = [] if token is None else ["--header", f"Authorization: Bearer {token}"]
    command = [
        str(inspector), "--cli", url, "--transport", "http", *header, "--method", "tools/list", *extra,
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
    # A wrong token, without a terminal and without --stored-auth-only (where a 401 used to end in
    # "Interactive OAuth requires a TTY"): the 403 is no auth challenge, and the CLI prints its body.
    plain = _error_message(_run_inspector(inspector, url))
    assert UNKNOWN_TOKEN in plain, plain
    assert "OAuth requires a TTY" not in plain
    # The same at a terminal, at a missing folder and at root /mcp: no OAuth is tried.
    assert UNKNOWN_TOKEN in _error_message(_run_inspector(inspector, url, terminal=True))
    assert UNKNOWN_TOKEN in _error_message(_run_inspector(inspector, served.url + "/mcp/nothing"))
    assert UNKNOWN_TOKEN in _error_message(_run_inspector(inspector, served.url + "/mcp"))
    # No token is a 401: at a terminal the CLI tries OAuth, and reports the registration ragdown
    # refused, ragdown's reason included; told not to try OAuth, it reports the 401's own message.
    at_terminal = _error_message(_run_inspector(inspector, url, token=None, terminal=True))
    assert at_terminal.startswith("Dynamic Client Registration rejected (HTTP 404)")
    assert "ragdown does not use OAuth" in at_terminal
    assert "RAGDOWN_TOKEN" in at_terminal
    stored_only = _error_message(_run_inspector(inspector, url, "--stored-auth-only", token=None))
    assert "Unauthorized: send Authorization: Bearer <token>" in stored_only
