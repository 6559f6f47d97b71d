"""docs/documents.md#front-matter front matter: markers, unquote, title, the list reader, the scalar reader
and the fields."""

from __future__ import annotations

import re

import pytest

from ragdown.documents.chunks import chunk_markdown
from ragdown.documents.frontmatter import read_front_matter, read_list, read_scalar, read_title, unquote
from ragdown.documents.lines import split_lines
from ragdown.documents.metadata import DocumentMeta, read_document_meta

TAG_SPLIT = re.compile(r"[\s,]+")


def front_of(source: str) -> list[str]:
    return read_front_matter(split_lines(source)).front


# --- markers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "front", "body_start"),
    [
        ("---\ntitle: T\n---\nbody", ["title: T"], 3),
        ("---\na: 1\nb: 2\n...\nbody", ["a: 1", "b: 2"], 4),
        ("---\n---\nbody", [], 2),
        # Line 1 is compared trimmed.
        ("  ---  \na: 1\n---\nbody", ["a: 1"], 3),
        # The closer may have trailing whitespace.
        ("---\na: 1\n---   \nbody", ["a: 1"], 3),
        ("---\na: 1\n...\t\nbody", ["a: 1"], 3),
        # The first closing line wins.
        ("---\na: 1\n---\nb: 2\n---\n", ["a: 1"], 3),
        # A closer that is not column 0, or carries text, or is the wrong length, does not close.
        ("---\na: 1\n ---\nb: 2\n---\nbody", ["a: 1", " ---", "b: 2"], 5),
        ("---\na: 1\n--- x\n---", ["a: 1", "--- x"], 4),
        ("---\na: 1\n----\n....\n---", ["a: 1", "----", "...."], 5),
        # Front matter with nothing after it: the body is empty.
        ("---\ntitle: T\n---", ["title: T"], 3),
    ],
)
def test_front_matter_markers(source: str, front: list[str], body_start: int) -> None:
    parsed = read_front_matter(split_lines(source))
    assert parsed.front == front
    assert parsed.body_start == body_start


@pytest.mark.parametrize(
    "source",
    [
        "---\ntitle: T\nbody with no closing line",
        "---\ntitle: T\n ---\n",  # an indented closer is not a closer
        "\n---\ntitle: T\n---\n",  # front matter starts on line 1 only
        "title: T\n---\n",
        "--- \n",
        "-- -\ntitle: T\n---",
        "",
    ],
)
def test_no_front_matter_means_the_body_starts_at_line_1(source: str) -> None:
    parsed = read_front_matter(split_lines(source))
    assert parsed.front == []
    assert parsed.body_start == 0


def test_unclosed_front_matter_is_body_text_and_gives_no_title() -> None:
    [chunk] = chunk_markdown("---\ntitle: Nope\nbody", "notes/file.md", 1500)
    assert chunk.title == "file"
    assert chunk.text == "---\ntitle: Nope\nbody"
    assert (chunk.line_start, chunk.line_end) == (1, 3)


def test_unclosed_front_matter_gives_no_metadata() -> None:
    meta = read_document_meta("---\ndescription: d\naliases: [A]\nsupersedes: old.md\n", "new.md")
    assert meta == DocumentMeta()


def test_dot_closer_front_matter_is_read() -> None:
    source = "---\ntitle: Dots\ndescription: d\n...\n# H\ntext"
    [chunk] = chunk_markdown(source, "x.md", 1500)
    assert (chunk.title, chunk.heading, chunk.text, chunk.line_start) == ("Dots", "H", "text", 6)
    assert read_document_meta(source, "x.md").description == "d"


def test_line_numbers_count_the_front_matter() -> None:
    source = "---\ntitle: Runbook\ntags: [ops]\n---\nIntro text."
    [chunk] = chunk_markdown(source, "x.md", 1500)
    assert (chunk.title, chunk.heading, chunk.text) == ("Runbook", "", "Intro text.")
    assert (chunk.line_start, chunk.line_end) == (5, 5)


# --- unquote ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"a"', "a"),
        ("'a'", "a"),
        ('""', ""),
        ("''", ""),
        ("\"a'", "\"a'"),
        ("'a\"", "'a\""),
        ('"', '"'),
        ("'", "'"),
        ('"a', '"a'),
        ('a"', 'a"'),
        ("a", "a"),
        # Only one pair is removed.
        ('""a""', '"a"'),
        ('"a" and "b"', 'a" and "b'),
        ("'it''s'", "it''s"),
        # No trimming inside the quotes.
        ('" a "', " a "),
    ],
)
def test_unquote(value: str, expected: str) -> None:
    assert unquote(value) == expected


# --- title -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        (["title: Plain"], "Plain"),
        (["title:   Spaced out   "], "Spaced out"),
        (["title:NoSpace"], "NoSpace"),
        (['title: "Quoted: yes"'], "Quoted: yes"),
        (["title: 'Single'"], "Single"),
        (["title: \"Mismatched'"], "\"Mismatched'"),
        # The last title line wins.
        (["title: First", "other: x", "title: Second"], "Second"),
        (["title: First", 'title: "Second"'], "Second"),
        # Column 0 only, and the key must be exactly `title:`.
        (["  title: Indented"], None),
        (["title : Spaced key"], None),
        (["subtitle: Sub"], None),
        (["titles: Many"], None),
        (["title:"], None),
        ([], None),
        # A title line with no value does not override an earlier one.
        (["title: Kept", "title:"], "Kept"),
    ],
)
def test_read_title(front: list[str], expected: str | None) -> None:
    assert read_title(front) == expected


def test_title_last_wins_and_is_unquoted_in_chunks() -> None:
    source = "---\ntitle: Old\ntitle: 'New one'\n---\n# Heading\ntext"
    assert chunk_markdown(source, "x.md", 1500)[0].title == "New one"


# --- list reader -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        # Inline list: items trimmed and unquoted, empty ones dropped.
        (["k: [a, \"b\", 'c' ,  d ]"], ["a", "b", "c", "d"]),
        (["k: [a, , '', b,]"], ["a", "b"]),
        (["k: []"], []),
        (["k: [ ]"], []),
        (["k:[x]"], ["x"]),
        # A missing closing bracket is tolerated.
        (["k: [a, b"], ["a", "b"]),
        # Inline items are split on commas only.
        (["k: [two words, x]"], ["two words", "x"]),
        # Scalar without a split pattern is a single item, unquoted.
        (["k: a, b c"], ["a, b c"]),
        (['k: "quoted, value"'], ["quoted, value"]),
        (["k:   padded   "], ["padded"]),
        # Block list: `- item` lines, each unquoted and trimmed.
        (["k:", "  - a", "  - 'b'", '  - "c d"  ', "-e"], ["a", "b", "c d", "e"]),
        # The block ends at the first line that is not an item.
        (["k:", "  - a", "other: x", "  - b"], ["a"]),
        (["k:", "  - a", "", "  - b"], ["a"]),
        (["k:", "  -", "  - b"], []),
        (["k:", "other: x"], []),
        (["k:"], []),
        # Repeated keys contribute every occurrence, in order.
        (["k: a", "x: y", "k: [b, c]", "k:", " - d"], ["a", "b", "c", "d"]),
        # Column 0 only; other keys do not match.
        (["  k: [a]", "kk: [b]", "k : [c]"], []),
    ],
)
def test_read_list_without_split(front: list[str], expected: list[str]) -> None:
    assert read_list(front, "k") == expected


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        (["k: one, two three"], ["one", "two", "three"]),
        (["k: one,,two ,\tthree,"], ["one", "two", "three"]),
        # The value is unquoted before it is split, and each part after.
        (['k: "a, b"'], ["a", "b"]),
        (["k: 'a' \"b\""], ["a", "b"]),
        # The split pattern applies to scalars only, not to inline or block lists.
        (["k: [a b, c]"], ["a b", "c"]),
        (["k:", "  - a b"], ["a b"]),
    ],
)
def test_read_list_with_split(front: list[str], expected: list[str]) -> None:
    assert read_list(front, "k", TAG_SPLIT) == expected


def test_read_list_reads_the_key_again_after_a_block() -> None:
    assert read_list(["k:", "  - a", "k: b"], "k") == ["a", "b"]


# --- scalar reader ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        (["k: A summary."], "A summary."),
        (["k:   padded value  "], "padded value"),
        (['k: "Quoted: yes"'], "Quoted: yes"),
        (["k: 'single'"], "single"),
        # The first matching line wins.
        (["k: one", "k: two"], "one"),
        # `k:` with no value does not match, so a later line is read.
        (["k:", "k: later"], "later"),
        # An empty unquoted value is absent, and it still is the first match.
        (["k: ''", "k: later"], ""),
        (['k: ""'], ""),
        (["k:"], ""),
        ([], ""),
        (["  k: indented"], ""),
        (["kk: other"], ""),
        # Not a block indicator: unquoted as it is.
        (["k: >x"], ">x"),
        (["k: |a"], "|a"),
        (["k: >+-"], ">+-"),
        (["k: '>'"], ">"),
    ],
)
def test_read_scalar(front: list[str], expected: str) -> None:
    assert read_scalar(front, "k") == expected


@pytest.mark.parametrize("indicator", [">", "|", ">-", ">+", "|-", "|+"])
def test_read_scalar_block_forms(indicator: str) -> None:
    front = [
        f"k: {indicator}",
        "  First line",
        "",
        "    second   line  ",
        "\tthird",
        "   ",
        "next: x",
        "  not part of it",
    ]
    assert read_scalar(front, "k") == "First line second   line third"


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        (["k: >"], ""),
        (["k: |", "next: x"], ""),
        (["k: >", "", "  "], ""),
        (["k: >  ", "  text"], "text"),
        (["k: >", "  a", "b: c"], "a"),
    ],
)
def test_read_scalar_block_edges(front: list[str], expected: str) -> None:
    assert read_scalar(front, "k") == expected


# --- the fields ------------------------------------------------------------------------------


def test_description_on_one_line() -> None:
    meta = read_document_meta('---\ndescription: "How we run backups."\n---\nx')
    assert meta.description == "How we run backups."


def test_description_as_a_block() -> None:
    source = "---\ndescription: >-\n  How we run\n  backups.\ntags: [ops]\n---\nx"
    meta = read_document_meta(source)
    assert meta.description == "How we run backups."
    assert meta.tags == ["ops"]


def test_created_by_and_session_are_read_from_front_matter_only() -> None:
    source = '---\ncreated_by: ragdown_remember\nsession: "min-agent:7"\n---\ncreated_by: not frontmatter'
    meta = read_document_meta(source)
    assert meta == DocumentMeta(created_by="ragdown_remember", session="min-agent:7")


def test_empty_created_by_and_session_are_absent() -> None:
    assert read_document_meta("---\ncreated_by:\nsession: ''\n---\nx") == DocumentMeta()


def test_a_plain_note_has_no_metadata() -> None:
    assert read_document_meta("# Title\n\nText.") == DocumentMeta()


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        (["aliases:", "  - Elephant", '  - "The DB"'], ["Elephant", "The DB"]),
        (["aliases: Big, Old Name"], ["Big, Old Name"]),
        (['aliases: "Quoted alias"'], ["Quoted alias"]),
        (["aliases: [A, B, A, '', b]"], ["A", "B", "b"]),
        (["aliases: X", "aliases: [Y, X]", "aliases:", "  - Z", "  - Y"], ["X", "Y", "Z"]),
        (["aliases: ''"], []),
        (["aliases:"], []),
    ],
)
def test_aliases(front: list[str], expected: list[str]) -> None:
    source = "\n".join(["---", *front, "---", "x"])
    assert read_document_meta(source).aliases == expected


def test_tags_string_is_split_and_alias_string_kept_whole() -> None:
    source = "---\ntags: one, two three\naliases: Big, Old Name\n---\nx"
    meta = read_document_meta(source)
    assert meta.tags == ["one", "three", "two"]
    assert meta.aliases == ["Big, Old Name"]
