"""Alias boost (docs/search.md#alias-boost): a query naming a document's alias lifts that document's
chunks."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ragdown.search.fusion import RRF_K, Candidate, by_score

MIN_ALIAS_CHARS = 3
ALIAS_BOOST = 1.0 / (RRF_K + 1)  # one rank-1 RRF share


def contains_whole(text: str, phrase: str) -> bool:
    """Case-insensitive, with no letter or digit directly before or after the match."""
    if not phrase:
        return False
    pattern = rf"(?<![^\W_]){re.escape(phrase)}(?![^\W_])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def row_aliases(row: dict[str, object]) -> list[str]:
    return [a for a in str(row.get("aliases", "")).split("\n") if a]


def named_alias(query: str, aliases: Iterable[str]) -> str | None:
    """The first alias of at least three characters the query holds as a whole word or phrase."""
    for alias in aliases:
        if len(alias) >= MIN_ALIAS_CHARS and contains_whole(query, alias):
            return alias
    return None


def boost_aliases(candidates: list[Candidate], query: str) -> list[Candidate]:
    """Add one rank-1 RRF share, once, to every candidate of each document the query names by alias."""
    named: dict[str, bool] = {}
    for candidate in candidates:
        if candidate.path not in named:
            named[candidate.path] = named_alias(query, row_aliases(candidate.row)) is not None
        if named[candidate.path]:
            candidate.score += ALIAS_BOOST
    return by_score(candidates) if any(named.values()) else candidates
