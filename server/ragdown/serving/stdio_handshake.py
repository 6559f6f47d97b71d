"""A stdio client's `initialize`, answered before the MCP SDK is imported (docs/design.md#start-up).

Importing the SDK costs ~0.7 s (its protocol types are hundreds of pydantic models), most of a
`ragdown stdio` start. The answer to `initialize` depends on nothing the SDK computes: the protocol
version the client asked for when the SDK speaks it, the server's fixed capabilities, its name, title,
version and instructions. So the first line on stdin is read here; when it is an `initialize` of a
version this release's SDK handshakes in (or a `server/discover`, the first message of a client of the
newer, stateless protocol), the answer is written at once. The SDK is then given the
same request first, as if nothing had happened, and its own answer to it is dropped on the way out
(`tests/serving/test_stdio_handshake.py` holds the two answers equal for every version). Anything
else (another first message, a version the SDK must negotiate) is left entirely to the SDK.

Nothing here imports the SDK.
"""

from __future__ import annotations

import json
import os
from typing import Any

# mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS of the pinned SDK (a test holds them equal).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# ... and its MODERN_PROTOCOL_VERSIONS, whose clients open with `server/discover`.
MODERN_VERSIONS = ("2026-07-28",)
# What every ragdown MCP server declares in each era (a test holds them equal to the SDK's answers).
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
MODERN_CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
    "tools": {"listChanged": True},
}
_MAX_LINE = 1 << 20  # an initialize is a few hundred bytes; past this, the SDK reads the rest


def folder_instructions(title: str) -> str:
    """What an MCP endpoint tells the agent of its folder (`serverInfo` instructions)."""
    return (
        f'Search the "{title}" folder of the user\'s Markdown documents. Call ragdown_recall '
        "before answering a question the documents might cover (notes, runbooks, decisions, "
        "how-tos), then ragdown_read_doc to read around a hit before relying on it."
    )


def read_first_line(fd: int = 0) -> bytes:
    """The first line on `fd`, read a byte at a time so that nothing after it leaves the pipe: the
    SDK reads the rest from the same descriptor."""
    line = bytearray()
    while len(line) < _MAX_LINE:
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
        if byte == b"\n":
            break
    return bytes(line)


def early_answer(
    line: bytes, *, name: str, title: str, version: str, instructions: str
) -> tuple[bytes, object] | None:
    """The answer to `line` (a JSON line) and its request id, when it is an `initialize` of a
    handshake version or a `server/discover` at a modern version, answered as the SDK would; None
    for anything else."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int) or not isinstance(params, dict):
        return None
    info = {"name": name, "title": title, "version": version}
    result: dict[str, Any]
    if message.get("method") == "initialize" and params.get("protocolVersion") in HANDSHAKE_VERSIONS:
        result = {
            "capabilities": CAPABILITIES,
            "instructions": instructions,
            "protocolVersion": params["protocolVersion"],
            "serverInfo": info,
        }
    elif message.get("method") == "server/discover" and _asked_modern(params):
        result = {
            "cacheScope": "private",
            "capabilities": MODERN_CAPABILITIES,
            "instructions": instructions,
            "resultType": "complete",
            "supportedVersions": list(MODERN_VERSIONS),
            "ttlMs": 0,
            "_meta": {"io.modelcontextprotocol/serverInfo": info},
        }
    else:
        return None
    answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return (json.dumps(answer, separators=(",", ":"), ensure_ascii=False) + "\n").encode(), request_id


def _asked_modern(params: dict[str, Any]) -> bool:
    meta = params.get("_meta")
    return isinstance(meta, dict) and meta.get("io.modelcontextprotocol/protocolVersion") in MODERN_VERSIONS
