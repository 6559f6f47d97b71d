"""What searches read of an index, whichever holds it: LanceDB (`ChunkStore`) or the search snapshot
alone (`indexing.snapshot.store.SnapshotStore`; docs/design.md#search-snapshot)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol

import numpy as np
import pyarrow as pa

from ragdown.indexing.embedders.base import Embedder
from ragdown.indexing.lexicon import Lexicon
from ragdown.indexing.read_cache import VectorSnapshot


class SearchedStore(Protocol):
    """The reads the search pipeline makes of a table."""

    def refresh(self) -> None: ...

    def superseded_paths(self, folders_mode: bool = False) -> frozenset[str]: ...

    def document_aliases(self) -> dict[str, list[str]]: ...

    def vector_snapshot(self, columns: list[str]) -> VectorSnapshot | None: ...

    def start_lexicon(self) -> Future[Lexicon | None] | None: ...

    def chunks(self, columns: list[str], where: str) -> pa.Table: ...

    def dense(self, vector: np.ndarray, limit: int, where: str | None, columns: list[str]) -> pa.Table: ...

    def lexical(
        self, text: str, limit: int, where: str | None, columns: list[str], *, with_vectors: bool = True
    ) -> pa.Table: ...


class SearchedIndex(Protocol):
    """An index as a searcher uses it: the table and embedder searches use now."""

    @property
    def embedder(self) -> Embedder: ...

    def searched(self) -> tuple[SearchedStore, Embedder]: ...
