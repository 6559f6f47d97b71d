"""The golden file's contract (docs/evaluation.md#the-golden-file): what it accepts, each refusal as
one line naming the line, and the writer's lines read back the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdown.evaluation.golden import (
    GoldenError,
    GoldenLine,
    Target,
    append_golden,
    format_golden,
    matching_target,
    parse_golden,
    read_golden,
    write_golden,
)


def test_a_file_with_comments_blank_lines_and_every_key() -> None:
    text = "\n".join(
        [
            "// questions about the ops notes",
            "",
            '{"id": "pg", "query": "restore the dump", "expected": ["ops/pg.md#Restore", "ops/b.md"]}',
            '{"id": "none", "query": "the menu", "unanswerable": true, "note": "n", "source": "log"}',
            '{"id": "d", "query": "q", "expected": ["a.md"], "candidates": ["b.md#X"], "draft": true}',
        ]
    )
    pg, none, d = parse_golden(text)
    assert pg.expected == (Target("ops/pg.md", "Restore"), Target("ops/b.md"))
    assert pg.line == 3
    assert not pg.unanswerable
    assert none.unanswerable
    assert none.expected == ()
    assert none.line == 4
    assert (none.note, none.source) == ("n", "log")
    assert d.draft
    assert d.candidates == (Target("b.md", "X"),)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "{",
            "GOLDEN line 2: not valid JSON (Expecting property name enclosed in double quotes at column 2); ",
        ),
        ("[1]", "GOLDEN line 2: a JSON list, not an object; write one object per line"),
        (
            '{"id": "x", "query": "q", "expected": ["a.md"], "weight": 2}',
            'GOLDEN line 2: unknown key "weight"; ',
        ),
        ('{"query": "q", "expected": ["a.md"]}', 'GOLDEN line 2: "id" is missing; '),
        ('{"id": "x", "expected": ["a.md"]}', 'GOLDEN line 2: "query" is missing; '),
        ('{"id": "", "query": "q", "expected": ["a.md"]}', 'GOLDEN line 2: "id" is empty; '),
        ('{"id": "x", "query": "  ", "expected": ["a.md"]}', 'GOLDEN line 2: "query" is empty; '),
        ('{"id": 5, "query": "q", "expected": ["a.md"]}', 'GOLDEN line 2: "id" must be a string; got 5'),
        (
            '{"id": "x", "query": "q", "expected": "a.md"}',
            'GOLDEN line 2: "expected" must be a list of strings',
        ),
        (
            '{"id": "x", "query": "q", "expected": ["a.md"], "unanswerable": "no"}',
            '"unanswerable" must be true or false',
        ),
        ('{"id": "x", "query": "q"}', 'GOLDEN line 2: "expected" is empty; list the path or path#Heading'),
        ('{"id": "x", "query": "q", "expected": []}', 'GOLDEN line 2: "expected" is empty; '),
        (
            '{"id": "x", "query": "q", "expected": ["a.md"], "unanswerable": true}',
            'GOLDEN line 2: "expected" lists targets but "unanswerable" is true; remove one of them',
        ),
        (
            '{"id": "x", "query": "q", "expected": ["a.txt"]}',
            'GOLDEN line 2: "expected" target "a.txt" is not a Markdown',
        ),
        (
            '{"id": "x", "query": "q", "expected": ["../a.md"]}',
            'target "../a.md" is not a path inside the folder',
        ),
        (
            '{"id": "x", "query": "q", "expected": ["/etc/a.md"]}',
            'target "/etc/a.md" is not a path inside the folder',
        ),
        ('{"id": "x", "query": "q", "expected": ["a.md#"]}', 'target "a.md#" has an empty heading after #'),
        (
            '{"id": "x", "query": "q", "expected": ["a.md"], "candidates": ["b"]}',
            '"candidates" target "b" is not',
        ),
        (
            '{"id": "x", "id": "y", "query": "q", "expected": ["a.md"]}',
            'GOLDEN line 2: key "id" appears twice',
        ),
        (
            '{"id": "first", "query": "q", "expected": ["a.md"]}',
            'GOLDEN line 2: id "first" is already used on line 1',
        ),
    ],
)
def test_each_problem_is_one_line_naming_the_line(line: str, message: str) -> None:
    first = '{"id": "first", "query": "q", "expected": ["a.md"]}'
    with pytest.raises(GoldenError) as refused:
        parse_golden(f"{first}\n{line}\n")
    text = str(refused.value)
    assert "\n" not in text
    assert text.startswith("GOLDEN line ")
    assert "; " in text
    assert message in text


def test_a_long_query_is_refused_at_the_recall_bound() -> None:
    line = json.dumps({"id": "x", "query": "w" * 4001, "expected": ["a.md"]})
    with pytest.raises(GoldenError, match=r'^GOLDEN line 1: "query" has 4,001 characters \(at most 4,000\)'):
        parse_golden(line)
    assert parse_golden(json.dumps({"id": "x", "query": "w" * 4000, "expected": ["a.md"]}))


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match=r"^GOLDEN: no file at .*missing\.jsonl; "):
        read_golden(tmp_path / "missing.jsonl")
    bad = tmp_path / "latin.jsonl"
    bad.write_bytes(b'{"id": "a", "query": "q", "expected": ["a.md"]}\n{"id": "caf\xe9"}\n')
    with pytest.raises(GoldenError, match=r"^GOLDEN line 2: not UTF-8; save the file as UTF-8$"):
        read_golden(bad)


def test_targets_match_path_and_own_heading_case_insensitively() -> None:
    whole, section = Target.parse("ops/pg.md"), Target.parse("ops/pg.md#Restore  Steps")
    assert whole.matches("ops/pg.md", "")
    assert whole.matches("ops/pg.md", "Backups › Restore steps")
    assert section.matches("ops/pg.md", "Backups › restore steps")
    assert not section.matches("ops/pg.md", "Restore steps › Caveats")  # the hit's own heading only
    assert not section.matches("ops/other.md", "Restore steps")
    assert not whole.matches("ops/pg.md.bak.md", "")
    assert Target.parse("C# notes.md#Intro #2") == Target("C# notes.md", "Intro #2")
    assert Target.parse("./ops//pg.md") == Target("ops/pg.md")
    assert matching_target([whole, section], "ops/pg.md", "Restore steps") == 0
    assert matching_target([section, whole], "ops/pg.md", "Restore steps") == 0
    assert matching_target([section], "ops/pg.md", "Other") is None


def test_the_writer_writes_what_the_parser_reads(tmp_path: Path) -> None:
    lines = [
        GoldenLine("pg", "où est la sauvegarde ?", (Target("ops/pg.md", "Restore"), Target("b.md"))),
        GoldenLine("none", "menu", unanswerable=True, note="not in the notes", source="query log 2026-12-03"),
        GoldenLine("d", "q", (Target("a.md"),), candidates=(Target("c.md", "X"),), draft=True),
    ]
    text = format_golden(lines)
    assert text.splitlines()[0] == (
        '{"id": "pg", "query": "où est la sauvegarde ?", "expected": ["ops/pg.md#Restore", "b.md"], '
        '"unanswerable": false}'
    )
    back = parse_golden(text)
    assert [
        (b.id, b.query, b.expected, b.unanswerable, b.note, b.source, b.candidates, b.draft) for b in back
    ] == [(x.id, x.query, x.expected, x.unanswerable, x.note, x.source, x.candidates, x.draft) for x in lines]
    path = tmp_path / ".ragdown-golden.jsonl"
    write_golden(path, lines[:1])
    path.write_text(path.read_text() + "// kept\n" + format_golden(lines[1:2]).rstrip("\n"))
    append_golden(path, lines[2:])
    assert [g.id for g in read_golden(path)] == ["pg", "none", "d"]
    assert "// kept" in path.read_text()
