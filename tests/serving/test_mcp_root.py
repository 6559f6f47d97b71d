"""Root `/mcp` (RAGDOWN_ROOT_MCP): `folder` arguments, `[folder]` prefixes, ragdown_folders and
ragdown_create_folder; human-only folders stay invisible."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

import pytest

from tests.serving.conftest import Served, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(make_served: Callable[..., Served]) -> Served:
    return make_served(root_mcp=True)


async def test_folders_and_prefixed_searches(root: Served) -> None:
    async with root.mcp("/mcp") as client:
        assert client.server_info is not None
        assert client.server_info.name == "ragdown"
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "folder" in tools["ragdown_recall"].input_schema["properties"]
        assert "folder" not in tools["ragdown_reindex"].input_schema["properties"]
        assert text_of(await client.call_tool("ragdown_folders", {})) == "ops — Ops runbooks (3 documents)"
        found = text_of(await client.call_tool("ragdown_recall", {"query": "redis", "top_k": 5}))
        assert found.startswith("[1] [ops] ")
        assert "diary" not in found  # the human-only folder is never searched
        data = json.loads(
            text_of(await client.call_tool("ragdown_recall", {"query": "pg_restore", "format": "json"}))
        )
        assert data["hits"][0]["folder"] == "ops"
        assert data["hits"][0]["path"] == "backups.md"
        listing = text_of(await client.call_tool("ragdown_list", {}))
        assert listing.splitlines()[0] == "documents: 3"
        assert listing.splitlines()[1].startswith("[ops] backups.md — Backups")


async def test_document_tools_need_a_folder_with_mcp_on(root: Served) -> None:
    async with root.mcp("/mcp") as client:
        missing = await client.call_tool("ragdown_read_doc", {"path": "backups.md"})
        assert missing.is_error
        assert text_of(missing) == "folder is required: one of ops"
        read = text_of(await client.call_tool("ragdown_read_doc", {"path": "backups.md", "folder": "ops"}))
        assert read.startswith("backups.md:1-10 of 10 (hash ")
        private = await client.call_tool("ragdown_read_doc", {"path": "diary.md", "folder": "private"})
        nowhere = await client.call_tool("ragdown_read_doc", {"path": "diary.md", "folder": "nowhere"})
        assert text_of(private) == 'no folder with MCP turned on named "private"'
        assert text_of(nowhere) == 'no folder with MCP turned on named "nowhere"'


async def test_create_folder(root: Served) -> None:
    async with root.mcp("/mcp") as client:
        made = text_of(
            await client.call_tool("ragdown_create_folder", {"name": "Team notes", "title": "Team"})
        )
        assert made == "created folder Team notes (/mcp/Team notes)"
        config = json.loads((root.docs / "Team notes" / ".ragdown.json").read_text(encoding="utf-8"))
        assert config == {"title": "Team", "mcp": True, "created_by": "ragdown_create_folder"}
        again = await client.call_tool("ragdown_create_folder", {"name": "Team notes"})
        assert text_of(again) == "already exists: Team notes"
        for bad in (".hidden", "-dash", "a/b", "..", "node_modules"):
            refused = await client.call_tool("ragdown_create_folder", {"name": bad})
            assert refused.is_error
            assert text_of(refused).startswith(f'not a valid folder name: "{bad}"')
        saved = text_of(
            await client.call_tool(
                "ragdown_remember", {"title": "Kickoff", "content": "We met.", "folder": "Team notes"}
            )
        )
        assert saved.startswith("saved notes/")
        folders = text_of(await client.call_tool("ragdown_folders", {}))
        assert "Team notes — Team (1 documents)" in folders


async def test_bare_mcp_stays_404_without_the_setting(served: Served) -> None:
    with served.http() as http:
        assert http.post("/mcp", json={}).status_code == 404


async def test_searches_over_every_folder_leave_out_those_that_turned_the_tool_off(root: Served) -> None:
    """A folder's `disabled_tools` hold on root /mcp even when no `folder` is named."""
    team = root.docs / "team"
    team.mkdir()
    (team / ".ragdown.json").write_text(
        json.dumps({"mcp": True, "disabled_tools": ["ragdown_recall", "ragdown_list", "ragdown_context"]}),
        encoding="utf-8",
    )
    (team / "redis-plan.md").write_text("# Redis plan\n\nRedis eviction for the team.\n", encoding="utf-8")
    root.engine.sync()
    async with root.mcp("/mcp") as client:
        found = text_of(await client.call_tool("ragdown_recall", {"query": "redis eviction", "top_k": 10}))
        listed = text_of(await client.call_tool("ragdown_list", {}))
        hook = text_of(
            await client.call_tool("ragdown_context", {"prompt": "redis eviction plan", "top_k": 10})
        )
        stats = json.loads(text_of(await client.call_tool("ragdown_stats", {"include_files": True})))
    assert "[ops]" in found
    assert "[team]" not in found
    assert "[team]" not in listed
    assert "redis-plan" not in hook
    assert any(f["path"].startswith("team/") for f in stats["file_list"])  # stats is still on there


async def test_a_recent_listing_is_sorted_across_folders(root: Served) -> None:
    other = root.docs / "notes"
    other.mkdir()
    (other / ".ragdown.json").write_text(json.dumps({"mcp": True}), encoding="utf-8")
    newest = other / "newest.md"
    newest.write_text("# Newest\n", encoding="utf-8")
    os.utime(newest, (time.time() + 3600, time.time() + 3600))
    root.engine.sync()
    async with root.mcp("/mcp") as client:
        listed = text_of(await client.call_tool("ragdown_list", {"sort": "recent", "limit": 1}))
    assert listed.splitlines()[1].startswith("[notes] newest.md — Newest")
