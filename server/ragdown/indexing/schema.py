"""The `chunks` table's columns (docs/design.md#table-layout), what a sync reads back per file, and
SQL literals for its filters."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

TABLE = "chunks"
FILE_STATE_COLUMNS = ["path", "file_hash", "mtime_ms", "size"]


def chunk_schema(dim: int) -> pa.Schema:
    text = pa.utf8()
    return pa.schema(
        [
            pa.field("id", text, nullable=False),
            pa.field("path", text, nullable=False),
            pa.field("file_hash", text, nullable=False),
            pa.field("mtime_ms", pa.float64(), nullable=False),
            pa.field("size", pa.float64(), nullable=False),
            pa.field("chunk_index", pa.int32(), nullable=False),
            pa.field("title", text, nullable=False),
            pa.field("heading", text, nullable=False),
            pa.field("text", text, nullable=False),
            pa.field("search_text", text, nullable=False),
            pa.field("supersedes", text, nullable=False),
            pa.field("tags", text, nullable=False),
            pa.field("aliases", text, nullable=False),
            pa.field("description", text, nullable=False),
            pa.field("created_by", text, nullable=False),
            pa.field("session", text, nullable=False),
            pa.field("line_start", pa.int32(), nullable=False),
            pa.field("line_end", pa.int32(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dim), nullable=False),
        ]
    )


@dataclass(frozen=True)
class FileState:
    """What the index knows of one file: enough to skip it on the next sync."""

    hash: str
    mtime_ms: float
    size: float
    chunks: int


def sql_string(value: str) -> str:
    """A SQL string literal: quotes doubled."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: list[str]) -> str:
    return f"{column} IN ({', '.join(sql_string(v) for v in values)})"


# What the search snapshot is read from: every column (docs/design.md#search-snapshot).
SNAPSHOT_COLUMNS = [field.name for field in chunk_schema(1)]
