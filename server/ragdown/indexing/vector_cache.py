"""Vectors already in the index, by the exact text they embed (docs/design.md#embedding-cache).

A chunk is embedded from its breadcrumb and text only (`documents.chunks.embedding_text`), never its
path, so a moved or renamed file, a document rebuilt into a new table with the same model, or a
section repeated in many files embeds to the vector some row already holds. A sync looks each text
up here first and embeds only the texts no row has. The cache is built from the tables when a sync
first has something to embed and dropped when the sync ends: nothing is held between syncs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from ragdown.documents.chunks import embedding_text
from ragdown.indexing.store import ChunkStore


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class VectorCache:
    """Text → vector from `stores`, which must hold vectors of the embedder now in use."""

    def __init__(self, stores: Iterable[ChunkStore]) -> None:
        self._vectors: dict[bytes, npt.NDArray[np.float32]] = {}
        for store in stores:
            rows = store.chunks(["title", "heading", "text", "vector"], "")
            if rows.num_rows == 0:
                continue
            vectors = np.asarray(rows.column("vector").combine_chunks().flatten(), dtype=np.float32)
            matrix = vectors.reshape(rows.num_rows, -1)
            columns = (rows.column(name).to_pylist() for name in ("title", "heading", "text"))
            for row, (title, heading, text) in enumerate(zip(*columns, strict=True)):
                self._vectors.setdefault(text_key(embedding_text(title, heading, text)), matrix[row])

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, text: str) -> npt.NDArray[np.float32] | None:
        return self._vectors.get(text_key(text))
