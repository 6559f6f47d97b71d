"""The gates of docs/hook.md#gates steps 5–8, each recording which chunks it dropped and why.

A gate uses each chunk's cosine `similarity`, never the fused score: the fused score says which
chunk is best for this query, not whether any chunk is related at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragdown.search.aliases import contains_whole, named_alias
from ragdown.search.caps import cap_per_document
from ragdown.search.hybrid import Hit
from ragdown.search.routing import strong_names

DropReason = str  # "min_score" | "seen" | "ratio" | "top_k" | "max_chars"


@dataclass
class Gated:
    hits: list[Hit]
    dropped: dict[str, DropReason] = field(default_factory=dict)  # chunk id → the gate that dropped it


def similarity_gates(
    candidates: list[Hit], seen: frozenset[str], min_score: float, min_ratio: float
) -> Gated:
    """Steps 5–6: the absolute floor and the session memory, then the floor relative to the best."""
    dropped: dict[str, DropReason] = {}
    passing: list[Hit] = []
    for hit in candidates:
        if hit.similarity < min_score:
            dropped[hit.id] = "min_score"
        elif hit.id in seen:
            dropped[hit.id] = "seen"
        else:
            passing.append(hit)
    passing.sort(key=lambda h: h.similarity, reverse=True)
    best = passing[0].similarity if passing else 0.0
    kept = []
    for hit in passing:
        if hit.similarity >= best * min_ratio:
            kept.append(hit)
        else:
            dropped[hit.id] = "ratio"
    return Gated(kept, dropped)


def take_top(gated: Gated, top_k: int, max_per_document: int) -> Gated:
    """Step 7: the per-document cap on the cosine-sorted list, then `top_k`."""
    ordered = cap_per_document(gated.hits, max_per_document, lambda h: h.path)
    for hit in ordered[top_k:]:
        gated.dropped[hit.id] = "top_k"
    return Gated(ordered[:top_k], gated.dropped)


def quoted_name_bypass(prompt: str, candidates: list[Hit], seen: frozenset[str]) -> Hit | None:
    """Step 8a: the best-ranked unseen candidate whose text holds a strong name the prompt quotes."""
    names = strong_names(prompt)
    if not names:
        return None
    return next(
        (h for h in candidates if h.id not in seen and any(contains_whole(h.text, n) for n in names)), None
    )


def alias_bypass(prompt: str, candidates: list[Hit], seen: frozenset[str]) -> Hit | None:
    """Step 8b: the best-ranked unseen candidate of a document the prompt names by alias."""
    return next((h for h in candidates if h.id not in seen and named_alias(prompt, h.aliases)), None)


def apply_bypasses(
    prompt: str, candidates: list[Hit], seen: frozenset[str], gated: Gated, top_k: int
) -> Gated:
    """Step 8: each bypass goes first, whatever its cosine; gated hits make room from the end."""
    first: list[Hit] = []
    for bypass in (quoted_name_bypass, alias_bypass):
        hit = bypass(prompt, candidates, seen)
        if hit is not None and hit.id not in {h.id for h in first}:
            first.append(hit)
    if not first:
        return gated
    for hit in first:
        gated.dropped.pop(hit.id, None)
    rest = [h for h in gated.hits if h.id not in {f.id for f in first}]
    combined = (first + rest)[: max(top_k, 0)]
    for hit in (first + rest)[max(top_k, 0) :]:
        gated.dropped[hit.id] = "top_k"
    return Gated(combined, gated.dropped)
