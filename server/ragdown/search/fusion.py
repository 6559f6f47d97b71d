"""Reciprocal rank fusion of the dense and lexical rankings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RRF_K = 60


@dataclass
class Candidate:
    """One chunk as the retrievers saw it; `similarity` is its cosine to the query."""

    row: dict[str, Any]
    similarity: float
    score: float = 0.0
    sources: list[str] = field(default_factory=list)


def rrf(rankings: dict[str, list[tuple[dict[str, Any], float]]], k: int = RRF_K) -> list[Candidate]:
    """Add 1/(k + rank + 1) per list; stable sort, so ties keep first-insertion (dense, then lexical)."""
    fused: dict[str, Candidate] = {}
    for source, ranked in rankings.items():
        for rank, (row, similarity) in enumerate(ranked):
            candidate = fused.get(row["id"])
            if candidate is None:
                candidate = fused[row["id"]] = Candidate(row, similarity)
            candidate.score += 1.0 / (k + rank + 1)
            candidate.sources.append(source)
    return sorted(fused.values(), key=lambda c: c.score, reverse=True)
