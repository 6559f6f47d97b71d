"""RRF and routed score fusion (docs/search.md#pools step 6, docs/search.md#identifier-routing)."""

from __future__ import annotations

import pytest

from ragdown.search.fusion import Retrieved, evidence, rrf, rrf_with_evidence, score_fusion


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
