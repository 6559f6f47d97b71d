"""Fusing the dense and lexical rankings: reciprocal rank (the default) or routed score fusion."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ragdown.indexing.embedders.base import GapEvidence

RRF_K = 60
ROUTED_LEXICAL_WEIGHT = 0.8
GAP_DEPTH = 10  # the dense gap is the best cosine minus the tenth
# A routed query's BM25 share when its evidence weight follows the dense gap too (an embedder with a
# measured `gap_evidence`, MiniLM): docs/search.md#evidence-follows-the-dense-gap.
ROUTED_GAP_LEXICAL_WEIGHT = 0.4


class Retrieved(NamedTuple):
    """One retriever's view of a chunk: its cosine to the query and its own raw score
    (the cosine again for dense, BM25 `_score` for lexical)."""

    row: dict[str, Any]
    similarity: float
    raw: float


Rankings = dict[str, list[Retrieved]]


@dataclass
class Candidate:
    """One fused chunk; `score` ranks it, `similarity` (cosine) is what gates use."""

    row: dict[str, Any]
    similarity: float
    score: float = 0.0
    sources: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return str(self.row["path"])

    @property
    def id(self) -> str:
        return str(self.row["id"])


def merge(rankings: Rankings, share: Any) -> list[Candidate]:
    """One candidate per chunk, in first-insertion order (dense first), scored by summing `share`."""
    fused: dict[str, Candidate] = {}
    for source, ranked in rankings.items():
        for rank, entry in enumerate(ranked):
            candidate = fused.get(entry.row["id"])
            if candidate is None:
                candidate = fused[entry.row["id"]] = Candidate(entry.row, entry.similarity)
            candidate.score += share(source, rank, entry)
            candidate.sources.append(source)
    return list(fused.values())


def by_score(candidates: list[Candidate]) -> list[Candidate]:
    """Descending and stable: ties keep first-insertion order."""
    return sorted(candidates, key=lambda c: c.score, reverse=True)


def rrf(rankings: Rankings, k: int = RRF_K) -> list[Candidate]:
    """Add 1/(k + rank + 1) per list."""
    return by_score(merge(rankings, lambda _source, rank, _entry: 1.0 / (k + rank + 1)))


def _min_max(values: list[float]) -> tuple[float, float]:
    return (min(values), max(values)) if values else (0.0, 0.0)


def score_fusion(rankings: Rankings, lexical_weight: float = ROUTED_LEXICAL_WEIGHT) -> list[Candidate]:
    """`w × lexical_n + (1 − w) × dense_n`, each side min–max normalised over its own pool
    (1.0 for all when a side's scores are equal); a chunk missing from a side gets 0 there."""
    bounds = {source: _min_max([e.raw for e in ranked]) for source, ranked in rankings.items()}
    weights = {"lexical": lexical_weight, "dense": 1.0 - lexical_weight}

    def share(source: str, _rank: int, entry: Retrieved) -> float:
        low, high = bounds[source]
        normalised = 1.0 if high == low else (entry.raw - low) / (high - low)
        return weights.get(source, 0.0) * normalised

    return by_score(merge(rankings, share))


def evidence(rankings: Rankings, lexical_weight: float) -> dict[str, float]:
    """Per chunk, `(1 − w) × cosine + w × BM25 / the pool's top BM25` (0 on the BM25 side for a chunk
    it did not return). Raw cosines and a top-scaled BM25 do not depend on the pool's depth, as
    min–max and z-scores do."""
    lexical = rankings.get("lexical", [])
    top = max((e.raw for e in lexical), default=0.0)
    bm25 = {e.row["id"]: e.raw / top for e in lexical} if top > 0 else {}
    cosines = {e.row["id"]: e.similarity for ranked in rankings.values() for e in ranked}
    return {i: (1.0 - lexical_weight) * c + lexical_weight * bm25.get(i, 0.0) for i, c in cosines.items()}


def rrf_with_evidence(
    rankings: Rankings, weight: float, lexical_weight: float, k: int = RRF_K
) -> list[Candidate]:
    """RRF plus `weight` × the chunk's score evidence: ranks decide, and how far apart the raw
    scores are breaks near-ties that rank positions alone cannot see. `weight` 0 is plain RRF."""
    fused = rrf(rankings, k)
    if weight == 0:
        return fused
    scores = evidence(rankings, lexical_weight)
    for candidate in fused:
        candidate.score += weight * scores[candidate.id]
    return by_score(fused)


def dense_gap(rankings: Rankings) -> float:
    """How clearly the dense side's best chunk stands out: its cosine minus the tenth's (the last's in a
    shorter pool; 0 without dense hits). docs/search.md#evidence-follows-the-dense-gap"""
    top = rankings.get("dense", [])[:GAP_DEPTH]
    return top[0].similarity - top[-1].similarity if top else 0.0


def evidence_for_gap(gap: float, rule: GapEvidence) -> float:
    """`rule.flat` at a gap of `flat_gap` or less, `rule.clear` at `clear_gap` or more, log-linear
    between: a flat dense top lets the raw scores decide, a clear one leaves it to the ranks."""
    t = min(1.0, max(0.0, (gap - rule.flat_gap) / (rule.clear_gap - rule.flat_gap)))
    return math.exp((1.0 - t) * math.log(rule.flat) + t * math.log(rule.clear))
