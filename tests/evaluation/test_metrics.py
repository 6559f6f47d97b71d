"""The metrics on a tiny set checked by hand (docs/evaluation.md#the-metrics): each expected value is
the arithmetic in its comment, not the code's own output."""

from __future__ import annotations

import math

import pytest

from ragdown.evaluation.golden import Target
from ragdown.evaluation.metrics import (
    binary_gains,
    first_rank,
    golden_ndcg,
    hit_rate,
    mean_reciprocal_rank,
    ndcg_at,
    percentile,
    recall_at,
    scores,
)

A_X, A, C, D, E = (Target("a.md", "X"), Target("a.md"), Target("c.md"), Target("d.md"), Target("e.md"))

# Four answerable questions: (expected targets, hits as (path, heading path)).
Q1 = ([A_X], [("b.md", "B"), ("a.md", "A › X"), ("a.md", "A › Y")])  # first match at rank 2
Q2 = ([A, C], [("a.md", "A › Intro"), ("a.md", "A › Y"), ("c.md", "C")])  # a.md twice: counts once
Q3 = ([D], [*[("b.md", f"B › {i}") for i in range(6)], ("d.md", "D")])  # rank 7
Q4: tuple[list[Target], list[tuple[str, str]]] = ([E], [])  # the search abstained: no hits


def test_ranks_and_gains_by_hand() -> None:
    assert [first_rank(hits, targets) for targets, hits in (Q1, Q2, Q3, Q4)] == [2, 1, 7, None]
    assert binary_gains(Q1[1], Q1[0]) == [0, 1, 0]
    assert binary_gains(Q2[1], Q2[0]) == [1, 0, 1]  # the second a.md section is not a second answer


def test_ndcg_by_hand() -> None:
    # Q1: one relevant hit at rank 2 → 1/log2(3) = 0.63093; ideal: one at rank 1 → 1.
    assert golden_ndcg(Q1[1], Q1[0]) == pytest.approx(0.630930, abs=1e-6)
    # Q2: gains 1, 0, 1 → 1/log2(2) + 1/log2(4) = 1 + 0.5 = 1.5; ideal two → 1 + 1/log2(3) = 1.63093;
    # 1.5 / 1.63093 = 0.919721.
    assert golden_ndcg(Q2[1], Q2[0]) == pytest.approx(0.919721, abs=1e-6)
    # Q3: rank 7 → 1/log2(8) = 1/3.
    assert golden_ndcg(Q3[1], Q3[0]) == pytest.approx(1 / 3)
    assert golden_ndcg(Q4[1], Q4[0]) == 0.0
    # A match at rank 11 is past the depth: nDCG@10 0, while MRR still counts 1/11.
    late = [*[("b.md", f"B › {i}") for i in range(10)], ("d.md", "D")]
    assert golden_ndcg(late, [D]) == 0.0
    assert first_rank(late, [D]) == 11
    # Twelve targets: the ideal holds min(12, 10) = 10 relevant hits, so ten right hits score 1.
    many = [Target(f"t{i}.md") for i in range(12)]
    assert golden_ndcg([(f"t{i}.md", "") for i in range(10)], many) == pytest.approx(1.0)


def test_the_set_by_hand() -> None:
    ranks = [2, 1, 7, None]
    assert hit_rate(ranks, 1) == 0.25  # Q2 only: 1/4
    assert hit_rate(ranks, 5) == 0.5  # Q1 and Q2: 2/4
    # MRR: (1/2 + 1/1 + 1/7 + 0) / 4 = 1.642857 / 4 = 0.410714
    assert mean_reciprocal_rank(ranks) == pytest.approx(0.410714, abs=1e-6)
    ndcgs = [golden_ndcg(hits, targets) for targets, hits in (Q1, Q2, Q3, Q4)]
    # Latencies: sorted 1, 2, 3, 4, 5; p50 is index round(0.5 × 4) = 2 → 3, p95 round(0.95 × 4) = 4 → 5.
    totals = scores(ranks, ndcgs, [True, False], [5.0, 1.0, 3.0, 2.0, 4.0])
    assert (totals.answerable, totals.hit1, totals.hit5) == (4, 0.25, 0.5)
    # nDCG@10: (0.630930 + 0.919721 + 0.333333 + 0) / 4 = 1.883984 / 4 = 0.470996
    assert totals.ndcg10 == pytest.approx(0.470996, abs=1e-6)
    # Two unanswerable questions: one refused (no hits), one answered anyway → abstention 1/2.
    assert (totals.unanswerable, totals.refused, totals.answered_anyway, totals.abstention) == (2, 1, 1, 0.5)
    assert (totals.p50_ms, totals.p95_ms) == (3.0, 5.0)
    assert totals.named() == {"hit@1": 0.25, "hit@5": 0.5, "MRR": totals.mrr, "nDCG@10": totals.ndcg10}


def test_an_empty_set_scores_zero_and_no_abstention() -> None:
    totals = scores([], [], [], [])
    assert (totals.hit1, totals.mrr, totals.ndcg10, totals.abstention, totals.p95_ms) == (
        0.0,
        0.0,
        0.0,
        None,
        0.0,
    )


def test_graded_ndcg_and_recall_as_the_scifact_bench_uses_them() -> None:
    relevant = {"d2": 2, "d4": 1}
    # DCG: d2 at rank 2 → 2/log2(3) = 1.261860; ideal 2, 1 → 2/1 + 1/log2(3) = 2.630930;
    # 1.261860 / 2.630930 = 0.479625.
    assert ndcg_at(["d1", "d2", "d3"], relevant) == pytest.approx(2 / math.log2(3) / (2 + 1 / math.log2(3)))
    assert ndcg_at(["d1", "d2", "d3"], relevant) == pytest.approx(0.479625, abs=1e-6)
    assert recall_at(["d1", "d2", "d3", "d4"], relevant, 2) == 0.5  # d2 of {d2, d4}
    assert recall_at(["d1", "d2", "d3", "d4"], relevant, 4) == 1.0
    assert ndcg_at(["d1"], {}) == 0.0


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 0.5) == 0.0
    assert percentile([7.0], 0.95) == 7.0
    # 20 values 1..20: p95 is index round(0.95 × 19) = round(18.05) = 18 → 19.
    assert percentile([float(v) for v in range(20, 0, -1)], 0.95) == 19.0
