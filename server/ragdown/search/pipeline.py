"""The search pipeline of docs/search.md#pipeline, composed from one module per rule.

retrieve (pools, pre-filters) → abstain? → section-level BM25 mixed into the BM25 pool → fuse
(routed: BM25-led; else RRF + evidence weighted by the dense gap + alias boost) → heading evidence →
one hit per section → per-document cap → limit → follow links (within the linking document's folder).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragdown.indexing.embedders.base import Embedder
from ragdown.indexing.searched import SearchedStore
from ragdown.search.abstention import knows_nothing
from ragdown.search.aliases import boost_aliases, named_documents
from ragdown.search.caps import cap_per_document
from ragdown.search.filters import Prefilter, SearchFilters
from ragdown.search.follow_links import FolderOf, LinkResolver, follow_links, whole_index
from ragdown.search.fusion import (
    ROUTED_GAP_LEXICAL_WEIGHT,
    Candidate,
    Rankings,
    dense_gap,
    evidence_for_gap,
    rrf_with_evidence,
    score_fusion,
)
from ragdown.search.headings import boost_headings
from ragdown.search.hybrid import Hit, LexicalPool, pool_size, retrieve, start_lexical, to_hit
from ragdown.search.policy import SearchPolicy
from ragdown.search.routing import is_routed
from ragdown.search.section_lexical import sections_for, with_sections
from ragdown.search.sections import one_per_section


@dataclass(frozen=True)
class SearchOutcome:
    """The hits, and what the pipeline decided on the way (for the query log and benchmarks)."""

    hits: list[Hit]
    routed: bool
    abstained: bool
    vector: np.ndarray


def fuse(
    rankings: Rankings, query: str, policy: SearchPolicy, embedder: Embedder
) -> tuple[list[Candidate], bool]:
    """A query that names something leans on BM25; every other query gets RRF plus the score evidence
    (its weight following the dense gap where the embedder measured that) and the alias boost."""
    weight = policy.score_evidence if policy.score_evidence is not None else embedder.score_evidence
    routed = policy.route_identifiers and is_routed(query)
    rule = embedder.gap_evidence if policy.score_evidence is None else None
    if routed and weight == 0:
        return score_fusion(rankings), True
    if routed and rule is not None and policy.routed_gap:
        weight = evidence_for_gap(dense_gap(rankings), rule)
        return rrf_with_evidence(rankings, weight, ROUTED_GAP_LEXICAL_WEIGHT), True
    if routed:
        return rrf_with_evidence(rankings, weight, embedder.routed_lexical_weight), True
    named = named_documents((e.row for ranked in rankings.values() for e in ranked), query)
    if rule is not None and not named:
        weight = evidence_for_gap(dense_gap(rankings), rule)  # docs/search.md#evidence-follows-the-dense-gap
    fused = rrf_with_evidence(rankings, weight, embedder.lexical_weight)
    return (boost_aliases(fused, query, named) if policy.alias_boost else fused), False


def section_bm25(rankings: Rankings, lexical: LexicalPool | None, query: str, share: float) -> Rankings:
    """The BM25 pool's scores mixed with their sections' (docs/search.md#section-level-bm25), when the pool
    came from the postings in memory; a pool LanceDB answered is left as it is."""
    if share == 0 or lexical is None or lexical.found is None or lexical.snapshot is None:
        return rankings
    postings = lexical.snapshot.lexicon.ready()
    if postings is None:
        return rankings
    sections = sections_for(lexical.snapshot.columns, postings)
    return with_sections(rankings, lexical.found[0], sections, postings, query, share)


def run_search(
    store: SearchedStore,
    embedder: Embedder,
    query: str,
    limit: int,
    filters: SearchFilters | None = None,
    policy: SearchPolicy | None = None,
    folder_of: FolderOf = whole_index,
    *,
    folders_mode: bool = False,
) -> SearchOutcome:
    policy = policy or SearchPolicy()
    store.refresh()
    prefilter = Prefilter(filters or SearchFilters(), store.superseded_paths(folders_mode))
    lexical = start_lexical(store, query, pool_size(limit), prefilter)
    vector = embedder.embed_query(query)
    rankings = retrieve(store, query, vector, pool_size(limit), prefilter, lexical)
    if policy.abstain and knows_nothing(rankings, embedder.min_score):
        return SearchOutcome([], False, True, vector)
    rankings = section_bm25(rankings, lexical, query, policy.section_share)
    fused, routed = fuse(rankings, query, policy, embedder)
    fused = boost_headings(fused, query, policy.heading_boost)
    if policy.one_per_section:
        fused = one_per_section(fused, policy.merge_sections)
    ranked = cap_per_document(fused, policy.max_per_document, lambda c: c.path)
    hits = [to_hit(c) for c in ranked[:limit]]
    if policy.follow_links > 0:
        resolver = LinkResolver(store.document_aliases(), folder_of)
        hits = follow_links(hits, policy.follow_links, resolver, store, prefilter.sql(), vector, limit)
    return SearchOutcome(hits, routed, False, vector)
