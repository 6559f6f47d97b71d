"""`ragdown serve` as a real process on the bundled examples, the way the README starts it."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.serving.conftest import free_port, start_serve, wait_ready

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # a real `ragdown serve` process


async def test_serve_answers_mcp_on_the_examples(tmp_path: Path) -> None:
    port = free_port()
    process = start_serve(REPO / "examples", tmp_path / "data", port, "example-token")
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process)
        headers = {"Authorization": "Bearer example-token"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{url}/mcp/notes", http_client=http)) as client,
        ):
            assert '"Example notes"' in (client.instructions or "")
            result = await client.call_tool(
                "ragdown_recall", {"query": "restore a postgres backup", "top_k": 3}
            )
            text = "".join(getattr(c, "text", "") for c in result.content)
            assert "ops/postgres-backups.md" in text
            # Every wikilink of the examples resolves: each target has its backlinks.
            for target, sources in {
                "ops/postgres-backups.md": {"ops/on-call.md", "README.md"},
                "ops/data-checks.md": {"ops/postgres-backups.md"},
                "ops/on-call.md": {"README.md"},
                "projects/search-revamp.md": {"projects/search-v1.md"},
            }.items():
                result = await client.call_tool("ragdown_backlinks", {"path": target})
                text = "".join(getattr(c, "text", "") for c in result.content)
                assert not result.is_error, text
                assert all(source in text for source in sources), (target, text)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert process.returncode is not None
    said = err.decode()
    # It says what it serves and when the first sync is done (docs/tools.md#endpoints).
    assert f"http://127.0.0.1:{port}/mcp/notes  Example notes" in said
    assert "ready: 7 document(s)" in said
    assert "warning" not in said
    assert "Folders without MCP" not in said
