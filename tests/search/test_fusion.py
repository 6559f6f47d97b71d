"""RRF, routed score fusion and the evidence weight (docs/search.md#fusion,
docs/search.md#identifier-routing, docs/search.md#evidence-follows-the-dense-gap)."""

from __future__ import annotations

import pytest

from ragdown.indexing.embedders.base import GapEvidence
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.search.aliases import ALIAS_BOOST
from ragdown.search.fusion import (
    Rankings,
    Retrieved,
    dense_gap,
    evidence,
    evidence_for_gap,
    rrf,
    rrf_with_evidence,
    score_fusion,
)
from ragdown.search.pipeline import fuse
from ragdown.search.policy import SearchPolicy


def entry(chunk_id: str, similarity: float, raw: float | None = None) -> Retrieved:
    return Retrieved(
        {"id": chunk_id, "path": f"{chunk_id}.md"}, similarity, similarity if raw is None else raw
    )


def test_rrf_scores_and_stable_ties() -> None:
    fused = rrf({"dense": [entry("a", 0.9), entry("b", 0.8)], "lexical": [entry("c", 0.1), entry("a", 0.9)]})
    assert [x.id for x in fused] == ["a", "c", "b"]
    assert [x.score for x in fused] == pytest.approx([1 / 61 + 1 / 62, 1 / 61, 1 / 62])
    assert [x.sources for x in fused] == [["dense", "lexical"], ["lexical"], ["dense"]]
    assert fused[0].similarity == 0.9  # the first list's cosine is kept


def test_rrf_ties_keep_dense_order_then_lexical_only() -> None:
    fused = rrf({"dense": [entry("a", 0.5)], "lexical": [entry("b", 0.4)]})
    assert [x.id for x in fused] == ["a", "b"]
    assert fused[0].score == fused[1].score


def test_score_fusion_weighs_bm25_at_0_8_over_min_max_normalised_sides() -> None:
    dense = [entry("a", 0.9), entry("b", 0.7), entry("c", 0.5)]
    lexical = [entry("c", 0.5, raw=12.0), entry("b", 0.7, raw=7.0), entry("d", 0.2, raw=2.0)]
    fused = score_fusion({"dense": dense, "lexical": lexical})
    scores = {x.id: x.score for x in fused}
    assert scores["c"] == pytest.approx(0.8 * 1.0 + 0.2 * 0.0)
    assert scores["b"] == pytest.approx(0.8 * 0.5 + 0.2 * 0.5)
    assert scores["a"] == pytest.approx(0.2 * 1.0)  # absent from the lexical side: 0 there
    assert scores["d"] == pytest.approx(0.0)
    assert [x.id for x in fused] == ["c", "b", "a", "d"]


def test_score_fusion_gives_every_entry_one_when_a_side_is_flat() -> None:
    fused = score_fusion(
        {"dense": [entry("a", 0.4)], "lexical": [entry("b", 0.3, raw=5.0), entry("c", 0.3, raw=5.0)]}
    )
    scores = {x.id: x.score for x in fused}
    assert scores == pytest.approx({"a": 0.2, "b": 0.8, "c": 0.8})
    assert [x.id for x in fused] == ["b", "c", "a"]


def test_score_fusion_lets_an_exact_lexical_match_beat_a_dense_favourite() -> None:
    """What routing is for: under RRF the dense favourite wins; by score the BM25 winner does."""
    dense = [entry("prose", 0.8), entry("other", 0.7), entry("ident", 0.6)]
    lexical = [entry("ident", 0.6, raw=9.0), entry("prose", 0.8, raw=3.0), entry("other", 0.7, raw=1.0)]
    assert rrf({"dense": dense, "lexical": lexical})[0].id == "prose"
    assert score_fusion({"dense": dense, "lexical": lexical})[0].id == "ident"


def test_evidence_mixes_the_raw_cosine_with_bm25_scaled_by_the_pool_top() -> None:
    dense = [entry("a", 0.9), entry("b", 0.5)]
    lexical = [entry("b", 0.5, raw=8.0), entry("c", 0.2, raw=2.0)]
    scores = evidence({"dense": dense, "lexical": lexical}, lexical_weight=0.3)
    assert scores == pytest.approx({"a": 0.7 * 0.9, "b": 0.7 * 0.5 + 0.3 * 1.0, "c": 0.7 * 0.2 + 0.3 * 0.25})


def test_evidence_without_bm25_is_the_weighted_cosine() -> None:
    assert evidence({"dense": [entry("a", 0.6)]}, 0.3) == pytest.approx({"a": 0.42})
    assert evidence({"dense": [entry("a", 0.6)], "lexical": []}, 0.5) == pytest.approx({"a": 0.3})


def test_rrf_with_evidence_zero_is_plain_rrf() -> None:
    rankings = {"dense": [entry("a", 0.9), entry("b", 0.8)], "lexical": [entry("b", 0.8, raw=3.0)]}
    plain = rrf(rankings)
    mixed = rrf_with_evidence(rankings, 0.0, 0.3)
    assert [(c.id, c.score) for c in mixed] == [(c.id, c.score) for c in plain]


def test_evidence_breaks_a_rank_tie_by_how_far_apart_the_scores_are() -> None:
    """Under RRF, a dense favourite and a BM25 favourite tie; the raw scores say which is stronger."""
    close = {
        "dense": [entry("d", 0.52), entry("l", 0.50)],
        "lexical": [entry("l", 0.50, raw=9.0), entry("d", 0.52, raw=1.0)],
    }
    assert rrf(close)[0].score == pytest.approx(rrf(close)[1].score)
    mixed = rrf_with_evidence(close, 0.04, 0.3)
    assert [c.id for c in mixed] == ["l", "d"]
    assert mixed[0].score == pytest.approx(1 / 61 + 1 / 62 + 0.04 * (0.7 * 0.50 + 0.3 * 1.0))


# --- the evidence weight follows the dense gap (docs/search.md#evidence-follows-the-dense-gap) -------

RULE = GapEvidence(flat=1.0, clear=0.01, flat_gap=0.10, clear_gap=0.20)


def test_dense_gap_is_the_best_cosine_minus_the_tenth() -> None:
    dense = [entry(f"c{i}", 0.9 - 0.02 * i) for i in range(15)]
    assert dense_gap({"dense": dense}) == pytest.approx(0.9 - (0.9 - 0.02 * 9))
    assert dense_gap({"dense": dense[:4]}) == pytest.approx(0.06)  # a shorter pool: its last
    assert dense_gap({"dense": [], "lexical": [entry("l", 0.5, raw=3.0)]}) == 0.0
    assert dense_gap({}) == 0.0


@pytest.mark.parametrize(
    ("gap", "weight"),
    [(0.0, 1.0), (0.10, 1.0), (0.125, 0.01**0.25), (0.15, 0.1), (0.20, 0.01), (0.5, 0.01)],
)
def test_evidence_weight_is_flat_then_log_linear_then_clear(gap: float, weight: float) -> None:
    assert evidence_for_gap(gap, RULE) == pytest.approx(weight)


class Settings(HashEmbedder):
    """An embedder with the settings `pipeline.fuse` reads set for these tests."""

    score_evidence = 0.04
    lexical_weight = 0.3
    routed_lexical_weight = 0.6
    gap_evidence: GapEvidence | None = RULE


def contest(spread: float, aliases: str = "") -> Rankings:
    """`ranks` leads by rank (dense 2nd, BM25 1st), `scores` by raw score (dense 1st with a higher cosine,
    BM25 3rd at 0.95 of the top): RRF prefers `ranks` by 1/62 − 1/63 (0.00026), the evidence `scores` by
    0.020, so `scores` wins from e ≈ 0.013 up. Eight dense-only chunks step down from 0.55 to `spread`
    below the best cosine (spread ≥ 0.05): the dense gap."""

    def row(chunk_id: str) -> dict[str, object]:
        return {"id": chunk_id, "path": f"{chunk_id}.md", "aliases": aliases}

    dense = [Retrieved(row("scores"), 0.60, 0.60), Retrieved(row("ranks"), 0.55, 0.55)]
    low = 0.60 - spread  # the tenth cosine; the fillers step down to it from `ranks`' 0.55
    dense += [Retrieved(row(f"d{i}"), 0.55 - (0.55 - low) * (i + 1) / 8, 0.0) for i in range(8)]
    lexical = [
        Retrieved(row("ranks"), 0.55, 10.0),
        Retrieved(row("other"), 0.20, 9.8),
        Retrieved(row("scores"), 0.60, 9.5),
    ]
    return {"dense": dense, "lexical": lexical}


def fused_order(rankings: Rankings, query: str, policy: SearchPolicy | None = None) -> list[str]:
    fused, _ = fuse(rankings, query, policy or SearchPolicy(), Settings())
    return [c.id for c in fused[:2]]


def test_a_flat_dense_top_lets_the_raw_scores_decide_and_a_clear_one_the_ranks() -> None:
    query = "which chunk answers this"
    assert dense_gap(contest(0.05)) == pytest.approx(0.05)
    assert fused_order(contest(0.05), query) == ["scores", "ranks"]  # gap 0.05: e = 1
    assert fused_order(contest(0.30), query) == ["ranks", "scores"]  # gap 0.30: e = 0.01
    # the measured constant weight, what the embedder had before: the evidence wins here either way
    fixed = SearchPolicy(score_evidence=0.04)
    assert (
        fused_order(contest(0.05), query, fixed)
        == fused_order(contest(0.30), query, fixed)
        == [
            "scores",
            "ranks",
        ]
    )
    assert fused_order(contest(0.30), query, SearchPolicy(score_evidence=0.0)) == ["ranks", "scores"]


def test_the_fused_score_is_rrf_plus_the_gap_weighted_evidence() -> None:
    rankings = contest(0.15)  # gap 0.15: e = 0.1
    fused, routed = fuse(rankings, "which chunk answers this", SearchPolicy(), Settings())
    assert not routed
    expected = rrf_with_evidence(contest(0.15), 0.1, 0.3)
    assert [c.id for c in fused] == [c.id for c in expected]
    assert [c.score for c in fused] == pytest.approx([c.score for c in expected])


def test_a_routed_query_follows_the_dense_gap_at_bm25_share_0_4() -> None:
    routed = "which chunk runs pg_restore"
    fused, was_routed = fuse(contest(0.05), routed, SearchPolicy(), Settings())  # gap 0.05: e = 1
    assert was_routed
    # by hand: RRF + 1 × (0.6 × cosine + 0.4 × BM25 / 10)
    scores = 1 / 61 + 1 / 63 + (0.6 * 0.60 + 0.4 * 9.5 / 10)
    ranks = 1 / 62 + 1 / 61 + (0.6 * 0.55 + 0.4 * 10.0 / 10)
    assert [c.id for c in fused[:2]] == ["scores", "ranks"]
    assert [c.score for c in fused[:2]] == pytest.approx([scores, ranks])
    # a clear dense top (gap 0.30): e = 0.01, and the ranks decide
    clear, _ = fuse(contest(0.30), routed, SearchPolicy(), Settings())
    assert [c.id for c in clear[:2]] == ["ranks", "scores"]
    assert clear[0].score == pytest.approx(1 / 62 + 1 / 61 + 0.01 * (0.6 * 0.55 + 0.4))

    # an embedder without the rule keeps its constant weight and routed BM25 share
    class Constant(Settings):
        gap_evidence = None

    constant, _ = fuse(contest(0.05), routed, SearchPolicy(), Constant())
    assert [c.score for c in constant] == pytest.approx(
        [c.score for c in rrf_with_evidence(contest(0.05), 0.04, 0.6)]
    )


def test_routed_gap_off_and_alias_naming_queries_keep_the_measured_weight() -> None:
    routed = "which chunk runs pg_restore"
    fused, was_routed = fuse(contest(0.05), routed, SearchPolicy(routed_gap=False), Settings())
    assert was_routed
    expected = rrf_with_evidence(contest(0.05), 0.04, 0.6)
    assert [c.id for c in fused] == [c.id for c in expected]
    assert [c.score for c in fused] == pytest.approx([c.score for c in expected])
    # a codename leaves the dense side flat; the boost lifts every chunk alike, the 0.04 evidence orders them
    named, _ = fuse(contest(0.05, "Basalt"), "what does Basalt run", SearchPolicy(), Settings())
    plain = rrf_with_evidence(contest(0.05, "Basalt"), 0.04, 0.3)
    assert [c.id for c in named] == [c.id for c in plain]
    assert [c.score for c in named] == pytest.approx([c.score + ALIAS_BOOST for c in plain])


def test_an_embedder_without_the_rule_keeps_its_constant_weight() -> None:
    class Constant(Settings):
        gap_evidence = None

    fused, _ = fuse(contest(0.05), "which chunk answers this", SearchPolicy(), Constant())
    expected = rrf_with_evidence(contest(0.05), 0.04, 0.3)
    assert [c.id for c in fused] == [c.id for c in expected]
    assert [c.score for c in fused] == pytest.approx([c.score for c in expected])
