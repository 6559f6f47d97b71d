"""Keeping the index equal to the folder: diff by size/mtime then content hash, flush in batches.

Each flush is one delete and one add, so a reader sees a file either as before or as after, never
half-updated. A file that cannot be read or embedded keeps its last indexed rows and is reported.
Only one sync runs at a time; callers that arrive during a run share one follow-up sync. A sync
answers once its rows are committed; compaction follows in the background (indexing/compaction.py).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.metadata import parse_document, supersedes_boundary
from ragdown.documents.paths import escaped, shown
from ragdown.errors import Refusal
from ragdown.indexing.compaction import Compaction
from ragdown.indexing.embedders.base import Embedder
from ragdown.indexing.listing import FileStat, Listing, listing_of, markdown_listing
from ragdown.indexing.rows import PendingFile, build_rows
from ragdown.indexing.schema import FileState
from ragdown.indexing.store import ChunkStore
from ragdown.indexing.vector_cache import VectorCache

log = logging.getLogger(__name__)

FLUSH_CHUNKS = 256
# Why a file whose name (or a folder's above it) is not UTF-8 is never indexed: no row, JSON answer
# or client can carry such a name (docs/security.md#tenants).
NOT_UTF8 = "the file name is not UTF-8; rename it"


class FailedFile(BaseModel):
    path: str  # escaped (paths.escaped), so any name is safe to report
    error: str


class SyncReport(BaseModel):
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    # Chunks whose vector came from the index instead of the embedder (docs/design.md#embedding-cache).
    reused: int = 0
    ms: int = 0
    failed: list[FailedFile] = Field(default_factory=list)
    at: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


class SyncProgress(BaseModel):
    files_done: int
    files_total: int
    chunks: int
    elapsed_s: float


ProgressCallback = Callable[[SyncProgress], None]


def read_text(root: Path, path: str) -> str:
    """The file's text: UTF-8, with undecodable bytes replaced rather than refused. Opened through the
    path rule's walk (no symlink at any level); FileNotFoundError when it is gone or no longer a file."""
    data = files.read_file(Root(root), path.split("/"))
    if data is None:
        raise FileNotFoundError(path)
    return data.decode("utf-8", errors="replace")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Run:
    """The state of one sync pass."""

    def __init__(self, syncer: Syncer, total: int, progress: ProgressCallback | None) -> None:
        self.syncer = syncer
        self.report = SyncReport()
        self.batch: list[PendingFile] = []
        self.batch_chunks = 0
        self.removed: list[str] = []
        self.files_done = 0
        self.total = total
        self.progress = progress
        self.started = time.perf_counter()
        self.cache: VectorCache | None = None  # made when this run first changes anything

    def vectors(self) -> VectorCache:
        """This run's cache, with the rows of what it is about to remove or rewrite read in."""
        if self.cache is None:
            self.cache = VectorCache()
            previous = self.syncer.previous_vectors()
            if previous is not None:
                self.cache.add_table(previous)
        rewritten = [pending.doc.path for pending in self.batch if not pending.is_new]
        self.cache.add_paths(self.syncer.store, [*self.removed, *rewritten])
        return self.cache

    def flush(self) -> None:
        store, embedder = self.syncer.store, self.syncer.embedder
        embedded, vectors = self._embed(self.batch, embedder)
        paths = [p.doc.path for p in embedded] + self.removed
        rows = build_rows(embedded, vectors, embedder.dim) if embedded else None
        store.replace(paths, rows)
        for pending in embedded:
            if pending.is_new:
                self.report.added += 1
            else:
                self.report.updated += 1
            self.report.chunks += len(pending.doc.chunks)
        self.report.removed += len(self.removed)
        self.batch, self.batch_chunks, self.removed = [], 0, []
        if self.progress:
            elapsed = time.perf_counter() - self.started
            self.progress(
                SyncProgress(
                    files_done=self.files_done,
                    files_total=self.total,
                    chunks=self.report.chunks,
                    elapsed_s=elapsed,
                )
            )

    def _embed(self, batch: list[PendingFile], embedder: Embedder) -> tuple[list[PendingFile], np.ndarray]:
        """Embed the whole batch, each text the index already holds a vector for taken from there; if
        that fails, file by file so one bad file fails alone."""
        texts = [t for pending in batch for t in pending.embedding_texts()]
        cache = self.vectors()  # before the rows it reads are replaced, even with nothing to embed
        if not texts:
            return batch, np.zeros((0, embedder.dim), dtype=np.float32)
        found = [cache.get(text) for text in texts]
        # Each text the index lacks is embedded once, however often the batch repeats it.
        missing = list(
            dict.fromkeys(text for text, vector in zip(texts, found, strict=True) if vector is None)
        )
        try:
            fresh = embedder.embed(missing, "document") if missing else None
        except Exception:
            log.warning("embedding a batch of %d files failed; retrying file by file", len(batch))
        else:
            for text, vector in zip(missing, fresh if fresh is not None else [], strict=True):
                cache.put(text, vector)
            vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
            for row, text in enumerate(texts):
                vector = cache.get(text)
                assert vector is not None  # found, or just embedded and put
                vectors[row] = vector
            self.report.reused += len(texts) - len(missing)
            return batch, vectors
        kept: list[PendingFile] = []
        parts: list[np.ndarray] = []
        for pending in batch:
            try:
                parts.append(embedder.embed(pending.embedding_texts(), "document"))
                kept.append(pending)
            except Exception as error:
                self.fail(pending.doc.path, f"cannot embed: {error}")
        return kept, np.concatenate(parts) if parts else np.zeros((0, embedder.dim), dtype=np.float32)

    def fail(self, path: str, error: str, *, indexed: bool = True) -> None:
        """Report `path` as failed; `indexed`: its last indexed version, if any, stays searchable."""
        if indexed:
            log.warning("%s kept its last indexed version: %s", shown(path), error)
        else:
            log.warning("%s is not indexed: %s", shown(path), error)
        self.report.failed.append(FailedFile(path=escaped(path), error=error))


class Syncer:
    """Syncs one folder into one store, one run at a time."""

    def __init__(
        self, root: Path, store: ChunkStore, embedder: Embedder, *, folders_only: bool = False
    ) -> None:
        self.root = root
        self.folders_only = folders_only
        # Called after every completed sync (the engine switches to a rebuilt index there).
        self.after_sync: Callable[[SyncReport], None] | None = None
        self.store = store
        self.embedder = embedder
        # During a rebuild, the table being replaced when the same model built it (the engine says):
        # its vectors are reused rather than computed again (docs/design.md#embedding-cache).
        self.previous_vectors: Callable[[], ChunkStore | None] = lambda: None
        self.last_sync: SyncReport | None = None
        self._lock = threading.Lock()
        self._running: Future[SyncReport] | None = None
        self._follow_up: Future[SyncReport] | None = None
        self._follow_up_full = False
        self._follow_up_progress: ProgressCallback | None = None
        self._follow_up_paths: set[str] | None = None
        self._current: _Run | None = None
        # Of whichever table is being written now (`store` moves to a rebuild's new table).
        self.compaction = Compaction(lambda: self.store.compact())
        self._backlog_checked = False

    @property
    def syncing(self) -> bool:
        return self._running is not None

    @property
    def pending_files(self) -> int:
        """Files the running sync has still to look at or to embed (0 when idle): the embed queue."""
        run = self._current
        return 0 if run is None else max(0, run.total - run.files_done) + len(run.batch)

    def files_checked(self) -> tuple[int, int] | None:
        """The running sync's files looked at so far and its total, or None when idle."""
        run = self._current
        return None if run is None else (run.files_done, run.total)

    def sync(
        self, full: bool = False, progress: ProgressCallback | None = None, *, paths: list[str] | None = None
    ) -> SyncReport:
        """Run a sync (or join the pending follow-up) and wait for its report."""
        return self.request(full, progress, paths=paths).result()

    def request(
        self, full: bool = False, progress: ProgressCallback | None = None, *, paths: list[str] | None = None
    ) -> Future[SyncReport]:
        """Start a sync now, or share the single follow-up that starts when the running one ends.
        `paths`: only these root-relative files changed (a write through ragdown's own calls), so
        only they are looked at; None looks at every file. A follow-up shared by several callers
        looks at the union of their paths, or at every file if any of them asked for that."""
        wanted = None if full or paths is None else set(paths)
        with self._lock:
            if self._running is None:
                future: Future[SyncReport] = Future()
                self._running = future
                arguments = (future, full, progress, wanted)
                threading.Thread(target=self._drive, args=arguments, name="ragdown-sync", daemon=True).start()
                return future
            if self._follow_up is None:
                self._follow_up = Future()
                self._follow_up_full = full
                self._follow_up_progress = progress
                self._follow_up_paths = wanted
            else:
                self._follow_up_full = self._follow_up_full or full
                known = self._follow_up_paths
                self._follow_up_paths = None if known is None or wanted is None else known | wanted
            return self._follow_up

    def _drive(
        self,
        future: Future[SyncReport],
        full: bool,
        progress: ProgressCallback | None,
        paths: set[str] | None,
    ) -> None:
        while True:
            try:
                future.set_result(self._run(full, progress, paths))
            except BaseException as error:
                log.exception("sync failed")
                future.set_exception(error)
            finally:
                self._current = None
            with self._lock:
                if self._follow_up is None:
                    self._running = None
                    return
                future, full, progress = self._follow_up, self._follow_up_full, self._follow_up_progress
                paths = self._follow_up_paths
                self._follow_up, self._running = None, future

    def _states(self, paths: set[str] | None) -> tuple[dict[str, FileState], Listing]:
        """What the index knows and what is on disk: of `paths` alone when they are files both in
        the index and on disk (docs/design.md#sync), else of every file (a walk and a read of every
        file's state)."""
        if paths is not None and not self.store.building:
            chosen = sorted(paths)
            listing = listing_of(self.root, chosen, folders_only=self.folders_only)
            indexed = self.store.files_at(chosen) if listing is not None else None
            if listing is not None and indexed is not None:
                return indexed, listing
        return self.store.files(), markdown_listing(self.root, folders_only=self.folders_only)

    def _run(self, full: bool, progress: ProgressCallback | None, paths: set[str] | None) -> SyncReport:
        if full:
            self.store.delete_all()
        indexed, listing = self._states(None if full else paths)
        on_disk = listing.files
        run = _Run(self, len(on_disk), progress)
        self._current = run
        for path in listing.not_utf8:
            run.fail(path, NOT_UTF8, indexed=False)
        run.removed = [path for path in indexed if path not in on_disk]
        for path, stat in sorted(on_disk.items()):
            run.files_done += 1
            pending = self._examine(path, stat, indexed.get(path), run)
            if pending is None:
                continue
            run.batch.append(pending)
            run.batch_chunks += len(pending.doc.chunks)
            if run.batch_chunks >= FLUSH_CHUNKS:
                run.flush()
        if run.batch or run.removed:
            run.flush()
        if run.report.changed:
            self.compaction.committed()
        elif not self._backlog_checked and self.store.writable and self.store.needs_compaction():
            self.compaction.committed()  # a process stopped before compacting its last commits
        self._backlog_checked = True
        run.report.ms = round((time.perf_counter() - run.started) * 1000)
        run.report.at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.last_sync = run.report
        if self.after_sync is not None:
            self.after_sync(run.report)
        return run.report

    def _examine(self, path: str, stat: FileStat, known: FileState | None, run: _Run) -> PendingFile | None:
        """A file to (re)index, or None when it is unchanged, vanished or unreadable."""
        if known is not None and known.mtime_ms == stat.mtime_ms and known.size == stat.size:
            run.report.unchanged += 1
            return None
        try:
            text = read_text(self.root, path)
        except (FileNotFoundError, Refusal):
            log.info("%s vanished before it could be read", path)
            return None
        except OSError as error:
            run.fail(path, f"cannot read: {error.strerror or error}")
            return None
        file_hash = content_hash(text)
        if known is not None and known.hash == file_hash:
            run.report.unchanged += 1  # touched, not changed: re-hashed each sync, never re-embedded
            return None
        try:
            doc = parse_document(
                text, path, self.embedder.max_chars, supersedes_boundary(path, self.folders_only)
            )
        except Exception as error:  # a chunker bug must not stop the other files
            run.fail(path, f"cannot parse: {error}")
            return None
        return PendingFile(doc, file_hash, stat, is_new=known is None)
