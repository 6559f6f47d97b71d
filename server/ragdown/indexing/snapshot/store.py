"""Searches answered from the search snapshot alone, without LanceDB (docs/design.md#search-snapshot):
what `ragdown search` and a starting `ragdown stdio` use until the index itself is open."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragdown.errors import IndexNotReadyError
from ragdown.indexing.derived import aliases_in, superseded_in
from ragdown.indexing.embedders.base import Embedder
from ragdown.indexing.lexicon import Lexicon, LexiconBuild
from ragdown.indexing.meta import IndexMeta, read_meta, rebuild_reason
from ragdown.indexing.read_cache import VectorSnapshot
from ragdown.indexing.schema import FILE_STATE_COLUMNS, FileState
from ragdown.indexing.snapshot.layout import table_version_on_disk
from ragdown.indexing.snapshot.read import PersistedSnapshot, open_current

T = TypeVar("T")


class SnapshotStore:
    """The read side of a `ChunkStore` that searches and reads of documents use, over one mapped
    snapshot. The snapshot is fixed: whoever follows the index opens the next one (`follow.py`)."""

    def __init__(self, persisted: PersistedSnapshot) -> None:
        self.persisted = persisted
        self.meta = persisted.manifest.meta
        self._memo: dict[str, Any] = {}
        self._snapshot = VectorSnapshot(
            persisted.rows, persisted.vectors, LexiconBuild.built(persisted.lexicon), persisted.version
        )

    def refresh(self) -> None:
        """Nothing to refresh: the snapshot is one version."""

    @property
    def version(self) -> int:
        """The table version this snapshot answers for."""
        return self.persisted.version

    def count_rows(self) -> int:
        return int(self.persisted.rows.num_rows)

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """`compute()`, kept as long as this snapshot (one version: nothing to forget)."""
        if name not in self._memo:
            self._memo[name] = compute()
        value: T = self._memo[name]
        return value

    def files(self) -> dict[str, FileState]:
        """Per indexed path: hash, time, size and chunk count, read as plain lists (an Arrow grouping
        would load Arrow's query engine into a process that otherwise never needs it)."""

        def states() -> dict[str, FileState]:
            rows = self.persisted.rows
            first: dict[str, tuple[str, float, float]] = {}
            chunks: Counter[str] = Counter()
            columns = (rows.column(name).to_pylist() for name in FILE_STATE_COLUMNS)
            for path, file_hash, mtime_ms, size in zip(*columns, strict=True):
                chunks[path] += 1
                first.setdefault(path, (file_hash, float(mtime_ms), float(size)))
            return {path: FileState(*state, chunks[path]) for path, state in first.items()}

        return self.memo("files", states)

    def superseded_paths(self, folders_mode: bool = False) -> frozenset[str]:
        key = f"superseded:{folders_mode}"
        if key not in self._memo:
            self._memo[key] = superseded_in(self.persisted.rows, folders_mode)
        value: frozenset[str] = self._memo[key]
        return value

    def document_aliases(self) -> dict[str, list[str]]:
        if "aliases" not in self._memo:
            rows = self.persisted.rows.select(["path", "aliases", "chunk_index"])
            self._memo["aliases"] = aliases_in(rows.filter(pc.equal(rows.column("chunk_index"), 0)))
        value: dict[str, list[str]] = self._memo["aliases"]
        return value

    def vector_snapshot(self, columns: list[str]) -> VectorSnapshot:
        key = f"columns:{','.join(columns)}"  # every search asks for the same few
        if key not in self._memo:
            self._memo[key] = VectorSnapshot(
                self._snapshot.columns.select(columns),
                self._snapshot.vectors,
                self._snapshot.lexicon,
                self._snapshot.version,
            )
        value: VectorSnapshot = self._memo[key]
        return value

    def start_lexicon(self) -> Future[Lexicon | None]:
        return self._snapshot.lexicon.start()

    def chunks(self, columns: list[str], where: str) -> pa.Table:
        """Every row (`where` "true", as the list of documents asks), else what only LanceDB answers:
        a search never asks, its rows are all in memory, and following links (SQL) is not offered."""
        if where != "true":
            raise IndexNotReadyError("the search snapshot answers searches and lists only")
        return self.persisted.rows.select(columns)

    # What only LanceDB answers, for the same reason.

    def dense(self, vector: np.ndarray, limit: int, where: str | None, columns: list[str]) -> pa.Table:
        raise IndexNotReadyError("the search snapshot answers searches only")

    def lexical(
        self, text: str, limit: int, where: str | None, columns: list[str], *, with_vectors: bool = True
    ) -> pa.Table:
        raise IndexNotReadyError("the search snapshot answers searches only")


def current_snapshot(data_dir: Path, wanted: IndexMeta | None = None) -> SnapshotStore | None:
    """A store over the snapshot of the index in `data_dir` when it answers for the table as it is on
    disk now (its newest version) and, given `wanted`, was built as `wanted` says; else None."""
    meta = read_meta(data_dir)
    if meta is None:
        return None
    return snapshot_at(data_dir, meta, table_version_on_disk(data_dir, meta.lance_dir), wanted)


def snapshot_at(
    data_dir: Path, meta: IndexMeta, version: int | None, wanted: IndexMeta | None = None
) -> SnapshotStore | None:
    """`current_snapshot` for the index `meta` describes at `version`, both read already."""
    if version is None:
        return None
    persisted = open_current(data_dir, meta.lance_dir, version)
    if persisted is None or rebuild_reason(persisted.manifest.meta, meta) is not None:
        return None
    if wanted is not None and rebuild_reason(persisted.manifest.meta, wanted) is not None:
        return None
    return SnapshotStore(persisted)


class SnapshotIndex:
    """What a `Searcher` needs of an index (`searched()`, `embedder`), over a snapshot store."""

    def __init__(self, store: SnapshotStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder

    def searched(self) -> tuple[SnapshotStore, Embedder]:
        return self.store, self.embedder
