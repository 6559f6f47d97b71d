"""The LanceDB `chunks` table as the index uses it: reads, the queries searches run, writes and
compaction (docs/design.md#table-layout).

Where the table lives and which one is current is `ChunkTable`'s (ragdown.indexing.table); what is
kept in memory until it changes is `ReadCache`'s (ragdown.indexing.read_cache); the columns are in
ragdown.indexing.schema; the process's LanceDB session, and `LANCE_CPU_THREADS` set before lancedb
is imported, in ragdown.indexing.lance_session.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragdown.errors import IndexStorageError
from ragdown.indexing.derived import aliases_in, file_states, superseded_in, vector_column, vector_matrix
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.lance_session import connect, lance_session, set_cache_limits
from ragdown.indexing.lexicon import Lexicon, LexiconBuild
from ragdown.indexing.meta import IndexMeta, rebuild_reason
from ragdown.indexing.read_cache import ReadCache, VectorSnapshot
from ragdown.indexing.schema import FILE_STATE_COLUMNS, SNAPSHOT_COLUMNS, FileState, sql_in, sql_string
from ragdown.indexing.snapshot import remote as remote_snapshot
from ragdown.indexing.snapshot.layout import SKIPPED_COLUMNS
from ragdown.indexing.snapshot.read import PersistedSnapshot, open_current
from ragdown.indexing.snapshot.write import repoint, write_snapshot
from ragdown.indexing.table import ChunkTable
from ragdown.modes import private_files

# The session is reached through the store as well (by the folder copy and tests): it is part of
# what opening a store means.
__all__ = [
    "KEEP_VERSIONS_FOR",
    "VECTOR_INDEX_MIN_ROWS",
    "ChunkStore",
    "connect",
    "lance_session",
    "set_cache_limits",
]

log = logging.getLogger(__name__)

# Below this many rows the dense side is an exact flat scan from memory (one numpy product: ~2 ms at
# 20,000 rows, with ~2 MB of vectors and columns per 1,000 rows held); from it on, LanceDB's IVF
# index. Building that index took ~170 MB at its peak on 19,565 rows, the index run's largest step,
# and its queries were slower than the flat scan in memory (docs/design.md#table-layout).
VECTOR_INDEX_MIN_ROWS = 50_000
KEEP_VERSIONS_FOR = timedelta(seconds=60)

T = TypeVar("T")


class ChunkStore(ChunkTable):
    """The current `chunks` table (ChunkTable: opening, rebuilding beside, publishing) as the index
    reads, searches and writes it. Reads derived from the whole table are kept until it changes."""

    def __init__(
        self,
        data_dir: Path,
        meta: IndexMeta,
        *,
        writable: bool = True,
        fresh: bool = False,
        location: IndexLocation | None = None,
    ) -> None:
        """`fresh`: build a new index beside the current one even though it matches (a full rebuild).
        `location`: where the index lives (default: `data_dir` itself)."""
        self._cache = ReadCache()
        # Writes and compaction, one at a time; searches never take it, nor wait on the cache's lock
        # while either runs (ReadCache.changing, docs/design.md#compaction).
        self._writing = threading.Lock()
        self._no_snapshot: int | None = None  # the table version found to have no snapshot
        super().__init__(
            data_dir,
            meta,
            writable=writable,
            fresh=fresh,
            location=location,
            keep_versions_for=KEEP_VERSIONS_FOR,
        )

    # --- reads -------------------------------------------------------------------------------

    def count_rows(self) -> int:
        return int(self.table.count_rows())

    def _scan(self, columns: list[str], where: str | None = None) -> pa.Table:
        query = self.table.search().select(columns)
        if where:
            query = query.where(where)
        result: pa.Table = query.limit(None).to_arrow()
        return result

    def files(self) -> dict[str, FileState]:
        """Per indexed path: hash, mtime, size and chunk count (reads only those columns)."""
        return file_states(self._scan(FILE_STATE_COLUMNS))

    def files_at(self, paths: list[str]) -> dict[str, FileState] | None:
        """What `files()` holds for `paths` alone, from the rows in memory when this process holds
        them (no query of the table), else from a query of those paths. None when some indexed path
        lies below one of `paths` as below a folder: the caller walks instead."""
        if not paths:
            return {}
        held = self._held_rows()
        if held is not None:
            column = held.column("path")
            rows = held.filter(pc.is_in(column, pa.array(paths, pa.string()))).select(FILE_STATE_COLUMNS)
            below = any(pc.any(pc.starts_with(column, f"{path}/")).as_py() for path in paths)
            return None if below else file_states(rows)
        folders = " OR ".join(f"starts_with(path, {sql_string(f'{path}/')})" for path in paths)
        rows = self._scan(FILE_STATE_COLUMNS, f"{sql_in('path', paths)} OR {folders}")
        wanted = set(paths)
        states = file_states(rows)
        return None if any(path not in wanted for path in states) else states

    def refresh(self) -> None:
        """Forget cached reads when the table moved on: another process (the primary, for a reader)
        may have committed since. One version check (~0.4 ms) per search."""
        self._cache.refresh(int(self.table.version))

    def see_latest(self) -> None:
        """Move to the table's newest version now, whatever the refresh bound, then forget what
        was cached for the older one."""
        self.table.checkout_latest()
        self.refresh()

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """`compute()`, kept until the table changes (a write here, or a commit `refresh` sees).
        For reads derived from the whole table; callers must not mutate what they get."""
        return self._cache.memo(name, compute)

    def superseded_paths(self, folders_mode: bool = False) -> frozenset[str]:
        """Every path some indexed document supersedes inside its own boundary (folders_mode: its
        folder; documents/metadata.supersedes_boundary). The sync stores only such targets; rows an
        older version wrote are checked again here, so no folder's document hides another's."""

        def scan() -> frozenset[str]:
            held = self._held_rows()
            if held is not None:  # the rows in memory: no query of the table
                return superseded_in(held, folders_mode)
            return superseded_in(self._scan(["path", "supersedes"], "supersedes != ''"), folders_mode)

        return self.memo(f"superseded:{folders_mode}", scan)

    def document_aliases(self) -> dict[str, list[str]]:
        """Every indexed path with its aliases (read from chunk 0)."""

        def scan() -> dict[str, list[str]]:
            held = self._held_rows()
            if held is not None:
                return aliases_in(held.filter(pc.equal(held.column("chunk_index"), 0)))
            return aliases_in(self._scan(["path", "aliases"], "chunk_index = 0"))

        return self.memo("aliases", scan)

    def _held(self) -> VectorSnapshot | None:
        """Every row (columns and vectors) when this process holds them for the version it has seen."""
        held = self._cache.snapshot
        fresh = held is not None and held.rows is not None and held.version == self._cache.seen_version
        return held if fresh else None

    def _held_rows(self) -> pa.Table | None:
        """Every row's columns when this process holds them for the version it has seen."""
        held = self._held()
        return held.rows if held is not None else None

    def chunks(self, columns: list[str], where: str) -> pa.Table:
        """Every chunk matching `where`, with `columns` (the vector included when asked for)."""
        return self._scan(columns, where)

    def chunks_of(self, paths: list[str], columns: list[str]) -> pa.Table:
        """Every chunk of `paths`, with `columns` (the vector included when asked for): from the rows
        held in memory when this process holds them (a write's sync reads its files' old vectors
        this way, with no query of the table), else one query."""
        held = self._held()
        if held is None or held.rows is None:
            return self._scan(columns, sql_in("path", paths))
        mask = np.asarray(pc.is_in(held.rows.column("path"), pa.array(paths, pa.string())), dtype=bool)
        picked = held.rows.filter(pa.array(mask)).select([c for c in columns if c != "vector"])
        if "vector" in columns:
            vectors = vector_column(np.asarray(held.vectors)[mask], self.meta.dim)
            picked = picked.append_column("vector", vectors)
        return picked

    def vector_snapshot(self, columns: list[str]) -> VectorSnapshot | None:
        """Every row's vector and `columns` in memory while the table is small enough to be scanned
        flat (None from VECTOR_INDEX_MIN_ROWS on); cached until the next write.

        A LanceDB query costs 6-10 ms of fixed overhead even on a thousand rows, where the product
        itself takes well under a millisecond in numpy.
        """
        snapshot = self._cache.snapshot
        if snapshot is not None and snapshot.columns.column_names == columns:
            return snapshot
        generation = self._cache.generation
        version = int(self.table.version)
        persisted = self._persisted(version)
        if persisted is not None and persisted.manifest.rows < VECTOR_INDEX_MIN_ROWS:
            snapshot = VectorSnapshot(
                persisted.rows.select(columns),
                persisted.vectors,
                LexiconBuild.built(persisted.lexicon),
                version,
                persisted.rows,
            )
            self._cache.keep_snapshot(snapshot, generation)
            return snapshot
        if self.count_rows() >= VECTOR_INDEX_MIN_ROWS:
            return None
        rows, vectors, texts = self._scan_rows()
        snapshot = VectorSnapshot(rows.select(columns), vectors, LexiconBuild(texts), version, rows)
        self._cache.keep_snapshot(snapshot, generation)
        return snapshot

    def _scan_rows(self) -> tuple[pa.Table, np.ndarray, pa.ChunkedArray]:
        """Every row: its columns but the vector and the BM25 text (one chunk each, for cheap
        `take`s), the vectors as one matrix, and the BM25 text."""
        table = self._scan(SNAPSHOT_COLUMNS)
        rows = table.drop_columns(list(SKIPPED_COLUMNS)).combine_chunks()
        return rows, vector_matrix(table), table.column("search_text")

    def _persisted(self, version: int) -> PersistedSnapshot | None:
        """The snapshot on disk when it answers for this table at `version` under this store's meta
        (docs/design.md#search-snapshot). With the index on object storage, the store's snapshot of
        that version is copied here first when there is one."""
        if self._no_snapshot == version:  # looked for already: a search past the in-memory bound
            return None  # would otherwise read CURRENT (a request, on a store) every time
        data_dir = self.location.data_dir
        persisted = open_current(data_dir, self.lance_dir, version)
        if persisted is None and self.location.remote:
            keep = self.keep_versions_for.total_seconds()
            if remote_snapshot.fetch(self.location, data_dir, self.lance_dir, version, keep):
                persisted = open_current(data_dir, self.lance_dir, version)
        if persisted is None or rebuild_reason(persisted.manifest.meta, self.meta) is not None:
            self._no_snapshot = version
            return None
        return persisted

    def persist_snapshot(self) -> str | None:
        """Write the snapshot of the table as it is now, unless the current one already answers for
        this version or the table is too large to be searched from memory; returns its name. Rows
        committed while it is read make it be dropped: the commit's own request writes the next."""
        if not self.writable or self.building:
            return None
        with self._cache.lock:  # the version and what is held, read together between two changes
            if self._cache.busy:
                return None  # a change is under way, and it asks for a snapshot once it is done
            version = int(self.table.version)
            held = self._cache.snapshot  # this process's rows at this version, when it holds them
        current = self._persisted(version)
        if current is not None or self.count_rows() >= VECTOR_INDEX_MIN_ROWS:
            if current is not None and self.location.remote:  # a copy to the store that failed before
                self._publish(current.name)
            return None
        lexicon = held.lexicon.ready() if held is not None and held.version == version else None
        if held is not None and held.rows is not None and lexicon is not None:
            rows, vectors = held.rows, np.asarray(held.vectors)
        else:
            rows, vectors, texts = self._scan_rows()
            lexicon = Lexicon.build(texts.to_pylist())
        if int(self.table.version) != version:
            return None
        name = write_snapshot(
            self.location.data_dir,
            self.meta,
            version,
            rows,
            vectors,
            lexicon,
            keep_for_s=self.keep_versions_for.total_seconds(),
        )
        self._no_snapshot = None
        if self.location.remote:
            self._publish(name)
        return name

    def _publish(self, name: str) -> None:
        keep = self.keep_versions_for.total_seconds()
        remote_snapshot.publish(self.location, self.location.data_dir, name, keep)

    def start_lexicon(self) -> Future[Lexicon | None] | None:
        """Start building the BM25 postings of the rows in memory (None: no rows are held)."""
        snapshot = self._cache.snapshot
        return snapshot.lexicon.start() if snapshot is not None else None

    def dense(self, vector: np.ndarray, limit: int, where: str | None, columns: list[str]) -> pa.Table:
        """The nearest chunks by cosine distance (`_distance`), pre-filtered by `where`."""
        query = self.table.search(vector, vector_column_name="vector").distance_type("cosine")
        if where:
            query = query.where(where, prefilter=True)
        result: pa.Table = query.select([*columns, "_distance"]).limit(limit).to_arrow()
        return result

    def lexical(
        self, text: str, limit: int, where: str | None, columns: list[str], *, with_vectors: bool = True
    ) -> pa.Table:
        """The best BM25 matches on `search_text` (`_score`), with their stored vectors unless told not."""
        query = self.table.search(text, query_type="fts", fts_columns="search_text")
        if where:
            query = query.where(where, prefilter=True)
        wanted = [*columns, "_score", *(["vector"] if with_vectors else [])]
        result: pa.Table = query.select(wanted).limit(limit).to_arrow()
        return result

    def list_index_columns(self) -> list[list[str]]:
        return [list(index.columns) for index in self.table.list_indices()]

    # --- writes ------------------------------------------------------------------------------

    def replace(self, paths: list[str], rows: pa.Table | None) -> None:
        """One delete of every row of `paths`, then one add of `rows`."""
        self._require_writable()
        with self._writing, private_files():
            before = int(self.table.version)
            # Searches meanwhile answer from the rows held for `before`, neither waiting for the
            # commits nor dropping what they hold (ReadCache.changing).
            with self._cache.changing(before):
                held = self._cache.snapshot
                if paths:
                    self.table.delete(sql_in("path", paths))
                if rows is not None and rows.num_rows:
                    self.table.add(rows)
                version = int(self.table.version)
                # The rows held in memory follow the write rather than being read again: under a
                # stream of writes, searches keep their copy and postings (docs/search.md#bm25-from-memory).
                updated = None
                if held is not None and held.version == before:
                    updated = held.updated(paths, rows, version)
                    if updated is not None and updated.columns.num_rows >= VECTOR_INDEX_MIN_ROWS:
                        updated = None
                self._cache.written(updated, version)

    def delete_all(self) -> None:
        self._require_writable()
        with self._writing, self._cache.lock, private_files():
            self.table.delete("true")
            self._cache.forget()

    def compact(self) -> None:
        """Optimise (merges fragments, brings the FTS index up to date), drop versions older than 60 s,
        and build the vector index once the table is large enough for it to pay. Run off the write
        path (indexing/compaction.py): it changes no row, so searches go on meanwhile without waiting
        for it; a write waits for it to end."""
        self._require_writable()
        with self._writing, private_files():
            before = int(self.table.version)
            # The versions the optimise makes hold the same rows: searches keep what they hold.
            with self._cache.changing(before):
                self.table.optimize(cleanup_older_than=self.keep_versions_for)
                after = int(self.table.version)
                self._cache.restamp(before, after)  # what is held and on disk still holds
            repoint(self.location.data_dir, self.lance_dir, before, after)
            if self.location.remote:
                try:
                    remote_snapshot.repoint_remote(self.location, self.lance_dir, before, after)
                except IndexStorageError as error:  # readers scan the table until the next snapshot
                    log.warning("could not re-point the snapshot on the store: %s", error)
            if self.count_rows() >= VECTOR_INDEX_MIN_ROWS and not any(
                "vector" in columns for columns in self.list_index_columns()
            ):
                try:
                    from lancedb.index import IvfFlat

                    self.table.create_index("vector", config=IvfFlat(distance_type="cosine"))
                except Exception:  # a missing vector index only costs speed
                    log.exception("could not build the vector index; searches use a flat scan")

    def needs_compaction(self) -> bool:
        """Rows the full-text index has not taken in yet: what a process that stopped between a
        commit and its compaction leaves behind."""
        return any(index.num_unindexed_rows for index in self.table.list_indices())

    def _require_writable(self) -> None:
        if not self.writable:
            raise PermissionError("this store is read-only: writes go through the primary")
