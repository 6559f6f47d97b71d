"""The LanceDB `chunks` table: its schema, opening with rebuild checks, writes, compaction, queries.

`LANCE_CPU_THREADS` is set (to at least 2, unless the user set it) before lancedb is imported:
lance's thread pool with fewer than two threads deadlocks building a full-text index on small hosts.
lancedb itself is imported when a table is first opened, not with this module, and without its
REST namespace client (ragdown.indexing.lance_import; docs/design.md#start-up).
"""

from __future__ import annotations

import os

os.environ.setdefault("LANCE_CPU_THREADS", str(max(2, os.cpu_count() or 2)))

import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pyarrow as pa

from ragdown.documents.metadata import supersedes_boundary, within
from ragdown.errors import IndexNotReadyError
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.lance_import import import_lancedb
from ragdown.indexing.lexicon import Lexicon, LexiconBuild
from ragdown.indexing.meta import IndexMeta, rebuild_reason
from ragdown.modes import make_private_dir, private_files

if TYPE_CHECKING:
    import lancedb

log = logging.getLogger(__name__)

TABLE = "chunks"
LANCE_DIR = "lance"
# Below this many rows the dense side is an exact flat scan from memory (one numpy product: ~2 ms at
# 20,000 rows, with ~2 MB of vectors and columns per 1,000 rows held); from it on, LanceDB's IVF
# index. Building that index took ~170 MB at its peak on 19,565 rows, the index run's largest step,
# and its queries were slower than the flat scan in memory (docs/design.md#table-layout).
VECTOR_INDEX_MIN_ROWS = 50_000
KEEP_VERSIONS_FOR = timedelta(seconds=60)

# LanceDB caches index and manifest data per table version, and its default bounds are gigabytes:
# every write makes new versions (and a new full-text index), so a long-running server grew ~0.45 MB
# per write without bound. One bounded session per process, shared by every store (docs/reliability.md).
_cache_limits_mb = (64, 16)
_session: lancedb.Session | None = None
_session_lock = threading.Lock()


def set_cache_limits(index_mb: int, metadata_mb: int) -> None:
    """LanceDB's index and metadata cache bounds for the stores this process opens from now on."""
    global _cache_limits_mb, _session
    with _session_lock:
        if (index_mb, metadata_mb) != _cache_limits_mb:
            _cache_limits_mb = (index_mb, metadata_mb)
            _session = None


def lance_session() -> lancedb.Session:
    global _session
    lancedb = import_lancedb()

    with _session_lock:
        if _session is None:
            index_mb, metadata_mb = _cache_limits_mb
            _session = lancedb.Session(
                index_cache_size_bytes=index_mb << 20, metadata_cache_size_bytes=metadata_mb << 20
            )
        return _session


FILE_STATE_COLUMNS = ["path", "file_hash", "mtime_ms", "size"]


def connect(location: IndexLocation, name: str) -> Any:
    """The LanceDB database in the directory `name` under the index's location, read as fresh as
    the location promises, in the process's bounded session."""
    lancedb = import_lancedb()
    with private_files():  # connecting makes the directory
        return lancedb.connect(
            location.table_uri(name),
            read_consistency_interval=location.refresh,
            storage_options=location.storage_options() or None,
            session=lance_session(),
        )


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


@dataclass(frozen=True)
class VectorSnapshot:
    """The table's rows (`columns`, which start with `id`) and their vectors, row-aligned, and the
    BM25 postings over the same rows once they are built (docs/search.md#bm25-from-memory)."""

    columns: pa.Table
    vectors: np.ndarray
    positions: dict[str, int] = field(default_factory=dict)  # id -> row
    lexicon: LexiconBuild = field(default_factory=lambda: LexiconBuild(None))

    def __post_init__(self) -> None:
        if not self.positions and self.columns.num_rows:
            ids = self.columns.column("id").to_pylist()
            self.positions.update(zip(ids, range(len(ids)), strict=True))


T = TypeVar("T")


class ChunkStore:
    """One `chunks` table under `<data_dir>/lance`, described by `<data_dir>/meta.json`.

    A writable store that finds a table built under another meta builds the new one in a directory
    beside it (`building`; the reason is kept in `rebuilt_because`) and `publish()` switches to it
    by rewriting meta.json, so the old index serves until the new one is complete. A read-only store
    opens whatever meta.json names and refuses an index it cannot search.
    """

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
        self.data_dir = data_dir
        self.location = location or IndexLocation(data_dir)
        self.meta = meta
        self.writable = writable
        self.rebuilt_because: str | None = None
        self.keep_versions_for = KEEP_VERSIONS_FOR
        self._memo: dict[str, Any] = {}  # reads derived from the whole table, until it changes
        self._snapshot: VectorSnapshot | None = None
        self._generation = 0  # bumped by every write, so a snapshot built across one is not kept
        self._seen_version: int | None = None
        self._lock = threading.Lock()
        self.building = False
        self.previous: IndexMeta | None = None
        if writable and not self.location.remote:
            make_private_dir(self.location.data_dir)
        recorded = self.location.read_meta(fresh=True)
        self.lance_dir = recorded.lance_dir if recorded else LANCE_DIR
        self.meta = meta.model_copy(update={"lance_dir": self.lance_dir})
        self.db = self._connect()
        self.table = self._open_table(recorded, fresh=fresh and writable)
        if writable:
            self._remove_leftovers(recorded)

    def _connect(self) -> Any:
        return connect(self.location, self.lance_dir)

    def _open_table(self, recorded: IndexMeta | None, *, fresh: bool = False) -> Any:
        exists = TABLE in self.db.list_tables().tables
        reason = rebuild_reason(recorded, self.meta) if exists else None
        if exists and fresh and reason is None:
            reason = "a full rebuild was asked for"
        if not self.writable:
            if not exists:
                raise IndexNotReadyError("the index does not exist yet; start the primary server first")
            if reason:
                raise IndexNotReadyError(
                    f"the index needs a rebuild ({reason}); start the primary server first"
                )
            return self.db.open_table(TABLE)
        if exists and reason is None:
            return self.db.open_table(TABLE)
        if exists:
            log.warning("rebuilding the index beside the current one: %s", reason)
            self.rebuilt_because = reason
            self.previous = recorded
            self.building = True
            self.lance_dir = f"{LANCE_DIR}-{uuid.uuid4().hex[:8]}"
            self.meta = self.meta.model_copy(update={"lance_dir": self.lance_dir})
            self.db = self._connect()
        from lancedb.index import FTS

        with private_files():  # every folder's text: LanceDB writes it with the process's umask
            table = self.db.create_table(TABLE, schema=chunk_schema(self.meta.dim), exist_ok=False)
            table.create_index("search_text", config=FTS())
        if not self.building:
            self.location.write_meta(self.meta)
        return table

    def publish(self) -> None:
        """Switch to the index built beside the old one: readers follow at their next search; the
        old directory is removed once no search can still be using it."""
        if not self.building:
            return
        old = self.previous.lance_dir if self.previous else None
        self.location.write_meta(self.meta)
        self.building = False
        self.previous = None
        log.warning("switched to the rebuilt index (%s)", self.lance_dir)
        if old and old != self.lance_dir:
            timer = threading.Timer(self.keep_versions_for.total_seconds(), self._remove_dir, args=(old,))
            timer.daemon = True
            timer.start()

    def _remove_dir(self, name: str) -> None:
        try:
            self.location.remove_dir(name)
        except Exception as error:  # left for the next start's clean-up
            log.warning("could not remove the old index %s: %s", name, error)

    def _remove_leftovers(self, recorded: IndexMeta | None) -> None:
        """Directories of rebuilds that never switched (a crash mid-build) are removed at start."""
        keep = {self.lance_dir, recorded.lance_dir if recorded else LANCE_DIR}
        for name in self.location.table_dirs():
            if name.startswith(f"{LANCE_DIR}-") and name not in keep:
                self._remove_dir(name)

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
        rows = self._scan(FILE_STATE_COLUMNS)
        if rows.num_rows == 0:
            return {}
        # Every row of a file carries the same hash, mtime and size: grouping in Arrow keeps the
        # no-change sync of thousands of files cheap.
        grouped = rows.group_by("path", use_threads=False).aggregate(
            [("file_hash", "min"), ("mtime_ms", "min"), ("size", "min"), ("path", "count")]
        )
        columns = [
            grouped.column(c).to_pylist()
            for c in ("path", "file_hash_min", "mtime_ms_min", "size_min", "path_count")
        ]
        return {
            path: FileState(file_hash, mtime_ms, size, count)
            for path, file_hash, mtime_ms, size, count in zip(*columns, strict=True)
        }

    def refresh(self) -> None:
        """Forget cached reads when the table moved on: another process (the primary, for a reader)
        may have committed since. One version check (~0.4 ms) per search."""
        version = int(self.table.version)
        if version != self._seen_version:
            with self._lock:
                if self._seen_version is not None:
                    self._forget_caches()
                self._seen_version = version

    def see_latest(self) -> None:
        """Move to the table's newest version now, whatever the refresh bound, then forget what
        was cached for the older one."""
        self.table.checkout_latest()
        self.refresh()

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """`compute()`, kept until the table changes (a write here, or a commit `refresh` sees).
        For reads derived from the whole table; callers must not mutate what they get."""
        if name in self._memo:
            return cast(T, self._memo[name])
        generation = self._generation
        value = compute()
        with self._lock:
            if generation == self._generation:  # not kept if a write landed meanwhile
                self._memo[name] = value
        return value

    def superseded_paths(self, folders_mode: bool = False) -> frozenset[str]:
        """Every path some indexed document supersedes inside its own boundary (folders_mode: its
        folder; documents/metadata.supersedes_boundary). The sync stores only such targets; rows an
        older version wrote are checked again here, so no folder's document hides another's."""

        def scan() -> frozenset[str]:
            rows = self._scan(["path", "supersedes"], "supersedes != ''")
            sources, targets = (rows.column(c).to_pylist() for c in ("path", "supersedes"))
            return frozenset(
                target
                for source, value in zip(sources, targets, strict=True)
                for target in value.split("\n")
                if target and within(supersedes_boundary(source, folders_mode), target)
            )

        return self.memo(f"superseded:{folders_mode}", scan)

    def document_aliases(self) -> dict[str, list[str]]:
        """Every indexed path with its aliases (read from chunk 0)."""

        def scan() -> dict[str, list[str]]:
            rows = self._scan(["path", "aliases"], "chunk_index = 0")
            paths, aliases = (rows.column(c).to_pylist() for c in ("path", "aliases"))
            return {
                path: [a for a in value.split("\n") if a] for path, value in zip(paths, aliases, strict=True)
            }

        return self.memo("aliases", scan)

    def chunks(self, columns: list[str], where: str) -> pa.Table:
        """Every chunk matching `where`, with `columns` (the vector included when asked for)."""
        return self._scan(columns, where)

    def vector_snapshot(self, columns: list[str]) -> VectorSnapshot | None:
        """Every row's vector and `columns` in memory while the table is small enough to be scanned
        flat (None from VECTOR_INDEX_MIN_ROWS on); cached until the next write.

        A LanceDB query costs 6-10 ms of fixed overhead even on a thousand rows, where the product
        itself takes well under a millisecond in numpy.
        """
        snapshot = self._snapshot
        if snapshot is not None and snapshot.columns.column_names == columns:
            return snapshot
        generation = self._generation
        if self.count_rows() >= VECTOR_INDEX_MIN_ROWS:
            return None
        table = self._scan([*columns, "vector", "search_text"])
        vectors = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        snapshot = VectorSnapshot(
            table.drop_columns(["vector", "search_text"]).combine_chunks(),  # one chunk each: cheap `take`s
            np.ascontiguousarray(vectors, dtype=np.float32).reshape(table.num_rows, self.meta.dim),
            lexicon=LexiconBuild(table.column("search_text")),
        )
        with self._lock:
            if generation == self._generation:
                self._snapshot = snapshot
        return snapshot

    def start_lexicon(self) -> Future[Lexicon | None] | None:
        """Start building the BM25 postings of the rows in memory (None: no rows are held)."""
        snapshot = self._snapshot
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
        with self._lock, private_files():
            if paths:
                self.table.delete(sql_in("path", paths))
            if rows is not None and rows.num_rows:
                self.table.add(rows)
            self._forget_caches()

    def delete_all(self) -> None:
        self._require_writable()
        with self._lock, private_files():
            self.table.delete("true")
            self._forget_caches()

    def _forget_caches(self) -> None:
        self._memo = {}
        self._snapshot = None
        self._generation += 1

    def compact(self) -> None:
        """Optimise (merges fragments, brings the FTS index up to date), drop versions older than 60 s,
        and build the vector index once the table is large enough for it to pay."""
        self._require_writable()
        with self._lock, private_files():
            self.table.optimize(cleanup_older_than=self.keep_versions_for)
            if self.count_rows() >= VECTOR_INDEX_MIN_ROWS and not any(
                "vector" in columns for columns in self.list_index_columns()
            ):
                try:
                    from lancedb.index import IvfFlat

                    self.table.create_index("vector", config=IvfFlat(distance_type="cosine"))
                except Exception:  # a missing vector index only costs speed
                    log.exception("could not build the vector index; searches use a flat scan")

    def _require_writable(self) -> None:
        if not self.writable:
            raise PermissionError("this store is read-only: writes go through the primary")
