"""`ragdown stdio` answers its client's first message before the MCP SDK is imported
(serving/stdio_handshake.py, docs/design.md#start-up): the answer is the one the SDK gives, for every
protocol version it handshakes in and for a `server/discover`, the SDK's own answer is never written
twice, and anything else is left to the SDK."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from ragdown import __version__
from ragdown.serving.stdio_handshake import (
    HANDSHAKE_VERSIONS,
    MODERN_VERSIONS,
    early_answer,
    folder_instructions,
)
from tests.conftest import run_cli

CLIENT = {"name": "probe", "version": "1"}
# The server `ragdown stdio` builds, given its first line with nothing answered early: the SDK's answer.
SDK_ONLY = """
import sys, anyio
from ragdown.folders.scope import Scope
from ragdown.serving.tool_server import run_stdio_after
from ragdown.serving.tools import Endpoint, build_server
endpoint = Endpoint(engine=None, scope=Scope(), name="ragdown-docs", title="docs", local=True)
anyio.run(run_stdio_after, build_server(endpoint), sys.argv[1].encode(), None)
"""


def initialize(version: str, request_id: int | str = 0) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def discover(version: str, request_id: int | str = 1) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "server/discover", "params": {"_meta": meta}}


def answers(messages: list[dict[str, Any]], docs: Path, data_dir: Path, env: dict[str, str]) -> list[Any]:
    """The JSON lines `ragdown stdio` writes for `messages`, then stdin closes."""
    text = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run(
        [sys.executable, "-m", "ragdown.cli", "stdio", str(docs), "--data-dir", str(data_dir)],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_the_versions_are_the_sdks() -> None:
    assert HANDSHAKE_PROTOCOL_VERSIONS == HANDSHAKE_VERSIONS
    assert MODERN_PROTOCOL_VERSIONS == MODERN_VERSIONS


def test_only_a_well_formed_first_message_is_answered() -> None:
    def answer(message: object) -> object:
        found = early_answer(json.dumps(message).encode(), name="n", title="t", version="1", instructions="i")
        return found and found[1]

    assert answer(initialize("2025-06-18", 7)) == 7
    assert answer(discover("2026-07-28", "x")) == "x"
    assert answer(initialize("2099-01-01")) is None  # the SDK negotiates another version
    assert answer(initialize("2026-07-28")) is None
    assert answer(discover("2025-06-18")) is None
    assert answer({**initialize("2025-06-18"), "id": True}) is None
    assert answer({**initialize("2025-06-18"), "jsonrpc": "1.0"}) is None
    assert answer({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}) is None
    assert answer([initialize("2025-06-18")]) is None
    assert early_answer(b"not json\n", name="n", title="t", version="1", instructions="i") is None


@pytest.mark.slow
def test_the_early_answer_is_the_sdks_and_is_written_once(tmp_path: Path) -> None:
    docs, data_dir = tmp_path / "docs", tmp_path / "data"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\nThe alpha runbook.", encoding="utf-8")
    assert run_cli("index", str(docs), "--data-dir", str(data_dir), "--embedder", "hash").returncode == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    info = {"name": "ragdown-docs", "title": "docs", "version": __version__}
    for version in HANDSHAKE_VERSIONS:
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        out = answers([initialize(version, 1), initialized, listing], docs, data_dir, env)
        assert [m["id"] for m in out] == [1, 2]  # the SDK's own answer to initialize is not repeated
        assert out[0]["result"]["protocolVersion"] == version
        assert out[0]["result"]["serverInfo"] == info
        assert out[0]["result"]["instructions"] == folder_instructions("docs")
        assert any(tool["name"] == "ragdown_recall" for tool in out[1]["result"]["tools"])
    for version in MODERN_VERSIONS:
        out = answers([discover(version, 5)], docs, data_dir, env)
        assert [m["id"] for m in out] == [5]
        assert out[0]["result"]["supportedVersions"] == list(MODERN_VERSIONS)
    # Each early answer equals the SDK's own answer to the same first message.
    firsts = [*(initialize(v, 1) for v in HANDSHAKE_VERSIONS), *(discover(v, 1) for v in MODERN_VERSIONS)]
    for first in firsts:
        line = json.dumps(first) + "\n"
        sdk = subprocess.run(
            [sys.executable, "-c", SDK_ONLY, line], capture_output=True, text=True, timeout=120, env=env
        )
        assert sdk.returncode == 0, sdk.stderr
        early = early_answer(
            line.encode(),
            name="ragdown-docs",
            title="docs",
            version=__version__,
            instructions=folder_instructions("docs"),
        )
        assert early is not None
        assert json.loads(early[0]) == json.loads(sdk.stdout)
