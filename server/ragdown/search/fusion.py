"""Fusing the dense and lexical rankings: reciprocal rank (the default) or routed score fusion."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

RRF_K = 60
ROUTED_LEXICAL_WEIGHT = 0.8


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


def _merge(rankings: Rankings, share: Any) -> list[Candidate]:
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
    return by_score(_merge(rankings, lambda _source, rank, _entry: 1.0 / (k + rank + 1)))


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

    return by_score(_merge(rankings, share))
