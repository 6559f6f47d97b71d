"""Retrieval metrics, one implementation for `ragdown eval` and the benchmarks in bench/
(docs/evaluation.md#the-metrics), so the numbers a user computes and the numbers the project
publishes come from the same arithmetic.

A rank is 1-based; None means the answer was not among the hits. Every mean is over the questions
it names (the answerable ones), and a missed question counts 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragdown.evaluation.golden import Target, matching_target
from ragdown.evaluation.options import NDCG_DEPTH as NDCG_DEPTH

# A hit as scoring sees it: its path and its heading path (`Ops › Restore`).
Located = tuple[str, str]


def first_rank(hits: Sequence[Located], targets: Sequence[Target]) -> int | None:
    """The rank of the first hit that matches any target, or None."""
    return next(
        (
            i
            for i, (path, heading) in enumerate(hits, 1)
            if matching_target(targets, path, heading) is not None
        ),
        None,
    )


def binary_gains(hits: Sequence[Located], targets: Sequence[Target]) -> list[int]:
    """1 for each hit that matches a target no earlier hit matched, else 0: a target counts once,
    so three sections of one expected file do not score as three answers."""
    found: set[int] = set()
    gains: list[int] = []
    for path, heading in hits:
        index = next((i for i, t in enumerate(targets) if i not in found and t.matches(path, heading)), None)
        if index is not None:
            found.add(index)
        gains.append(0 if index is None else 1)
    return gains


def hit_rate(ranks: Sequence[int | None], k: int) -> float:
    """The share of questions whose first matching hit is within the first k (hit@k)."""
    return sum(r is not None and r <= k for r in ranks) / len(ranks) if ranks else 0.0


def reciprocal_rank(rank: int | None) -> float:
    return 0.0 if rank is None else 1 / rank


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """MRR: the mean of 1/rank of the first matching hit, 0 for a question with none."""
    return sum(reciprocal_rank(r) for r in ranks) / len(ranks) if ranks else 0.0


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain: the gain at rank i weighs 1/log2(i + 1)."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg(gains: Sequence[float], ideal: Sequence[float], k: int = NDCG_DEPTH) -> float:
    """DCG of the first k gains over the DCG of the best order of `ideal`; 0 when nothing is relevant."""
    best = dcg(sorted(ideal, reverse=True)[:k])
    return dcg(gains[:k]) / best if best else 0.0


def golden_ndcg(hits: Sequence[Located], targets: Sequence[Target], k: int = NDCG_DEPTH) -> float:
    """nDCG@k with binary relevance (`binary_gains`): the ideal ranks min(len(targets), k) relevant
    hits first."""
    return ndcg(binary_gains(hits[:k], targets), [1] * min(len(targets), k), k)


def ndcg_at(ranked: Sequence[str], relevant: Mapping[str, float], k: int = NDCG_DEPTH) -> float:
    """Graded nDCG@k over ranked ids, each id's gain from `relevant` (BEIR's qrels, bench/scifact.py)."""
    return ndcg([relevant.get(d, 0) for d in ranked[:k]], list(relevant.values()), k)


def recall_at(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """The share of `relevant` ids (of positive gain) among the first k ranked ids."""
    return len(set(ranked[:k]) & {d for d, g in relevant.items() if g > 0}) / max(1, len(relevant))


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (q in 0..1) of `values`; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Scores:
    """A golden set's numbers: the ranking metrics over the answerable questions, abstention over
    the unanswerable ones, latency over every search."""

    answerable: int
    hit1: float
    hit5: float
    mrr: float
    ndcg10: float
    unanswerable: int
    refused: int
    p50_ms: float
    p95_ms: float

    @property
    def answered_anyway(self) -> int:
        return self.unanswerable - self.refused

    @property
    def abstention(self) -> float | None:
        """The share of unanswerable questions refused; None when the set has none."""
        return self.refused / self.unanswerable if self.unanswerable else None

    def named(self) -> dict[str, float]:
        """The four ranking metrics by the names bounds and tables use."""
        return {"hit@1": self.hit1, "hit@5": self.hit5, "MRR": self.mrr, "nDCG@10": self.ndcg10}


def scores(
    ranks: Sequence[int | None],
    ndcgs: Sequence[float],
    refusals: Sequence[bool],
    latencies_ms: Sequence[float],
) -> Scores:
    """`ranks` and `ndcgs` per answerable question, `refusals` per unanswerable one (True: no hits),
    `latencies_ms` per search of either."""
    return Scores(
        answerable=len(ranks),
        hit1=hit_rate(ranks, 1),
        hit5=hit_rate(ranks, 5),
        mrr=mean_reciprocal_rank(ranks),
        ndcg10=sum(ndcgs) / len(ndcgs) if ndcgs else 0.0,
        unanswerable=len(refusals),
        refused=sum(refusals),
        p50_ms=percentile(latencies_ms, 0.5),
        p95_ms=percentile(latencies_ms, 0.95),
    )
