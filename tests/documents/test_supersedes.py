"""docs/documents.md#supersedes supersedes: read from front matter, resolved against the document's own
directory."""

from __future__ import annotations

import pytest

from ragdown.documents.metadata import (
    meta_from_lines,
    read_document_meta,
    resolve_supersedes,
    supersedes_boundary,
)


def supersedes(front_line: str, path: str) -> list[str]:
    source = f"---\ntitle: New\n{front_line}\n---\n\n# New\n\nText."
    return read_document_meta(source, path).supersedes


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("old.md", ["notes/old.md"]),
        ("../ops/old.md", ["ops/old.md"]),
        ("../../escape.md", []),
        ("/etc/passwd", []),
    ],
)
def test_the_four_examples(entry: str, expected: list[str]) -> None:
    assert supersedes(f"supersedes: {entry}", "notes/new.md") == expected
    assert resolve_supersedes([entry], "notes/new.md") == expected


@pytest.mark.parametrize(
    ("front_line", "path", "expected"),
    [
        ("supersedes: old.md", "notes/new.md", ["notes/old.md"]),
        ('supersedes: [old.md, "older.md"]', "notes/new.md", ["notes/old.md", "notes/older.md"]),
        ("supersedes:\n  - old.md\n  - 'older.md'", "new.md", ["old.md", "older.md"]),
        # A scalar is split on commas only.
        ("supersedes: a.md, b.md", "notes/new.md", ["notes/a.md", "notes/b.md"]),
        ("supersedes: my old note.md", "notes/new.md", ["notes/my old note.md"]),
        ("supersedes: 'a.md, b.md'", "new.md", ["a.md", "b.md"]),
        # Repeated keys contribute every occurrence.
        ("supersedes: a.md\nsupersedes: [b.md]", "new.md", ["a.md", "b.md"]),
        # The block list stops at the next key rather than eating it.
        ("supersedes:\n  - old.md\ntags: [a]", "new.md", ["old.md"]),
        ("tags: [a]", "new.md", []),
    ],
)
def test_list_forms(front_line: str, path: str, expected: list[str]) -> None:
    assert supersedes(front_line, path) == expected


@pytest.mark.parametrize(
    ("entry", "path", "expected"),
    [
        # Backslashes become slashes before anything else.
        ("..\\ops\\old.md", "notes/new.md", ["ops/old.md"]),
        ("sub\\x.md", "notes/new.md", ["notes/sub/x.md"]),
        ("\\etc\\passwd", "notes/new.md", []),
        ("..\\..\\escape.md", "notes/new.md", []),
        ("old.md", "notes\\new.md", ["notes/old.md"]),
        # A document at the root: its directory is empty.
        ("old.md", "new.md", ["old.md"]),
        ("./old.md", "new.md", ["old.md"]),
        ("../old.md", "new.md", []),
        ("..", "new.md", []),
        ("sub/../old.md", "new.md", ["old.md"]),
        # Normalised after the join.
        ("./a//b/../old.md", "notes/new.md", ["notes/a/old.md"]),
        ("..", "notes/new.md", []),  # the folder itself is no document
        ("../..", "notes/new.md", []),
        ("../../notes/x.md", "notes/deep/new.md", ["notes/x.md"]),
        ("../../../x.md", "notes/deep/new.md", []),
        # The path rule applies: a dot-name is never a document.
        ("..x.md", "new.md", []),
        ("...", "new.md", []),
        ("ok/.hidden/x.md", "new.md", []),
        # Several entries keep their order; each is judged on its own.
        ("a.md|/abs.md|../../up.md|b.md", "notes/new.md", ["notes/a.md", "notes/b.md"]),
    ],
)
def test_resolution(entry: str, path: str, expected: list[str]) -> None:
    assert resolve_supersedes(entry.split("|"), path) == expected


def test_body_supersedes_line_is_ignored() -> None:
    assert read_document_meta("# New\n\nsupersedes: old.md", "new.md").supersedes == []
    source = "---\ntitle: New\n---\nsupersedes: old.md"
    assert read_document_meta(source, "new.md").supersedes == []


def test_indented_supersedes_key_is_not_read() -> None:
    assert supersedes("  supersedes: old.md", "new.md") == []


@pytest.mark.parametrize(
    ("entry", "path", "expected"),
    [
        ("old.md", "notes/new.md", ["notes/old.md"]),
        ("sub/../old.md", "notes/deep/new.md", ["notes/deep/old.md"]),
        ("../old.md", "notes/deep/new.md", ["notes/old.md"]),
        ("../teamb/secret.md", "notes/new.md", []),
        ("../../notes/x.md", "notes/deep/new.md", ["notes/x.md"]),
        ("../../teamb/x.md", "notes/deep/new.md", []),
        ("../notes-old/x.md", "notes/new.md", []),  # a sibling whose name starts the same
    ],
)
def test_supersedes_stay_inside_the_documents_folder(entry: str, path: str, expected: list[str]) -> None:
    """docs/security.md#tenants: with folders, a document supersedes only inside its own folder."""
    boundary = supersedes_boundary(path, folders_mode=True)
    assert boundary == "notes"
    assert resolve_supersedes([entry], path, boundary) == expected
    source = f"---\nsupersedes: [{entry}]\n---\nText."
    assert meta_from_lines(source.split("\n"), path, boundary).supersedes == expected
    # One folder served alone (stdio): the whole docs dir is the boundary.
    assert supersedes_boundary(path, folders_mode=False) == ""
