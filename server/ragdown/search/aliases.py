"""Alias boost (docs/search.md#alias-boost): a query naming a document's alias lifts that document's
chunks."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

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


def named_documents(rows: Iterable[dict[str, Any]], query: str) -> set[str]:
    """The paths, among these rows', of the documents the query names by alias."""
    named: dict[str, bool] = {}
    for row in rows:
        path = str(row["path"])
        if path not in named:
            named[path] = named_alias(query, row_aliases(row)) is not None
    return {path for path, yes in named.items() if yes}


def boost_aliases(candidates: list[Candidate], query: str, named: set[str] | None = None) -> list[Candidate]:
    """Add one rank-1 RRF share, once, to every candidate of each document the query names by alias
    (`named`, when the caller has already found them)."""
    if named is None:
        named = named_documents((c.row for c in candidates), query)
    if not named:
        return candidates
    for candidate in candidates:
        if candidate.path in named:
            candidate.score += ALIAS_BOOST
    return by_score(candidates)
