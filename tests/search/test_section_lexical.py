"""Section-level BM25 (docs/search.md#section-level-bm25): computed from the chunks' postings, mixed into
the BM25 pool, and a no-op where every section is one chunk or the pool came from LanceDB."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ragdown.indexing.lexicon import Lexicon
from ragdown.search.fusion import Rankings, Retrieved
from ragdown.search.hybrid import LexicalPool
from ragdown.search.pipeline import section_bm25
from ragdown.search.section_lexical import Sections, sections_for, with_sections

# b.md's one-chunk section comes first, so it wins the chunk-level tie with a.md's first chunk;
# a.md's "A › Long" holds the query's second word in its other chunk.
ROWS = [
    ("b.md", "B", "alpha zeta zeta zeta"),
    ("a.md", "A › Long", "alpha theta theta theta"),
    ("a.md", "A › Long", "beta kappa kappa kappa"),
    ("c.md", "C", "omega omega omega omega"),
    ("d.md", "D", "alpha alpha omega sigma"),
]
QUERY = "alpha beta"


def table(rows: list[tuple[str, str, str]]) -> pa.Table:
    return pa.table(
        {
            "id": [f"{p}#{i}" for i, (p, _, _) in enumerate(rows)],
            "path": [p for p, _, _ in rows],
            "heading": [h for _, h, _ in rows],
        }
    )


def pool(rows: list[tuple[str, str, str]], lexicon: Lexicon) -> tuple[Rankings, np.ndarray]:
    positions, scores = lexicon.top(QUERY, 10)
    ranked = [
        Retrieved({"id": f"{rows[p][0]}#{p}", "path": rows[p][0], "heading": rows[p][1]}, 0.0, s)
        for p, s in zip(positions.tolist(), scores.tolist(), strict=True)
    ]
    return {"dense": [], "lexical": ranked}, positions


def test_a_sections_score_is_bm25_over_its_chunks_together() -> None:
    lexicon = Lexicon.build(text for _, _, text in ROWS)
    sections = Sections.of(table(ROWS), lexicon)
    assert sections.count == 4
    assert sections.several
    joined = Lexicon.build([ROWS[0][2], f"{ROWS[1][2]} {ROWS[2][2]}", ROWS[3][2], ROWS[4][2]]).scores(QUERY)
    totals = sections.scores(lexicon, QUERY)
    assert totals is not None
    assert joined is not None
    order = [int(sections.of_row[i]) for i in (0, 1, 3, 4)]  # each section's number
    assert totals[order] == pytest.approx(joined, rel=1e-6)
    assert sections.scores(lexicon, "nothing matches") is None


def test_the_chunk_whose_section_holds_the_other_query_word_moves_up() -> None:
    lexicon = Lexicon.build(text for _, _, text in ROWS)
    rankings, positions = pool(ROWS, lexicon)
    before = [e.row["id"] for e in rankings["lexical"]]
    assert before.index("b.md#0") < before.index("a.md#1")  # a tie at chunk level, b.md first
    mixed = with_sections(rankings, positions, sections_for(table(ROWS), lexicon), lexicon, QUERY, 0.2)
    after = [e.row["id"] for e in mixed["lexical"]]
    assert after.index("a.md#1") < after.index("b.md#0")
    assert sorted(after) == sorted(before)  # the same pool, re-ordered
    raws = [e.raw for e in mixed["lexical"]]
    assert raws == sorted(raws, reverse=True)
    assert max(raws) <= 1.0
    sections = sections_for(table(ROWS), lexicon)
    assert with_sections(rankings, positions, sections, lexicon, QUERY, 0) is rankings


def test_nothing_changes_where_every_section_is_one_chunk() -> None:
    rows = [r for r in ROWS if r[2] != "beta kappa kappa kappa"]
    lexicon = Lexicon.build(text for _, _, text in rows)
    sections = Sections.of(table(rows), lexicon)
    assert not sections.several
    rankings, positions = pool(rows, lexicon)
    assert with_sections(rankings, positions, sections, lexicon, QUERY, 0.2) is rankings


def test_the_sections_are_built_once_per_set_of_postings() -> None:
    lexicon = Lexicon.build(text for _, _, text in ROWS)
    assert sections_for(table(ROWS), lexicon) is sections_for(table(ROWS), lexicon)


def test_a_pool_lancedb_answered_is_left_as_it_is() -> None:
    lexicon = Lexicon.build(text for _, _, text in ROWS)
    rankings, _ = pool(ROWS, lexicon)
    assert section_bm25(rankings, LexicalPool(None), QUERY, 0.2) is rankings
    assert section_bm25(rankings, None, QUERY, 0.2) is rankings
