"""Search filters as one SQL pre-filter, applied to both retrievers before fusion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragdown.documents.tags import normalise_tag
from ragdown.indexing.store import sql_in, sql_string

WrittenBy = Literal["agent", "user"]


@dataclass(frozen=True)
class SearchFilters:
    """`path_prefix` is a plain string prefix of root-relative paths (scopes add the trailing `/`);
    `within`, when set, limits the search to these folder prefixes (root `/mcp`: the MCP-enabled
    folders; an empty tuple matches nothing)."""

    path_prefix: str = ""
    tag: str = ""
    written_by: WrittenBy | None = None
    within: tuple[str, ...] | None = None


def filter_fields(filters: SearchFilters | None) -> dict[str, str]:
    """The filters that narrow a search, by name (for the query log)."""
    if filters is None:
        return {}
    fields = {"path_prefix": filters.path_prefix, "tag": filters.tag, "written_by": filters.written_by or ""}
    return {key: value for key, value in fields.items() if value}


class FilterError(ValueError):
    """A filter value that cannot match anything the way it was written."""


def where_clause(filters: SearchFilters, superseded: frozenset[str] = frozenset()) -> str | None:
    """The ANDed pre-filter; None when nothing narrows the search."""
    clauses: list[str] = []
    if filters.path_prefix:
        clauses.append(f"starts_with(path, {sql_string(filters.path_prefix)})")
    if filters.tag:
        tag = normalise_tag(filters.tag)
        if tag is None:
            raise FilterError(
                f"tag {filters.tag!r} is not a valid tag: use letters, digits, _, - and / (like ops/db)"
            )
        clauses.append(
            f"(strpos(tags, {sql_string(f' {tag} ')}) > 0 OR strpos(tags, {sql_string(f' {tag}/')}) > 0)"
        )
    if filters.within is not None:
        alternatives = [f"starts_with(path, {sql_string(prefix)})" for prefix in filters.within]
        clauses.append(f"({' OR '.join(alternatives)})" if alternatives else "false")
    if filters.written_by == "agent":
        clauses.append("created_by <> ''")
    elif filters.written_by == "user":
        clauses.append("created_by = ''")
    if superseded:
        clauses.append(f"NOT ({sql_in('path', sorted(superseded))})")
    return " AND ".join(clauses) or None
