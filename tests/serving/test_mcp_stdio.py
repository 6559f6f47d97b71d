"""`ragdown stdio` as a real subprocess, driven by the official MCP client over its stdin/stdout."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import WriteDoc, run_cli
from tests.serving.conftest import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def params(docs: Path, data_dir: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragdown.cli", "stdio", str(docs), "--data-dir", str(data_dir), "--embedder", "hash"],
        env={**os.environ, "RAGDOWN_WATCH": "false", **env},
    )


async def test_stdio_serves_the_folder_and_writes_are_indexed(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    write("ops/backups.md", "# Backups\n\n## Restore\n\nRun pg_restore into a fresh database.\n")
    (docs / ".ragdown.json").write_text(json.dumps({"title": "My notes"}), encoding="utf-8")
    async with Client(params(docs, data_dir)) as client:
        assert client.server_info is not None
        assert client.server_info.name == f"ragdown-{docs.name}"
        assert '"My notes"' in (client.instructions or "")
        found = text_of(await client.call_tool("ragdown_recall", {"query": "restore a database"}))
        assert found.startswith("[1] ops/backups.md:")  # the first sync finished before the answer
        saved = text_of(
            await client.call_tool(
                "ragdown_remember", {"title": "Drill", "content": "Quarterly restore drill."}
            )
        )
        assert saved.startswith("saved notes/")
        again = text_of(
            await client.call_tool("ragdown_recall", {"query": "quarterly restore drill", "top_k": 1})
        )
        assert again.startswith("[1] notes/")
        stats = json.loads(text_of(await client.call_tool("ragdown_stats", {})))
        assert (stats["files"], stats["scope"]) == (2, None)


async def test_a_fresh_index_lists_and_reads_after_its_first_sync(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    """The first call of a new client (a one-shot inspector) must not say "No documents." of a
    folder full of them because the first sync had not finished."""
    for n in range(30):
        write(f"ops/doc-{n}.md", f"# Doc {n}\n\nBody of document {n}.\n")
    async with Client(params(docs, data_dir)) as client:
        listed = text_of(await client.call_tool("ragdown_list", {}))
    assert listed.startswith("documents: 30\n")
    async with Client(params(docs, tmp := data_dir.parent / "fresh-data")) as client:
        read = text_of(await client.call_tool("ragdown_read_doc", {"path": "doc-7"}))  # a wikilink target
        stats = json.loads(text_of(await client.call_tool("ragdown_stats", {})))
    assert read.startswith("ops/doc-7.md:1-3 of 3 (hash ")
    assert stats["files"] == 30
    assert stats["docs_dir"] == str(docs.resolve())  # stdio: the local user's own paths
    assert stats["data_dir"] == str(tmp.resolve())


async def test_stdio_read_only_hides_the_write_tools(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("a.md", "# A\n\nalpha")
    async with Client(params(docs, data_dir, RAGDOWN_READ_ONLY="true")) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names == {
        "ragdown_context",
        "ragdown_recall",
        "ragdown_read_doc",
        "ragdown_list",
        "ragdown_stats",
        "ragdown_backlinks",
    }


def test_stdio_refuses_an_unknown_embedder_before_connecting(docs: Path, data_dir: Path) -> None:
    result = run_cli("stdio", str(docs), "--data-dir", str(data_dir), "--embedder", "nope", timeout=120)
    assert result.returncode == 2
    assert "--embedder must be minilm" in result.stderr  # the flag it came from, not the variable
    assert result.stdout == ""  # nothing on the protocol stream
    from_env = run_cli(
        "stdio", str(docs), "--data-dir", str(data_dir), env={**os.environ, "RAGDOWN_EMBEDDER": "nope"}
    )
    assert from_env.returncode == 2
    assert (
        'RAGDOWN_EMBEDDER must be minilm, granite-small, bge-small, hash or openai:<model>, got "nope"'
        in (from_env.stderr)
    )
