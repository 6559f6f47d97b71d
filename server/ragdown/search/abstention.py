"""Abstention: a query the index knows nothing about gets no hits.

When none of the query's words occurs in the index (the BM25 side found nothing) and no chunk is
a strong vector match, the nearest chunks are noise: returning them invites an agent to treat them
as an answer.
"""

from __future__ import annotations

from ragdown.search.fusion import Rankings


def knows_nothing(rankings: Rankings, strong_similarity: float) -> bool:
    """No lexical match and no dense match at or above `strong_similarity`."""
    if rankings.get("lexical"):
        return False
    best = max((e.similarity for e in rankings.get("dense", [])), default=0.0)
    return best < strong_similarity
