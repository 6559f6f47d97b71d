"""Search filters as one SQL pre-filter, applied to both retrievers before fusion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragdown.documents.tags import normalise_tag
from ragdown.errors import FilterError
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


def normalised_tag(filters: SearchFilters) -> str | None:
    if not filters.tag:
        return None
    tag = normalise_tag(filters.tag)
    if tag is None:
        raise FilterError(
            f"tag {filters.tag!r} is not a valid tag: use letters, digits, _, - and / (like ops/db)"
        )
    return tag


@dataclass(frozen=True)
class Prefilter:
    """The filters and the superseded paths, as one SQL clause for LanceDB and as one boolean mask
    over rows held in memory. Both forms live here, side by side, and a test holds them equal."""

    filters: SearchFilters
    superseded: frozenset[str] = frozenset()

    @property
    def narrows(self) -> bool:
        """Whether any row can fail the filter."""
        return self.sql() is not None

    def sql(self) -> str | None:
        """The ANDed pre-filter; None when nothing narrows the search."""
        filters, clauses = self.filters, []
        if filters.path_prefix:
            clauses.append(f"starts_with(path, {sql_string(filters.path_prefix)})")
        tag = normalised_tag(filters)
        if tag is not None:
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
        if self.superseded:
            clauses.append(f"NOT ({sql_in('path', sorted(self.superseded))})")
        return " AND ".join(clauses) or None

    def mask(self, rows: pa.Table) -> np.ndarray:
        """Which of `rows` (with path, tags and created_by) pass: the same rules as `sql`."""
        filters = self.filters
        keep = np.ones(rows.num_rows, dtype=bool)
        path, tags, created_by = (rows.column(c) for c in ("path", "tags", "created_by"))
        if filters.path_prefix:
            keep &= _bools(pc.starts_with(path, filters.path_prefix))
        tag = normalised_tag(filters)
        if tag is not None:
            keep &= _bools(pc.match_substring(tags, f" {tag} ")) | _bools(
                pc.match_substring(tags, f" {tag}/")
            )
        if filters.within is not None:
            inside = np.zeros(rows.num_rows, dtype=bool)
            for prefix in filters.within:
                inside |= _bools(pc.starts_with(path, prefix))
            keep &= inside
        if filters.written_by is not None:
            by_agent = _bools(pc.not_equal(created_by, ""))
            keep &= by_agent if filters.written_by == "agent" else ~by_agent
        if self.superseded:
            keep &= ~_bools(pc.is_in(path, value_set=pa.array(sorted(self.superseded), pa.string())))
        return keep


def _bools(result: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(result.to_numpy(zero_copy_only=False), dtype=bool)


def where_clause(filters: SearchFilters, superseded: frozenset[str] = frozenset()) -> str | None:
    """The ANDed SQL pre-filter; None when nothing narrows the search."""
    return Prefilter(filters, superseded).sql()
