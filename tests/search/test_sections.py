"""One hit per section (docs/search.md#one-hit-per-section), on fused lists built by hand."""

from __future__ import annotations

from ragdown.search.fusion import Candidate
from ragdown.search.sections import one_per_section


def cand(
    chunk_id: str,
    path: str,
    heading: str,
    lines: tuple[int, int],
    score: float,
    sources: list[str] | None = None,
) -> Candidate:
    row = {
        "id": chunk_id,
        "path": path,
        "heading": heading,
        "text": f"text of {chunk_id}",
        "line_start": lines[0],
        "line_end": lines[1],
    }
    return Candidate(row, similarity=score / 2, score=score, sources=sources or ["dense"])


# a.md's "A › Long" section is four chunks (lines 3-5, 7-9, 11-13, 15-17, one blank line apart);
# "A › Short" is one chunk; b.md has a section with the same heading as a.md's.
A1 = cand("a1", "a.md", "A › Long", (3, 5), 0.9)
A3 = cand("a3", "a.md", "A › Long", (11, 13), 0.8, ["lexical"])
B1 = cand("b1", "b.md", "A › Long", (3, 5), 0.7)
A2 = cand("a2", "a.md", "A › Long", (7, 9), 0.6)
S1 = cand("s1", "a.md", "A › Short", (20, 22), 0.5)
A5 = cand("a5", "a.md", "A › Long", (30, 31), 0.4)
FUSED = [A1, A3, B1, A2, S1, A5]


def ids(candidates: list[Candidate]) -> list[str]:
    return [c.id for c in candidates]


def test_each_section_keeps_its_best_chunk_where_it_ranks_and_the_next_sections_move_up() -> None:
    kept = one_per_section(FUSED)
    assert ids(kept) == ["a1", "b1", "s1"]
    # The same heading in another file is another section; scores and order are untouched.
    assert [c.score for c in kept] == [0.9, 0.7, 0.5]
    assert kept[0] is A1


def test_merging_joins_the_run_of_adjacent_chunks_around_the_best_one_in_line_order() -> None:
    merged = one_per_section(FUSED, merge=True)
    assert ids(merged) == ["a1", "b1", "s1"]
    long = merged[0]
    # a1 (3-5), a2 (7-9) and a3 (11-13) are adjacent; a5 (30-31) is not: lines 15-29 lie between.
    assert long.row["text"] == "text of a1\n\ntext of a2\n\ntext of a3"
    assert (long.row["line_start"], long.row["line_end"]) == (3, 13)
    assert (long.score, long.similarity) == (0.9, 0.45)  # the best chunk's scores
    assert long.id == "a1"
    assert long.sources == ["dense", "lexical"]
    assert A1.row["text"] == "text of a1"  # the fused candidate itself is not changed
    assert merged[1:] == [B1, S1]  # a section of one chunk is returned as it was
    assert merged[1] is B1


def test_merging_extends_backwards_from_a_best_chunk_in_the_middle() -> None:
    middle = [A2, A5, A1, S1]
    merged = one_per_section(middle, merge=True)
    assert ids(merged) == ["a2", "s1"]
    assert (merged[0].row["line_start"], merged[0].row["line_end"]) == (3, 9)
    assert merged[0].row["text"] == "text of a1\n\ntext of a2"


def test_chunks_two_blank_lines_apart_are_adjacent_three_are_not() -> None:
    two = [cand("x", "c.md", "C", (1, 2), 1.0), cand("y", "c.md", "C", (5, 6), 0.5)]
    assert one_per_section(two, merge=True)[0].row["line_end"] == 6
    three = [cand("x", "c.md", "C", (1, 2), 1.0), cand("y", "c.md", "C", (6, 7), 0.5)]
    assert one_per_section(three, merge=True)[0].row["line_end"] == 2


def test_an_empty_list_stays_empty() -> None:
    assert one_per_section([]) == []
    assert one_per_section([], merge=True) == []
