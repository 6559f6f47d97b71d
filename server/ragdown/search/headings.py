"""Heading evidence (docs/search.md#heading-evidence): a section whose own heading names the query's
words gets a share added to its fused score, so the asked-for section of a document can pass the
neighbouring section that shares the document's vocabulary."""

from __future__ import annotations

from ragdown.documents.chunks import BREADCRUMB_SEPARATOR
from ragdown.indexing.lexicon import ANALYZER
from ragdown.search.fusion import Candidate, by_score
from ragdown.search.policy import HEADING_BOOST

# A heading must name at least two of the query's terms: one word ("staging") in a heading is as
# often a neighbour's as the asked-for section's.
MIN_TERMS = 2


def own_heading(title: str, heading: str) -> str:
    """The heading path below the title: a document's title is in every section's breadcrumb, so it
    cannot tell two sections of one document apart (and documents apart the retrievers already do)."""
    parts = heading.split(BREADCRUMB_SEPARATOR) if heading else []
    if parts and parts[0] == title:
        parts = parts[1:]
    return BREADCRUMB_SEPARATOR.join(parts)


def heading_share(query_terms: set[str], title: str, heading: str, min_terms: int = MIN_TERMS) -> float:
    """The share of the query's distinct terms (BM25's analysis) that the section's own heading holds;
    0 when it holds fewer than `min_terms` of them."""
    if not query_terms:
        return 0.0
    named = len(query_terms & set(ANALYZER.terms(own_heading(title, heading))))
    return named / len(query_terms) if named >= min_terms else 0.0


def boost_headings(
    candidates: list[Candidate], query: str, weight: float = HEADING_BOOST, min_terms: int = MIN_TERMS
) -> list[Candidate]:
    """Each candidate's score plus `weight` × its heading share, re-sorted (stable). 0 leaves the list."""
    terms = set(ANALYZER.terms(query))
    if weight == 0 or not terms:
        return candidates
    shares: dict[tuple[str, str], float] = {}
    for candidate in candidates:
        title, heading = str(candidate.row["title"]), str(candidate.row["heading"])
        key = (title, heading)
        if key not in shares:
            shares[key] = heading_share(terms, title, heading, min_terms)
        candidate.score += weight * shares[key]
    return by_score(candidates)
