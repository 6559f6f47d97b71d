"""The index of one docs dir as it is opened, synced, rebuilt beside and closed
(docs/design.md#engine): the active table and its embedder, the syncer that fills it, and the copy of
the folder kept beside an index on object storage."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import is_skipped_entry
from ragdown.errors import ConflictError, Refusal
from ragdown.indexing.active import ActiveIndex
from ragdown.indexing.embedders import Embedder, create_embedder
from ragdown.indexing.folder_copy import COPY_NAME, FolderCopy
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.lance_session import set_cache_limits
from ragdown.indexing.meta import META_FILE
from ragdown.indexing.snapshot.layout import SNAPSHOT_DIR
from ragdown.indexing.snapshot.writer import SnapshotWriter
from ragdown.indexing.store import ChunkStore
from ragdown.indexing.sync import FLUSH_CHUNKS, ProgressCallback, Syncer, SyncReport
from ragdown.indexing.table import LANCE_DIR
from ragdown.modes import make_private_dir, tighten, tighten_tree
from ragdown.release_memory import release_free_memory
from ragdown.settings import ServerSettings

log = logging.getLogger(__name__)

# A full re-index reads, chunks and writes every folder again (vectors of unchanged text are reused,
# docs/design.md#embedding-cache): an agent may ask for one this often, no more.
FULL_REINDEX_EVERY_S = 600.0


def keep_private(data_dir: Path) -> None:
    """The data dir and the index's files in it are the owner's only, those an older release left
    readable included (docs/security.md#tenants): it holds every folder's text."""
    make_private_dir(data_dir)
    tighten(data_dir)
    for entry in data_dir.iterdir():
        if entry.name.startswith(LANCE_DIR) or entry.name in (META_FILE, COPY_NAME, SNAPSHOT_DIR):
            tighten_tree(entry)


class IndexLifecycle:
    """Opens the index (`index`, the table being written and the one searched), keeps it equal to the
    files (`syncer`), rebuilds it beside the current one on a full re-index or another embedder, and
    publishes each finished sync: the switch to a rebuilt table and the folder copy."""

    def __init__(
        self,
        docs_dir: Path,
        data_dir: Path,
        embedder: Embedder,
        *,
        source: str,
        settings: ServerSettings,
        location: IndexLocation,
        folders_mode: bool,
        writable: bool,
    ) -> None:
        self.docs_dir = docs_dir
        self.writable = writable
        set_cache_limits(settings.index_cache_mb, settings.metadata_cache_mb)
        self.index = ActiveIndex(
            data_dir, embedder, source, writable=writable, threads=settings.threads, location=location
        )
        # Readers without the folder read it from beside an index on object storage.
        self.folder_copy = FolderCopy(location) if location.remote and writable else None
        self.syncer = Syncer(docs_dir, self.index.store, embedder, folders_only=folders_mode)
        self.syncer.after_sync = self._after_sync
        self.syncer.previous_vectors = self.index.previous_vectors
        self._full_lock = threading.Lock()
        self._last_full: float | None = None
        # The primary keeps the search snapshot of the table it writes (docs/design.md#search-snapshot).
        self.snapshots = SnapshotWriter(lambda: self.index.store.persist_snapshot()) if writable else None
        if self.snapshots is not None:
            # A compaction re-points the snapshot, or drops one it raced with: then write it again.
            self.syncer.compaction.after = self._snapshot_again

    def _snapshot_again(self) -> None:
        if self.snapshots is not None:
            self.snapshots.request()

    def _after_sync(self, report: SyncReport) -> None:
        self.index.publish()
        self.publish_folder_copy()
        if self.snapshots is not None:
            self.snapshots.request()
        if report.chunks >= FLUSH_CHUNKS:
            # Batches of text, vectors and Arrow tables, all freed now. Not after a small write's
            # sync: handing pages back costs time and the next writes ask for them again.
            release_free_memory()

    @property
    def store(self) -> ChunkStore:
        """The table being written (during a rebuild, the new one; searches use `index.searched()`)."""
        return self.index.store

    @property
    def embedder(self) -> Embedder:
        return self.index.embedder

    def is_empty(self) -> bool:
        return self.store.count_rows() == 0

    def sweep_temps(self) -> None:
        """Temporary files of writers killed mid-write: dot files nobody indexes, only clutter."""
        try:
            files.remove_stale_temps(Root(self.docs_dir), is_skipped_entry)
        except Exception:  # clutter is no reason not to start
            log.exception("could not sweep stale temporary files")

    def sync(
        self, full: bool = False, progress: ProgressCallback | None = None, *, paths: list[str] | None = None
    ) -> SyncReport:
        """Bring the index up to date; `full` rebuilds it from every file into a new index beside the
        current one, which keeps answering searches until the new one is complete. The new index takes
        the current one's vectors for every text it already holds when the same model built it
        (docs/design.md#embedding-cache), so only text the index lacks is embedded. `paths`: only
        these root-relative files changed, so only they are looked at (Syncer.request)."""
        if full and self.writable and not self.store.building and not self.is_empty():
            self.syncer.store = self.index.rebuild_beside()
            full = False
        return self.syncer.sync(full, progress, paths=paths)

    def claim_full_reindex(self) -> None:
        """Allow one full re-index now, or refuse (429) if one was allowed less than
        FULL_REINDEX_EVERY_S ago: any agent may ask for one, and each rewrites every folder's rows."""
        with self._full_lock:
            now = time.monotonic()
            if self._last_full is not None and now - self._last_full < FULL_REINDEX_EVERY_S:
                wait = round(FULL_REINDEX_EVERY_S - (now - self._last_full))
                raise Refusal(
                    429,
                    f"a full re-index ran less than {round(FULL_REINDEX_EVERY_S / 60)} minutes ago; "
                    f"the next may run in {wait} s (ragdown_reindex without full syncs changes now)",
                )
            self._last_full = now

    def switch_embedder(self, name: str, threads: int | None) -> None:
        """Load `name` first (an embedder that cannot load raises and changes nothing), then build a
        new index with it beside the current one, which answers searches until the new is complete."""
        if self.store.building:
            raise ConflictError("the index is being rebuilt already; change the embedder once it is done")
        loaded = create_embedder(name, threads=threads)
        if loaded.name == self.embedder.name:
            loaded.close()
            return
        with self._full_lock:
            self.index.embedder, self.index.source = loaded, name
            self.syncer.store = self.index.rebuild_beside()
            self.syncer.embedder = loaded
        self.syncer.request()

    def publish_folder_copy(self) -> None:
        """With the index on object storage, bring the copy of the folder readers read up to date:
        after every sync, and after a folder's or the server's settings change without one
        (docs/design.md#readers-without-the-folder)."""
        if self.folder_copy is None:
            return
        try:
            self.folder_copy.publish(self.docs_dir)
        except Exception as error:  # readers keep the last copy; the next sync tries again
            log.warning("could not copy the folder beside the index: %s", error)

    def follow_index(self) -> None:
        """On a reader: follow the primary to a rebuilt index (ActiveIndex.follow)."""
        if not self.writable:
            self.index.follow()

    def see_latest(self) -> None:
        """Look at the index's newest commit now (a write just made for this reader), not within
        the refresh bound; a failure leaves the bound to catch up."""
        try:
            self.index.location.read_meta(fresh=True)
            self.follow_index()
            self.index.searched()[0].see_latest()
        except Exception as error:
            log.info("could not look at the newest index version: %s", error)

    def close(self) -> None:
        if self.snapshots is not None:  # a one-shot `ragdown index` leaves its snapshot behind
            self.snapshots.wait()
        self.embedder.close()
