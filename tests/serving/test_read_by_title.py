"""`ragdown_read_doc` takes the title a hit or a listing shows: `Title`, `Title#Heading`, or the hit's
breadcrumb, like a file name or an alias; a title several documents share is refused, naming them
(docs/tools.md#ragdown_read_doc)."""

from __future__ import annotations

import asyncio

from tests.serving.conftest import TOKEN, Served, call_tool

POSTGRES = (
    "# Postgres backups\n\nNightly dumps.\n\n## Restore\n\nRun pg_restore.\n\n## Retention\n\n30 days.\n"
)
NOTE = "---\ntitle: Inspector test note\n---\n\nWritten by an agent.\n\n## Follow-up\n\nRotate the keys.\n"
TWIN = "---\ntitle: Weekly notes\n---\n\n{}\n"


def _read(served: Served, path: str) -> str:
    return asyncio.run(call_tool(served.url + "/mcp/ops", TOKEN, "ragdown_read_doc", {"path": path}))


def _with_documents(served: Served) -> None:
    (served.docs / "ops" / "pg.md").write_text(POSTGRES, encoding="utf-8")
    (served.docs / "ops" / "inspector-note.md").write_text(NOTE, encoding="utf-8")
    (served.docs / "ops" / "week-1.md").write_text(TWIN.format("one"), encoding="utf-8")
    (served.docs / "ops" / "db" / "week-2.md").write_text(TWIN.format("two"), encoding="utf-8")
    served.engine.sync()


def test_a_title_reads_the_document_and_a_heading_its_section(served: Served) -> None:
    _with_documents(served)
    whole = _read(served, "Postgres backups")
    assert whole.splitlines()[0].startswith("pg.md:1-11 of 11 ")
    assert 'resolved from "Postgres backups"' in whole.splitlines()[0]
    section = _read(served, "postgres backups#Restore")  # case ignored, as names and aliases are
    assert section.splitlines()[0].startswith("pg.md:5-8 of 11 ")
    assert section.splitlines()[1:] == ["## Restore", "", "Run pg_restore."]


def test_a_hits_breadcrumb_reads_its_section(served: Served) -> None:
    _with_documents(served)
    assert _read(served, "Postgres backups › Retention").splitlines()[0].startswith("pg.md:9-11 of 11 ")
    # A front-matter title with no H1: the shape of every note ragdown_remember writes.
    note = _read(served, "Inspector test note › Follow-up")
    assert note.splitlines()[0].startswith("inspector-note.md:7-9 of 9 ")


def test_a_shared_title_is_refused_naming_the_documents(served: Served) -> None:
    _with_documents(served)
    answer = _read(served, "Weekly notes")
    assert answer == (
        '"Weekly notes" is the title of 2 documents (db/week-2.md, week-1.md): read one by its path'
    )


def test_a_path_a_file_name_or_an_alias_still_comes_first(served: Served) -> None:
    _with_documents(served)
    assert _read(served, "Restores").splitlines()[0].startswith("backups.md:")  # the alias
    missing = _read(served, "No such title")
    assert (
        missing
        == "no such document: No such title (not a path, and no document by that name, alias or title)"
    )


def test_a_title_outside_the_scope_is_not_found(served: Served) -> None:
    _with_documents(served)
    answer = asyncio.run(
        call_tool(served.url + "/mcp/ops/db", TOKEN, "ragdown_read_doc", {"path": "Postgres backups"})
    )
    assert answer.startswith("no such document: Postgres backups")
    # Inside a sub-folder scope the shared title names one document only: no ambiguity.
    inside = asyncio.run(
        call_tool(served.url + "/mcp/ops/db", TOKEN, "ragdown_read_doc", {"path": "Weekly notes"})
    )
    assert inside.splitlines()[0].startswith("week-2.md:")
