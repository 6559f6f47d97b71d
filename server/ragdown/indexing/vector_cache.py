"""Vectors already in the index, by the exact text they embed (docs/design.md#embedding-cache).

A chunk is embedded from its breadcrumb and text only (`documents.chunks.embedding_text`), never its
path, so a moved or renamed file, a document rebuilt into a new table with the same model, an edited
file's unchanged sections, or a section repeated across a batch embed to a vector the index or the
batch already has. A sync looks each text up here first and embeds only what is new.

What is read is bounded by what the sync touches: the rows of the files it removes or rewrites (read
before they are deleted), and during a rebuild, the whole table being replaced (the rebuild would
embed all of it otherwise). Nothing is held between syncs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragdown.documents.chunks import embedding_text
from ragdown.indexing.derived import vector_matrix
from ragdown.indexing.store import ChunkStore

_COLUMNS = ["title", "heading", "text", "vector"]
# Paths per query: keeps each filter a reasonable size.
_PATHS_PER_SCAN = 256


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class VectorCache:
    """Text → vector, filled from tables holding vectors of the embedder now in use."""

    def __init__(self) -> None:
        self._vectors: dict[bytes, npt.NDArray[np.float32]] = {}
        self._scanned: set[str] = set()

    def get(self, text: str) -> npt.NDArray[np.float32] | None:
        return self._vectors.get(text_key(text))

    def put(self, text: str, vector: npt.NDArray[np.float32]) -> None:
        self._vectors.setdefault(text_key(text), vector)

    def add_table(self, store: ChunkStore) -> None:
        """Every row of `store` (a rebuild's previous table)."""
        self._add(store.chunks(_COLUMNS, ""))

    def add_paths(self, store: ChunkStore, paths: Iterable[str]) -> None:
        """The rows of `paths` not read yet, before the sync deletes or replaces them."""
        wanted = sorted(set(paths) - self._scanned)
        self._scanned.update(wanted)
        for start in range(0, len(wanted), _PATHS_PER_SCAN):
            self._add(store.chunks_of(wanted[start : start + _PATHS_PER_SCAN], _COLUMNS))

    def _add(self, rows: pa.Table) -> None:
        if rows.num_rows == 0:
            return
        matrix = vector_matrix(rows)
        columns = (rows.column(name).to_pylist() for name in ("title", "heading", "text"))
        for row, (title, heading, text) in enumerate(zip(*columns, strict=True)):
            self.put(embedding_text(title, heading, text), matrix[row])
