"""docs/documents.md#embedded-and-lexical-text breadcrumb, the embedded text and the lexical text."""

from __future__ import annotations

import pytest

from ragdown.documents.chunks import Chunk, breadcrumb, chunk_markdown, embedding_text, search_text
from ragdown.documents.metadata import parse_document


@pytest.mark.parametrize(
    ("title", "heading", "expected"),
    [
        # Empty heading, or the heading is the title: the title.
        ("Backups", "", "Backups"),
        ("Backups", "Backups", "Backups"),
        # The heading path starts with the title and the separator: the heading.
        ("Backups", "Backups › Restore", "Backups › Restore"),
        ("Backups", "Backups › Restore › Replication", "Backups › Restore › Replication"),
        # Otherwise: title › heading.
        ("Runbook", "Restore", "Runbook › Restore"),
        ("Runbook", "Setup › Replication", "Runbook › Setup › Replication"),
        # A prefix that is not followed by the separator does not count.
        ("Back", "Backups", "Back › Backups"),
        ("Backups", "Backups›Restore", "Backups › Backups›Restore"),
        ("Backups", "Backups > Restore", "Backups › Backups > Restore"),
        # Case matters.
        ("backups", "Backups › Restore", "backups › Backups › Restore"),
        ("", "Heading", " › Heading"),
        ("", "", ""),
    ],
)
def test_breadcrumb(title: str, heading: str, expected: str) -> None:
    assert breadcrumb(title, heading) == expected


def test_embedding_text() -> None:
    assert embedding_text("T", "T › H", "body") == "T › H\n\nbody"
    assert embedding_text("Runbook", "Restore", "Run it twice.") == "Runbook › Restore\n\nRun it twice."
    assert embedding_text("T", "", "") == "T\n\n"


def _chunk(index: int, text: str = "body") -> Chunk:
    return Chunk(index=index, title="T", heading="T › H", text=text, line_start=1, line_end=1)


def test_search_text_is_the_embedding_text_without_aliases() -> None:
    assert search_text(_chunk(0), []) == "T › H\n\nbody"
    assert search_text(_chunk(3), []) == "T › H\n\nbody"


def test_search_text_adds_aliases_to_chunk_0_only() -> None:
    assert search_text(_chunk(0), ["Elephant", "The DB"]) == "T › H\n\nbody\n\nElephant\nThe DB"
    assert search_text(_chunk(1), ["Elephant", "The DB"]) == "T › H\n\nbody"


def test_stored_text_has_no_breadcrumb_and_embedding_has_no_metadata() -> None:
    source = "\n".join(
        [
            "---",
            "title: Runbook",
            "description: How we restore.",
            "tags: [ops]",
            "aliases: [Playbook]",
            "---",
            "# Restore",
            "Run it twice.",
            "## Verify",
            "Check the rows.",
        ]
    )
    doc = parse_document(source, "ops/runbook.md", 1500)
    assert doc.title == "Runbook"
    assert [c.text for c in doc.chunks] == ["Run it twice.", "Check the rows."]
    embedded = [embedding_text(c.title, c.heading, c.text) for c in doc.chunks]
    assert embedded == [
        "Runbook › Restore\n\nRun it twice.",
        "Runbook › Restore › Verify\n\nCheck the rows.",
    ]
    for text in embedded:
        assert "ops" not in text
        assert "Playbook" not in text
        assert "How we restore" not in text
    assert [search_text(c, doc.meta.aliases) for c in doc.chunks] == [
        "Runbook › Restore\n\nRun it twice.\n\nPlaybook",
        "Runbook › Restore › Verify\n\nCheck the rows.",
    ]


def test_heading_path_starting_with_the_h1_title_is_not_repeated() -> None:
    chunks = chunk_markdown("# Backups\nnightly\n## Restore\ntwice", "ops/backups.md", 1500)
    assert [breadcrumb(c.title, c.heading) for c in chunks] == ["Backups", "Backups › Restore"]
