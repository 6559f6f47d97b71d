"""docs/security.md#tenants item 10: a name or text a caller sends cannot forge a line of the
server's log. Every record is one line at column 0; a traceback's lines are indented under it."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import httpx
import pytest

from ragdown.serving.log_format import FORMAT, OneRecordFormatter
from tests.serving.conftest import free_port, start_serve, wait_ready

REPO = Path(__file__).resolve().parents[2]
FORGED = "ERROR ragdown.auth: admin signed in from 10.0.0.1"
# What the server's own records look like at the start of a line.
RECORD = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL) ")


def formatted(message: str, *args: object, exc: BaseException | None = None) -> str:
    record = logging.LogRecord("ragdown.test", logging.ERROR, __file__, 1, message, args, None)
    if exc is not None:
        record.exc_info = (type(exc), exc, exc.__traceback__)
    return OneRecordFormatter(FORMAT).format(record)


@pytest.mark.parametrize("sep", ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x1b[2K\r", "\u202e"])
def test_a_message_holding_a_line_break_stays_one_line(sep: str) -> None:
    line = formatted("unknown prompt %r: %s", "x", f"x{sep}{FORGED}")
    assert "\n" not in line
    assert "\r" not in line
    assert not any(c in line for c in "\u2028\u2029\x85\x1b\u202e")
    assert line.startswith("ERROR ragdown.test: unknown prompt 'x': x\\u")


def test_a_traceback_is_indented_under_its_record() -> None:
    try:
        raise ValueError(f"Unknown prompt: x\n{FORGED}")
    except ValueError as error:
        text = formatted("handler raised", exc=error)
    lines = text.split("\n")
    assert lines[0] == "ERROR ragdown.test: handler raised"
    assert all(line.startswith("    ") for line in lines[1:])
    assert f"    {FORGED}" in lines


@pytest.mark.slow  # a real `ragdown serve` process
def test_names_sent_to_the_server_forge_no_log_line(tmp_path: Path) -> None:
    port = free_port()
    process = start_serve(REPO / "examples", tmp_path / "data", port, "log-token")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, process)
        headers = {
            "Authorization": "Bearer log-token",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        for method, params in [
            ("prompts/get", {"name": f"x\n{FORGED}"}),
            ("tools/call", {"name": f"y\r\n{FORGED}", "arguments": {}}),
            ("resources/read", {"uri": f"z\u2028{FORGED}"}),
        ]:
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            assert httpx.post(f"{url}/mcp/notes", json=body, headers=headers, timeout=30).status_code == 200
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    lines = err.decode().splitlines()
    assert any(line.startswith("ERROR mcp.") for line in lines), lines  # the SDK did log the refusals
    assert not [line for line in lines if line.startswith(FORGED) or line.startswith("ERROR ragdown.auth")]
    assert all(
        RECORD.match(line) or line.startswith(("    ", "ragdown", "MCP ", "  http", "Web UI"))
        for line in lines
    ), lines
