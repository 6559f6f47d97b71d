"""docs/documents.md#sections-and-breadcrumbs sections and headings, docs/documents.md#packing packing."""

from __future__ import annotations

import itertools

import pytest

from ragdown.documents.chunks import Chunk, chunk_markdown, file_stem

Row = tuple[str, str, int, int]


def rows(source: str, max_chars: int = 1500, path: str = "x.md") -> list[Row]:
    """(heading, text, line_start, line_end) of every chunk."""
    return [(c.heading, c.text, c.line_start, c.line_end) for c in chunk_markdown(source, path, max_chars)]


def word_paragraph(n: int) -> str:
    return " ".join(["word"] * n)


# --- sections and headings -------------------------------------------------------------------


def test_sections_scope_chunks_with_breadcrumbs_and_original_line_numbers() -> None:
    source = "\n".join(
        [
            "# Backups",  # 1
            "",  # 2
            "We back up nightly.",  # 3
            "",  # 4
            "## Restore",  # 5
            "",  # 6
            "Run it twice.",  # 7
            "",  # 8
            "### Replication",  # 9
            "Lag under a second.",  # 10
        ]
    )
    chunks = chunk_markdown(source, "ops/backups.md", 1500)
    assert [(c.heading, c.text, c.line_start, c.line_end) for c in chunks] == [
        ("Backups", "We back up nightly.", 3, 3),
        ("Backups › Restore", "Run it twice.", 7, 7),
        ("Backups › Restore › Replication", "Lag under a second.", 10, 10),
    ]
    assert [c.title for c in chunks] == ["Backups"] * 3
    assert [c.index for c in chunks] == [0, 1, 2]


@pytest.mark.parametrize(
    ("source", "headings"),
    [
        # Skipped levels leave no gap.
        ("# A\n### C\nc", ["A › C"]),
        ("## B\nb", ["B"]),
        ("### C\nc", ["C"]),
        # A heading of level L truncates the stack to L-1 entries.
        ("# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\ne", ["A", "A › B", "A › B › C", "A › D", "E"]),
        ("# A\n### C\nc\n## B\nb", ["A › C", "A › B"]),
        ("### C\nc\n# A\na\n## B\nb", ["C", "A", "A › B"]),
        ("## B\nb\n### C\nc\n# A\n### D\nd", ["B", "B › C", "A › D"]),
        ("###### Six\nx", ["Six"]),
        # A skipped level is an empty entry: a sibling replaces the deeper heading, not nests below it.
        ("# A\n### C\nc\n### D\nd", ["A › C", "A › D"]),
        ("### C\nc\n## B\nb", ["C", "B"]),
        ("# A\n#### D\nd\n### C\nc\n#### E\ne", ["A › D", "A › C", "A › C › E"]),
    ],
)
def test_heading_stack(source: str, headings: list[str]) -> None:
    assert [r[0] for r in rows(source)] == headings


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("# Title", "Title"),
        ("#\tTab", "Tab"),
        ("   # Three spaces", "Three spaces"),
        ("## Closing hashes ##", "Closing hashes"),
        ("# Trailing space   ", "Trailing space"),
        ("# Foo#", "Foo"),
        ("# C# tips", "C# tips"),
        ("# #", "#"),
        ("# Postgres #heading-tag", "Postgres #heading-tag"),
    ],
)
def test_heading_names(line: str, name: str) -> None:
    assert rows(f"{line}\nbody") == [(name, "body", 2, 2)]


@pytest.mark.parametrize(
    "line",
    [
        "#tag",  # no space after the #
        "####### seven",
        "    # four spaces",
        "#",
        "\\# escaped",
    ],
)
def test_not_a_heading(line: str) -> None:
    assert rows(f"{line}\nbody") == [("", f"{line}\nbody", 1, 2)]


def test_text_before_any_heading_is_the_first_section() -> None:
    assert rows("intro\n\n# H\nbody") == [("", "intro", 1, 1), ("H", "body", 4, 4)]


def test_first_section_starts_at_the_body_after_front_matter() -> None:
    assert rows("---\ntitle: T\n---\nintro\n# H\nbody") == [("", "intro", 4, 4), ("H", "body", 6, 6)]


def test_heading_line_belongs_to_no_section() -> None:
    result = rows("# H\n\n\nbody\n## I\nmore")
    assert result == [("H", "body", 4, 4), ("H › I", "more", 6, 6)]
    assert all("#" not in text for _, text, _, _ in result)


def test_heading_with_no_text_of_its_own_produces_no_chunk() -> None:
    chunks = chunk_markdown("# A\n## B\nbody", "x.md", 1500)
    assert [(c.heading, c.text, c.line_start, c.line_end) for c in chunks] == [("A › B", "body", 3, 3)]
    assert chunks[0].index == 0


def test_blank_lines_under_a_heading_are_no_text() -> None:
    assert rows("# A\n\n   \n\t\n## B\n\nbody\n\n") == [("A › B", "body", 7, 7)]


def test_sections_are_packed_separately() -> None:
    assert rows("a\n# H\nb\n## I\nc", max_chars=1500) == [
        ("", "a", 1, 1),
        ("H", "b", 3, 3),
        ("H › I", "c", 5, 5),
    ]


# --- fences in the chunker -------------------------------------------------------------------


def test_heading_inside_a_fence_is_code() -> None:
    source = "## Script\n```sh\n# not a heading\n\necho hi\n```"
    assert rows(source) == [("Script", "```sh\n# not a heading\n\necho hi\n```", 2, 6)]


def test_tilde_fence_hides_headings_and_backtick_lines() -> None:
    source = "# A\n~~~\n```\n# hidden\n~~~\n# B\nb"
    assert rows(source) == [("A", "~~~\n```\n# hidden\n~~~", 2, 5), ("B", "b", 7, 7)]


def test_shorter_closer_does_not_close_a_fence() -> None:
    source = "# A\n````\n```\n# hidden\n\n````\n# B\nb"
    assert rows(source) == [("A", "````\n```\n# hidden\n\n````", 2, 6), ("B", "b", 8, 8)]


def test_longer_closer_with_info_string_closes_a_fence() -> None:
    source = "# A\n```\ncode\n`````python\n# B\nb"
    assert rows(source) == [("A", "```\ncode\n`````python", 2, 4), ("B", "b", 6, 6)]


def test_unclosed_fence_swallows_the_rest_of_the_file() -> None:
    source = "# A\n```\n# B\n\nb"
    assert rows(source) == [("A", "```\n# B\n\nb", 2, 5)]


def test_indented_backticks_do_not_open_a_fence() -> None:
    assert rows("    ```\n# H\nb") == [("", "    ```", 1, 1), ("H", "b", 3, 3)]


def test_fenced_block_is_one_paragraph_with_blank_lines_inside() -> None:
    source = "para one\n\n```\na\n\n\nb\n```\n\npara two"
    assert rows(source, max_chars=13) == [
        ("", "para one", 1, 1),
        ("", "```\na\n\n\nb\n```", 3, 8),
        ("", "para two", 10, 10),
    ]


# --- title -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "path", "title"),
    [
        ("---\ntitle: Front\n---\n# H1\ntext", "x.md", "Front"),
        ('---\ntitle: "Quoted"\n---\ntext', "x.md", "Quoted"),
        ("---\ndescription: d\n---\n# H1\ntext", "x.md", "H1"),
        ("## Sub\nx\n# Main\ny\n# Second\nz", "x.md", "Main"),
        ("```\n# Fenced\n```\ntext", "notes/todo-list.md", "todo-list"),
        ("#NotHeading\ntext", "notes/todo-list.md", "todo-list"),
        ("Just text.", "notes/todo-list.md", "todo-list"),
        ("Just text.", "a/b.c.md", "b.c"),
        ("Just text.", "README", "README"),
        ("---\ntitle: T\ntext", "dir/unclosed.md", "unclosed"),
    ],
)
def test_title_fallback_chain(source: str, path: str, title: str) -> None:
    chunks = chunk_markdown(source, path, 1500)
    assert {c.title for c in chunks} == {title}


def test_empty_front_matter_title_is_the_title() -> None:
    # The front-matter title is the last `title:` line, unquoted; `''` unquotes to an empty title.
    assert chunk_markdown("---\ntitle: ''\n---\n# H1\ntext", "x.md", 1500)[0].title == ""


@pytest.mark.parametrize(
    ("path", "stem"),
    [("notes/todo-list.md", "todo-list"), ("empty.md", "empty"), ("a/b.c.md", "b.c"), ("noext", "noext")],
)
def test_file_stem(path: str, stem: str) -> None:
    assert file_stem(path) == stem


# --- empty files and headings only -----------------------------------------------------------


def test_headings_only_gives_one_chunk_of_the_raw_body() -> None:
    assert chunk_markdown("# Stub\n## Todo", "stub.md", 1500) == [
        Chunk(index=0, title="Stub", heading="", text="# Stub\n## Todo", line_start=1, line_end=2)
    ]


def test_empty_file_gives_one_chunk_named_after_the_file() -> None:
    assert chunk_markdown("", "empty.md", 1500) == [
        Chunk(index=0, title="empty", heading="", text="empty", line_start=1, line_end=1)
    ]


@pytest.mark.parametrize(
    ("source", "path", "expected"),
    [
        # Whitespace only: the title, and the last counted line.
        ("\n\n  \n", "dir/blank.md", ("blank", "blank", 1, 4)),
        # Front matter only: the body's first line is after the closer, past the file's line count.
        ("---\ntitle: Only front\n---", "x.md", ("Only front", "Only front", 4, 4)),
        ("---\ntitle: T\n---\n", "x.md", ("T", "T", 4, 4)),
        ("---\ntitle: T\n---\n\n# A\n\n## B\n\n", "x.md", ("T", "# A\n\n## B", 4, 9)),
        # The body is trimmed as a whole, not line by line.
        ("  # A\n   ## B  ", "x.md", ("A", "# A\n   ## B", 1, 2)),
    ],
)
def test_no_text_fallback(source: str, path: str, expected: tuple[str, str, int, int]) -> None:
    [chunk] = chunk_markdown(source, path, 1500)
    assert (chunk.index, chunk.heading) == (0, "")
    assert (chunk.title, chunk.text, chunk.line_start, chunk.line_end) == expected


# --- paragraphs and packing ------------------------------------------------------------------


def test_packing_test_vector_at_120() -> None:
    para = word_paragraph(10)
    source = "\n".join([para, "", para, "", "x" * 250])
    chunks = chunk_markdown(source, "x.md", 120)
    assert [c.text for c in chunks] == [f"{para}\n\n{para}", "x" * 120, "x" * 120, "x" * 10]
    assert [len(c.text) for c in chunks] == [len(para) * 2 + 2, 120, 120, 10]
    assert (chunks[0].line_start, chunks[0].line_end) == (1, 3)
    assert [(c.line_start, c.line_end) for c in chunks[1:]] == [(5, 5)] * 3
    assert [c.index for c in chunks] == [0, 1, 2, 3]


def test_paragraph_text_keeps_its_lines_as_written() -> None:
    assert rows("  indented line\nnext line  \n\n\n\nthird") == [
        ("", "  indented line\nnext line  \n\nthird", 1, 6)
    ]


def test_whitespace_only_line_ends_a_paragraph() -> None:
    assert rows("a\n \t \nb", max_chars=3) == [("", "a", 1, 1), ("", "b", 3, 3)]


@pytest.mark.parametrize(
    ("second", "expected"),
    [
        # 9 + 2 + 9 = 20: fits exactly.
        ("b" * 9, [("", "a" * 9 + "\n\n" + "b" * 9, 1, 3)]),
        # 9 + 2 + 10 = 21: one too many.
        ("b" * 10, [("", "a" * 9, 1, 1), ("", "b" * 10, 3, 3)]),
    ],
)
def test_greedy_packing_boundary(second: str, expected: list[Row]) -> None:
    assert rows("a" * 9 + "\n\n" + second, max_chars=20) == expected


def test_greedy_packing_closes_and_reopens() -> None:
    source = "\n\n".join(["a" * 8, "b" * 8, "c" * 8, "d", "e" * 19])
    assert rows(source, max_chars=20) == [
        ("", "a" * 8 + "\n\n" + "b" * 8, 1, 3),
        ("", "c" * 8 + "\n\nd", 5, 7),
        ("", "e" * 19, 9, 9),
    ]


def test_paragraph_of_exactly_max_chars_is_not_split() -> None:
    assert rows("12345\n1234", max_chars=10) == [("", "12345\n1234", 1, 2)]


def test_hard_split_at_line_boundaries() -> None:
    # 9 + 1 + 9 = 19 fits; adding "\n" and the third line would pass 20.
    source = "\n".join(["a" * 9, "b" * 9, "c" * 9])
    assert rows(source, max_chars=20) == [("", "a" * 9 + "\n" + "b" * 9, 1, 2), ("", "c" * 9, 3, 3)]


def test_hard_split_accumulates_up_to_exactly_max_chars() -> None:
    # 9 + 1 + 10 = 20 is not past 20.
    source = "\n".join(["a" * 9, "b" * 10, "c" * 5])
    assert rows(source, max_chars=20) == [("", "a" * 9 + "\n" + "b" * 10, 1, 2), ("", "c" * 5, 3, 3)]


def test_hard_split_cuts_a_long_line_and_the_remainder_carries_on() -> None:
    source = "\n".join(["aaaa", "x" * 25, "bb"])
    assert rows(source, max_chars=10) == [
        ("", "aaaa", 1, 1),
        ("", "x" * 10, 2, 2),
        ("", "x" * 10, 2, 2),
        ("", "xxxxx\nbb", 2, 3),
    ]


def test_long_line_of_exactly_a_multiple_of_max_chars() -> None:
    assert rows("y" * 20 + "\nz", max_chars=10) == [
        ("", "y" * 10, 1, 1),
        ("", "y" * 10, 1, 1),
        ("", "z", 2, 2),
    ]


def test_hard_split_pieces_pack_with_the_following_paragraph() -> None:
    source = "x" * 25 + "\n\nsh"
    assert rows(source, max_chars=10) == [
        ("", "x" * 10, 1, 1),
        ("", "x" * 10, 1, 1),
        ("", "xxxxx\n\nsh", 1, 3),
    ]


def test_every_chunk_respects_max_chars() -> None:
    source = "\n".join(["# H", *[word_paragraph(n) + ("\n" if n % 3 else "") for n in range(1, 40)]])
    for max_chars in (15, 50, 120):
        chunks = chunk_markdown(source, "x.md", max_chars)
        assert chunks
        assert all(len(c.text) <= max_chars for c in chunks)


def test_chunk_indices_run_across_the_whole_file() -> None:
    source = "intro\n# A\n" + "x" * 25 + "\n## B\n\n## C\nc1\n\nc2\n# D\nd"
    chunks = chunk_markdown(source, "x.md", 10)
    assert [(c.index, c.heading, c.text) for c in chunks] == [
        (0, "", "intro"),
        (1, "A", "x" * 10),
        (2, "A", "x" * 10),
        (3, "A", "x" * 5),
        (4, "A › C", "c1\n\nc2"),
        (5, "D", "d"),
    ]
    assert {c.title for c in chunks} == {"A"}


# --- a line too long for one chunk: sentence ends, one sentence of overlap, spaces ----------


def test_a_long_line_is_cut_after_a_sentence_and_the_next_chunk_repeats_it() -> None:
    # Room 40: the last sentence end in its second half is after "Three three." (38 characters);
    # "Three three." starts past a quarter of the room, so it opens the next chunk again.
    line = "One one one. Two two two. Three three. Four four four four. Five."
    assert [text for _, text, _, _ in rows(line, max_chars=40)] == [
        "One one one. Two two two. Three three.",
        "Three three. Four four four four. Five.",
    ]


def test_a_sentence_starting_in_the_first_quarter_is_not_repeated() -> None:
    # The only earlier sentence end (after "Hi.") is before a quarter of the room: no overlap.
    line = "Hi. " + "word " * 5 + "end. " + "more " * 6
    chunks = [text for _, text, _, _ in rows(line, max_chars=40)]
    assert chunks[0] == "Hi. word word word word word end."
    assert chunks[1].startswith("more ")


def test_a_long_line_without_a_sentence_end_is_cut_at_a_space_never_inside_a_word() -> None:
    line = " ".join(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    texts = [text for _, text, _, _ in rows(line, max_chars=20)]
    assert texts == ["alpha beta gamma", "delta epsilon zeta", "eta theta"]
    assert " ".join(texts) == line


def test_a_space_only_in_the_first_half_of_the_room_still_cuts_by_length() -> None:
    assert rows("ab " + "c" * 30, max_chars=10) == [
        ("", "ab ccccccc", 1, 1),
        ("", "c" * 10, 1, 1),
        ("", "c" * 10, 1, 1),
        ("", "ccc", 1, 1),
    ]


def test_overlapping_chunks_keep_the_line_number_and_respect_max_chars() -> None:
    line = " ".join(f"Sentence number {i} is here." for i in range(60))
    chunks = chunk_markdown("# T\n\n" + line + "\n\nafter", "x.md", 120)
    assert all(len(c.text) <= 120 for c in chunks)
    assert [(c.line_start, c.line_end) for c in chunks[:-1]] == [(3, 3)] * (len(chunks) - 1)
    # Every sentence is whole in some chunk, and each chunk after the first starts with the last
    # sentence of the one before it.
    assert all(any(f"Sentence number {i} is here." in c.text for c in chunks) for i in range(60))
    cut = [c.text for c in chunks if c.line_start == 3]
    assert all(b.split(". ")[0] + "." == a.rsplit(". ", 1)[-1] for a, b in itertools.pairwise(cut))


def test_pieces_of_one_paragraph_are_never_joined_with_a_blank_line() -> None:
    # "x" and the long line's first piece (12 characters) would fit in 20 with "\n\n" between, but
    # no blank line stands between them in the file.
    assert rows("x\nAaaa bbbbbb. Cccc dddd eeee ffff", max_chars=20) == [
        ("", "x", 1, 1),
        ("", "Aaaa bbbbbb.", 2, 2),
        ("", "Cccc dddd eeee ffff", 2, 2),
    ]
    # Across paragraphs they still are.
    assert rows("x\n\nAaaa bbbbbb. Cccc dddd eeee ffff", max_chars=20)[0] == ("", "x\n\nAaaa bbbbbb.", 1, 3)
