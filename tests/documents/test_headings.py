"""docs/documents.md#heading-ranges heading ranges."""

from __future__ import annotations

import pytest

from ragdown.documents.headings import heading_range, heading_range_in_lines
from ragdown.documents.lines import split_lines

PG = "# Postgres\n\n## Vacuum\n\nNightly on postgres.\n\n## Restore\n\nRun pg_restore.\n"


def section(text: str, anchor: str) -> str | None:
    found = heading_range(text, anchor)
    if found is None:
        return None
    start, end = found
    return "\n".join(split_lines(text)[start - 1 : end])


def test_spec_vector_keeps_the_trailing_blank_line() -> None:
    assert heading_range(PG, "Vacuum") == (3, 6)
    assert section(PG, "Vacuum") == "## Vacuum\n\nNightly on postgres.\n"


def test_a_section_at_the_end_runs_to_the_last_line_counting_the_trailing_empty_one() -> None:
    assert heading_range(PG, "Restore") == (7, 10)
    assert heading_range("## Only\ntext", "Only") == (1, 2)


def test_only_the_last_part_of_a_nested_anchor_is_matched() -> None:
    assert heading_range(PG, "Postgres#Vacuum") == (3, 6)
    assert heading_range(PG, "Nowhere#Else#Vacuum") == (3, 6)
    assert heading_range(PG, "Vacuum#Nowhere") is None


@pytest.mark.parametrize("anchor", ["vacuum", "VACUUM", "  Vacuum  ", "Postgres#  vAcUuM "])
def test_matching_trims_and_lowercases_both_sides(anchor: str) -> None:
    assert heading_range("text\n###   Vacuum   ##\nbody", anchor) == (2, 3)


def test_deeper_headings_stay_inside_and_the_same_or_a_higher_level_ends_it() -> None:
    text = "# A\n## B\n### C\nc\n#### D\n## E\n# F\n"
    assert heading_range(text, "B") == (2, 5)
    assert heading_range(text, "C") == (3, 5)
    assert heading_range(text, "E") == (6, 6)
    assert heading_range(text, "A") == (1, 6)
    assert heading_range(text, "F") == (7, 8)


def test_the_first_matching_heading_wins() -> None:
    text = "# One\n## Notes\nfirst\n# Two\n## Notes\nsecond\n"
    assert heading_range(text, "One#Notes") == (2, 3)
    assert heading_range(text, "Two#Notes") == (2, 3)


def test_headings_inside_fences_neither_match_nor_end_a_section() -> None:
    text = "## Setup\n```sh\n## Vacuum\n# comment\n```\nafter\n~~~\n## Hidden\n~~~~\n## Vacuum\nreal\n"
    assert heading_range(text, "Setup") == (1, 9)
    assert heading_range(text, "Vacuum") == (10, 12)
    assert heading_range(text, "Hidden") is None


def test_an_unclosed_fence_hides_every_later_heading() -> None:
    assert heading_range("# A\n````\n## B\n```\n## C\n", "C") is None


@pytest.mark.parametrize("anchor", ["Missing", "", "   ", "Vacuum#", "tag"])
def test_no_match_gives_none_so_the_caller_reads_everything(anchor: str) -> None:
    assert heading_range(PG + "#tag\n", anchor) is None


def test_crlf_and_given_lines() -> None:
    assert heading_range("intro\r\n## B\r\nx\r\n# C\r\n", "b") == (2, 3)
    assert heading_range_in_lines(["intro", "## B", "x"], "B") == (2, 3)
