"""Which ranking rules a search applies: one value object, so benchmarks can switch rules off."""

from __future__ import annotations

from dataclasses import dataclass

# The longest query a search takes, in characters (docs/tools.md#ragdown_recall): a question, not a
# document. The embedder reads 256 tokens anyway; longer text only costs BM25 work and log space.
# A hook's prompt is cut to it before it is searched (docs/hook.md#gates), never refused.
MAX_QUERY_CHARS = 4000

# Section-level BM25's share of a BM25-pool chunk's score (docs/search.md#section-level-bm25); kept beside
# HEADING_BOOST for the same reason.
SECTION_SHARE = 0.2

# The heading evidence's weight (docs/search.md#heading-evidence): one rank-1 RRF share, 1 / (60 + 1),
# as the alias boost; the runbooks gave the same top-1 from 0.005 to 0.1. (search/headings.py applies
# it; this module stays free of the search code's imports.)
HEADING_BOOST = 1.0 / 61


@dataclass(frozen=True)
class SearchPolicy:
    """The ranking rules of docs/search.md#pipeline and abstention.

    `max_per_document` (0 = no cap), `follow_links` (0 = off) and `one_per_section` come from
    `RAGDOWN_MAX_PER_DOCUMENT`, `RAGDOWN_FOLLOW_LINKS` and `RAGDOWN_ONE_PER_SECTION`; the switches exist
    so benchmarks can measure each rule's effect.
    """

    route_identifiers: bool = True
    alias_boost: bool = True
    max_per_document: int = 0
    follow_links: int = 0
    abstain: bool = True
    # docs/search.md#one-hit-per-section: a section's best chunk stands for it; `merge_sections` joins
    # the chunks adjacent to the best one into it instead.
    one_per_section: bool = True
    # docs/search.md#heading-evidence: added per share of the query's terms a section's own heading
    # names (two or more); 0 is off.
    heading_boost: float = HEADING_BOOST
    merge_sections: bool = False
    # A routed query's evidence weight follows the dense gap too, at BM25 share 0.4, for an embedder
    # with a measured gap rule (docs/search.md#evidence-follows-the-dense-gap); False: the embedder's
    # fixed `score_evidence` at its `routed_lexical_weight`.
    routed_gap: bool = True
    # docs/search.md#section-level-bm25: the share of its section's BM25 in a BM25-pool chunk's score;
    # 0 is off.
    section_share: float = SECTION_SHARE
    # How much the raw scores add to RRF (see fusion.rrf_with_evidence); None: the embedder's
    # measured value, 0: plain RRF, and routed queries by min–max score fusion.
    score_evidence: float | None = None
