"""HTTP around MCP: DNS-rebinding protection with an ingress host, the body limit, keep-alive, and
`serve` refusing to start unprotected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.serving.conftest import Served

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


def test_a_foreign_host_is_refused_unless_allowed(make_served: Callable[..., Served]) -> None:
    served: Served = make_served()
    with served.http() as http:
        refused = http.post("/mcp/ops", json=LIST, headers={**HEADERS, "Host": "docs.example.com"})
        assert refused.status_code == 421
        assert http.post("/mcp/ops", json=LIST, headers=HEADERS).status_code == 200
    ingress: Served = make_served(allowed_hosts="docs.example.com")
    with ingress.http() as http:
        response = http.post("/mcp/ops", json=LIST, headers={**HEADERS, "Host": "docs.example.com"})
        assert response.status_code == 200
        assert "ragdown_recall" in response.text


def test_a_body_over_one_mebibyte_is_refused(served: Served) -> None:
    big = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ragdown_recall", "arguments": {"query": "x" * (1024 * 1024 + 10)}},
    }
    with served.http() as http:
        assert http.post("/mcp/ops", json=big, headers=HEADERS).status_code == 413


def test_responses_say_how_long_a_connection_is_kept(served: Served) -> None:
    with served.http(token=None) as http:
        assert http.get("/api/status").headers["keep-alive"] == "timeout=75"


@pytest.mark.slow  # `ragdown serve` processes
def test_serve_refuses_to_start_without_a_token_or_a_trusted_network(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    env = {"RAGDOWN_DOCS_DIR": str(tmp_path / "docs"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = run_cli("serve", env=env, timeout=120)
    assert result.returncode == 2
    assert "RAGDOWN_TOKEN" in result.stderr
    missing = run_cli(
        "serve", env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "RAGDOWN_TOKEN": "x"}, timeout=120
    )
    assert missing.returncode == 2
    assert "RAGDOWN_DOCS_DIR" in missing.stderr


@pytest.mark.slow  # `ragdown serve` processes
def test_serve_refuses_tokens_that_open_two_doors(tmp_path: Path) -> None:
    """One role, one token (docs/security.md): serve refuses a token reused across roles, and an
    internal listener or a network primary without the internal token."""
    (tmp_path / "docs").mkdir()
    base = {"RAGDOWN_DOCS_DIR": str(tmp_path / "docs"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    cases = [
        ({"RAGDOWN_TOKEN": "same", "RAGDOWN_ADMIN_TOKEN": "same"}, "RAGDOWN_TOKEN and RAGDOWN_ADMIN_TOKEN"),
        ({"RAGDOWN_TOKEN": "a", "RAGDOWN_INTERNAL_TOKEN": "a"}, "RAGDOWN_TOKEN and RAGDOWN_INTERNAL_TOKEN"),
        ({"RAGDOWN_TOKEN": "a", "RAGDOWN_INTERNAL_PORT": "3001"}, "set RAGDOWN_INTERNAL_TOKEN too"),
        (
            {"RAGDOWN_TOKEN": "a", "RAGDOWN_ROLE": "reader", "RAGDOWN_PRIMARY_URL": "http://indexer:3001"},
            "set RAGDOWN_INTERNAL_TOKEN",
        ),
    ]
    for env, message in cases:
        result = run_cli("serve", env={**base, **env}, timeout=120)
        assert result.returncode == 2, env
        assert message in result.stderr, result.stderr
        assert "same" not in result.stderr.replace("are the same", "")  # a token is never printed


def test_serve_refuses_a_notes_dir_outside_the_folder_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    env = {
        "RAGDOWN_DOCS_DIR": str(tmp_path / "docs"),
        "RAGDOWN_TOKEN": "t",
        "RAGDOWN_NOTES_DIR": "../elsewhere",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    result = run_cli("serve", env=env, timeout=120)
    assert result.returncode == 2
    assert "RAGDOWN_NOTES_DIR must be a path inside the folder: ../elsewhere" in result.stderr
