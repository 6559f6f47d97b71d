"""docs/security.md#tenants item 6: one caller's huge queries cannot flush the query log. A recall
query is at most 4,000 characters; what the log keeps of any query or prompt is at most 500, so a
burst of 990 KB calls leaves everyone's real entries in place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragdown.search.query_log import MAX_BYTES, MAX_LOGGED_QUERY, logged_query
from ragdown.settings import ServerSettings
from tests.serving.conftest import TOKEN, Served, call_tool, serve

HUGE = "zanzibar " * 110_000  # 990,000 characters


def test_a_logged_query_is_cut_and_says_how_long_it_was() -> None:
    assert logged_query("short") == {"query": "short"}
    entry = logged_query(HUGE)
    assert entry == {"query": HUGE[:MAX_LOGGED_QUERY] + "…", "query_chars": len(HUGE)}


@pytest.fixture
def logged(tmp_path: Path) -> Iterator[Served]:
    docs = tmp_path / "docs"
    for folder in ("notes", "teamb"):
        (docs / folder).mkdir(parents=True)
        (docs / folder / ".ragdown.json").write_text('{"mcp": true}')
        (docs / folder / "plan.md").write_text("# Plan\n\nThe zanzibar migration plan.\n")
    settings = ServerSettings(token=TOKEN, watch=False, query_log=True, query_log_prompts=True)
    yield from serve(docs, tmp_path / "data", settings)


@pytest.mark.anyio
async def test_a_burst_of_huge_queries_rotates_no_real_entry_out(logged: Served) -> None:
    await call_tool(f"{logged.url}/mcp/teamb", TOKEN, "ragdown_recall", {"query": "team b's real question"})
    refused = await call_tool(f"{logged.url}/mcp/notes", TOKEN, "ragdown_recall", {"query": HUGE})
    assert refused == "ragdown_recall: query must be at most 4000 characters, got 990,000"
    for _ in range(22):  # the hook takes any prompt, searching its start
        await call_tool(f"{logged.url}/mcp/notes", TOKEN, "ragdown_context", {"prompt": HUGE})
    log = logged.engine.query_log
    assert log is not None
    assert not log.rotated_path.exists()
    entries = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert entries[0]["query"] == "team b's real question"
    assert [e["query_chars"] for e in entries[1:]] == [len(HUGE.strip())] * 22
    assert log.path.stat().st_size < MAX_BYTES / 100
