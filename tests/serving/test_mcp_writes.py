"""The write tools over real HTTP: base_hash guards, all-or-nothing edits, moves that rewrite links,
and every change indexed before the tool answers."""

from __future__ import annotations

import json
import os

import pytest
from mcp import Client

from tests.serving.conftest import Served, text_of

pytestmark = pytest.mark.anyio


async def hash_of(client: Client, path: str) -> str:
    header = text_of(await client.call_tool("ragdown_read_doc", {"path": path})).splitlines()[0]
    return header.split("(hash ")[1][:12]


async def test_write_creates_then_needs_the_hash_to_replace(served: Served) -> None:
    async with served.mcp() as client:
        created = text_of(
            await client.call_tool("ragdown_write", {"path": "new/plan.md", "text": "# Plan\n\nShip it."})
        )
        assert created.startswith("created new/plan.md (hash ")
        assert (
            (served.docs / "ops/new/plan.md")
            .read_text(encoding="utf-8")
            .startswith("---\ncreated_by: ragdown_write (agent token)\n")
        )
        hits = json.loads(
            text_of(await client.call_tool("ragdown_recall", {"query": "ship it plan", "format": "json"}))
        )
        assert hits["hits"][0]["path"] == "new/plan.md"  # indexed before the tool answered
        refused = await client.call_tool("ragdown_write", {"path": "new/plan.md", "text": "# Other"})
        assert refused.is_error
        assert "pass the hash ragdown_read_doc returned as base_hash" in text_of(refused)
        short = await client.call_tool(
            "ragdown_write", {"path": "new/plan.md", "text": "# X", "base_hash": "abcdef"}
        )
        assert short.is_error
        good = await hash_of(client, "new/plan.md")
        wrote = text_of(
            await client.call_tool(
                "ragdown_write", {"path": "new/plan.md", "text": "# Plan v2", "base_hash": good}
            )
        )
        assert wrote.startswith("wrote new/plan.md (hash ")
        stale = await client.call_tool(
            "ragdown_write", {"path": "new/plan.md", "text": "# v3", "base_hash": good}
        )
        assert stale.is_error
        assert "changed on disk since it was opened" in text_of(stale)


async def test_edit_is_all_or_nothing_and_offers_the_nearest_passage(served: Served) -> None:
    before = (served.docs / "ops/backups.md").read_bytes()
    async with served.mcp() as client:
        failed = await client.call_tool(
            "ragdown_edit",
            {
                "path": "backups.md",
                "edits": [
                    {"old_text": "fresh database", "new_text": "new database"},
                    {"old_text": "Then  compare row counts.", "new_text": "x"},
                ],
            },
        )
        assert failed.is_error
        assert "edit 2 of 2: " in text_of(failed)
        assert "Then compare row counts." in text_of(failed)
        assert (served.docs / "ops/backups.md").read_bytes() == before
        done = text_of(
            await client.call_tool(
                "ragdown_edit",
                {
                    "path": "backups.md",
                    "edits": [{"old_text": "fresh database", "new_text": "scratch database"}],
                },
            )
        )
        assert done.startswith("edited backups.md (replaced 1, hash ")
        assert "scratch database" in (served.docs / "ops/backups.md").read_text(encoding="utf-8")


async def test_remember_move_backlinks_and_delete(served: Served) -> None:
    async with served.mcp() as client:
        saved = text_of(
            await client.call_tool(
                "ragdown_remember",
                {"title": "Restore drill", "content": "Drill went fine.", "session_id": "s1"},
            )
        )
        assert saved.startswith("saved notes/")
        assert saved.endswith("-restore-drill.md")
        links = json.loads(text_of(await client.call_tool("ragdown_backlinks", {"path": "backups.md"})))
        assert [b["path"] for b in links["backlinks"]] == ["db/vacuum.md"]
        moved = text_of(
            await client.call_tool("ragdown_move", {"from": "backups.md", "to": "db/backups-and-restores.md"})
        )
        assert moved == "moved backups.md to db/backups-and-restores.md; links updated in db/vacuum.md"
        assert "[[backups-and-restores]]" in (served.docs / "ops/db/vacuum.md").read_text(encoding="utf-8")
        onto = await client.call_tool("ragdown_move", {"from": "cache.md", "to": "db/vacuum.md"})
        assert onto.is_error
        assert "already exists: db/vacuum.md" in text_of(onto)
        escape = await client.call_tool("ragdown_write", {"path": "../private/x.md", "text": "x"})
        assert escape.is_error
        assert "outside the docs folder" in text_of(escape)
        deleted = text_of(await client.call_tool("ragdown_delete", {"path": "cache.md"}))
        assert deleted == "deleted cache.md"
        listing = text_of(await client.call_tool("ragdown_list", {}))
        assert "cache.md" not in listing
        assert "written by an agent with ragdown_remember (agent token), session s1" in listing


async def test_an_ambiguous_edit_names_the_count_and_writes_nothing(served: Served) -> None:
    async with served.mcp() as client:
        text = "# S\n\nsss sss\n"
        await client.call_tool("ragdown_write", {"path": "s.md", "text": text})
        before = (served.docs / "ops/s.md").read_bytes()
        result = await client.call_tool(
            "ragdown_edit", {"path": "s.md", "edits": [{"old_text": "s", "new_text": "z"}]}
        )
        assert result.is_error
        assert "6 times" in text_of(result)
        assert (served.docs / "ops/s.md").read_bytes() == before
        done = text_of(
            await client.call_tool(
                "ragdown_edit",
                {"path": "s.md", "edits": [{"old_text": "s", "new_text": "z", "replace_all": True}]},
            )
        )
        assert done.startswith("edited s.md (replaced 6, hash ")


async def test_append_under_a_heading_and_superseded_reads(served: Served) -> None:
    async with served.mcp() as client:
        appended = text_of(
            await client.call_tool(
                "ragdown_write",
                {"path": "backups.md", "text": "Check the WAL too.", "append": True, "heading": "Restore"},
            )
        )
        assert appended.startswith("wrote backups.md (hash ")
        assert (
            (served.docs / "ops/backups.md")
            .read_text(encoding="utf-8")
            .endswith("Then compare row counts.\n\nCheck the WAL too.\n")
        )
        saved = text_of(
            await client.call_tool(
                "ragdown_remember",
                {
                    "title": "Backups v2",
                    "content": "New way.",
                    "name": "backups-v2",
                    "supersedes": ["backups.md"],
                },
            )
        )
        assert saved == "saved notes/backups-v2.md (supersedes backups.md)"
        header = text_of(await client.call_tool("ragdown_read_doc", {"path": "backups.md"})).splitlines()[0]
        assert header.endswith(", superseded by notes/backups-v2.md)")
        found = json.loads(
            text_of(
                await client.call_tool(
                    "ragdown_recall", {"query": "pg_restore fresh database", "format": "json", "top_k": 10}
                )
            )
        )
        assert all(h["path"] != "backups.md" for h in found["hits"])  # superseded: hidden from search
        agent = json.loads(
            text_of(
                await client.call_tool(
                    "ragdown_recall", {"query": "new way", "format": "json", "written_by": "agent"}
                )
            )
        )
        assert agent["hits"][0]["created_by"] == "ragdown_remember (agent token)"
        mine = text_of(await client.call_tool("ragdown_list", {"written_by": "agent"}))
        assert mine.splitlines()[0] == "documents: 1"


async def test_reindex_and_recursive_delete(served: Served) -> None:
    async with served.mcp() as client:
        report = json.loads(text_of(await client.call_tool("ragdown_reindex", {})))
        assert set(report) >= {"added", "updated", "removed", "unchanged", "chunks", "ms", "failed"}
        refused = await client.call_tool("ragdown_delete", {"path": "db"})
        assert refused.is_error
        assert "is not empty: pass recursive: true" in text_of(refused)
        assert (
            text_of(await client.call_tool("ragdown_delete", {"path": "db", "recursive": True}))
            == "deleted db"
        )
        assert not (served.docs / "ops/db").exists()
        assert "vacuum" not in text_of(await client.call_tool("ragdown_list", {}))


SAID = "ragdown_write: the server could not read or write a file"


@pytest.mark.parametrize(
    ("code", "reason", "said"),
    [
        (28, "No space left on device", f"{SAID} (No space left on device)"),
        # A folder the server's user may not write (a host folder mounted into the image): say who.
        (
            13,
            "Permission denied",
            f"{SAID} (Permission denied); it runs as user id {os.geteuid()}: give that user access to "
            "the folder's files and its data directory",
        ),
    ],
)
async def test_a_disk_error_is_said_plainly_without_the_servers_paths(
    served: Served, monkeypatch: pytest.MonkeyPatch, code: int, reason: str, said: str
) -> None:
    def failing(*args: object, **kwargs: object) -> None:
        raise OSError(code, reason, str(served.docs / "ops" / "x.md"))

    monkeypatch.setattr("os.replace", failing)
    async with served.mcp() as client:
        digest = await hash_of(client, "backups.md")
        failed = await client.call_tool(
            "ragdown_write", {"path": "backups.md", "text": "# Backups\n\nNew.", "base_hash": digest}
        )
    assert failed.is_error
    assert text_of(failed) == said
    assert str(served.docs) not in text_of(failed)
    assert "Run pg_restore" in (served.docs / "ops" / "backups.md").read_text(encoding="utf-8")


async def test_a_write_whose_indexing_fails_is_still_reported_as_written(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is on disk: an agent told "failed" would retry, and an append retried is made twice."""

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the index is unavailable")

    monkeypatch.setattr(served.engine, "sync", broken)
    async with served.mcp() as client:
        appended = await client.call_tool(
            "ragdown_write", {"path": "backups.md", "text": "once", "append": True}
        )
    assert not appended.is_error
    assert text_of(appended).startswith("wrote backups.md (hash ")
    assert text_of(appended).endswith(
        "; it is on disk but not indexed yet (RuntimeError): the next sync indexes it"
    )
    assert (served.docs / "ops" / "backups.md").read_text(encoding="utf-8").count("once") == 1


async def test_a_full_reindex_runs_at_most_every_ten_minutes(served: Served) -> None:
    """Each full re-index rewrites every folder's rows: any agent may ask, so it is rationed."""
    async with served.mcp() as client:
        first = await client.call_tool("ragdown_reindex", {"full": True})
        second = await client.call_tool("ragdown_reindex", {"full": True})
        plain = await client.call_tool("ragdown_reindex", {})
    assert not first.is_error
    assert second.is_error
    assert text_of(second).startswith("a full re-index ran less than 10 minutes ago; the next may run in ")
    assert not plain.is_error
