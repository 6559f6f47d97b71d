"""Turning parsed documents and their vectors into rows of the `chunks` table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ragdown.documents.chunks import embedding_text, search_text
from ragdown.documents.metadata import ParsedDocument
from ragdown.indexing.derived import vector_column
from ragdown.indexing.listing import FileStat
from ragdown.indexing.schema import chunk_schema


@dataclass(frozen=True)
class PendingFile:
    """A file read and chunked, waiting for its vectors."""

    doc: ParsedDocument
    file_hash: str
    stat: FileStat
    is_new: bool

    def embedding_texts(self) -> list[str]:
        return [embedding_text(c.title, c.heading, c.text) for c in self.doc.chunks]


def tags_cell(tags: list[str]) -> str:
    """`" t1 t2/x "`: a space at each end and between tags, so `strpos(tags, ' t ')` finds a whole tag."""
    return f" {' '.join(tags)} " if tags else ""


def build_rows(files: list[PendingFile], vectors: np.ndarray, dim: int) -> pa.Table:
    columns: dict[str, list[object]] = {name: [] for name in chunk_schema(dim).names if name != "vector"}
    for pending in files:
        doc, meta = pending.doc, pending.doc.meta
        supersedes = "\n".join(meta.supersedes)
        tags = tags_cell(meta.tags)
        aliases = "\n".join(meta.aliases)
        for chunk in doc.chunks:
            columns["id"].append(f"{doc.path}#{chunk.index}@{pending.file_hash[:12]}")
            columns["path"].append(doc.path)
            columns["file_hash"].append(pending.file_hash)
            columns["mtime_ms"].append(pending.stat.mtime_ms)
            columns["size"].append(pending.stat.size)
            columns["chunk_index"].append(chunk.index)
            columns["title"].append(chunk.title)
            columns["heading"].append(chunk.heading)
            columns["text"].append(chunk.text)
            columns["search_text"].append(search_text(chunk, meta.aliases))
            columns["supersedes"].append(supersedes)
            columns["tags"].append(tags)
            columns["aliases"].append(aliases)
            columns["description"].append(meta.description)
            columns["created_by"].append(meta.created_by)
            columns["session"].append(meta.session)
            columns["line_start"].append(chunk.line_start)
            columns["line_end"].append(chunk.line_end)
    schema = chunk_schema(dim)
    arrays = [pa.array(columns[f.name], type=f.type) for f in schema if f.name != "vector"]
    return pa.Table.from_arrays([*arrays, vector_column(vectors, dim)], schema=schema)
