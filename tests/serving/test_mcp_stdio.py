"""`ragdown stdio` as a real subprocess, driven by the official MCP client over its stdin/stdout."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from ragdown.serving.deferred import OPEN_INDEX_BY_S
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


def _maps_lancedb(data_dir: Path) -> bool | None:
    """Whether the `ragdown stdio` process serving `data_dir` has LanceDB's library mapped (None: no
    such process)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            if b"stdio" not in command or str(data_dir).encode() not in command:
                continue
            return "_lancedb" in (entry / "maps").read_text()
        except OSError:
            continue
    return None


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the server's mappings in /proc")
async def test_an_unchanged_folder_is_searched_from_the_snapshot_until_it_changes(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    """A session on a folder that is as its index has it never opens LanceDB for searches; the first
    change it sees opens the index, which syncs the change (docs/design.md#start-up)."""
    write("ops/backups.md", "# Backups\n\n## Restore\n\nRun pg_restore into a fresh database.\n")
    write("ops/rota.md", "# Rota\n\nThe on-call rota changes on Mondays.\n")
    indexed = run_cli("index", str(docs), "--data-dir", str(data_dir), "--embedder", "hash")
    assert indexed.returncode == 0, indexed.stderr
    async with Client(params(docs, data_dir, RAGDOWN_WATCH="true")) as client:
        found = text_of(await client.call_tool("ragdown_recall", {"query": "restore a database"}))
        assert found.startswith("[1] ops/backups.md:")
        # Past the moment the index used to open whatever the searches did (OPEN_INDEX_BY_S).
        await anyio.sleep(OPEN_INDEX_BY_S + 2)
        for query in ("rota Mondays", "pg_restore"):
            await client.call_tool("ragdown_recall", {"query": query})
        await client.call_tool("ragdown_context", {"prompt": "how do I restore the database?"})
        assert "ragdown_write" in {tool.name for tool in (await client.list_tools()).tools}
        # Lists and reads of documents come from the snapshot as well.
        listed = text_of(await client.call_tool("ragdown_list", {}))
        assert "ops/backups.md" in listed
        assert "ops/rota.md" in listed
        read = text_of(await client.call_tool("ragdown_read_doc", {"path": "ops/rota.md"}))
        assert "changes on Mondays" in read
        assert _maps_lancedb(data_dir) is False
        write("ops/vendor.md", "# Vendor\n\nThe tape vendor answers within a day.\n")
        with anyio.fail_after(60):
            while True:
                found = text_of(
                    await client.call_tool("ragdown_recall", {"query": "tape vendor", "top_k": 1})
                )
                if found.startswith("[1] ops/vendor.md:"):
                    break
                await anyio.sleep(0.2)
        assert _maps_lancedb(data_dir) is True
    # An edit made while no session ran: the next session's first search already sees it (the
    # snapshot, which predates the edit, answers nothing).
    write("ops/rota.md", "# Rota\n\nThe on-call rota changes on Thursdays at noon.\n")
    async with Client(params(docs, data_dir, RAGDOWN_WATCH="true")) as client:
        asked = {"query": "when does the rota change", "top_k": 1}
        assert "Thursdays at noon" in text_of(await client.call_tool("ragdown_recall", asked))
