"""The index that searches use, and the switch to a new one (docs/design.md#meta-and-rebuilds).

A full re-index, or another embedder or chunking, builds a new table beside the current one. Until
it is complete, searches keep using the old table with the embedder it was built with, so nothing
answers from a half-built index. A reader follows the primary's switch the same way.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ragdown.errors import EmbedderError, IndexNotReadyError
from ragdown.indexing.embedders import Embedder, create_embedder
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.meta import INDEX_VERSION, IndexMeta, current_meta, rebuild_reason

if TYPE_CHECKING:  # LanceDB's store: not for a search from the snapshot (docs/design.md#start-up)
    from ragdown.indexing.store import ChunkStore

log = logging.getLogger(__name__)


def meta_for(embedder: Embedder, source: str) -> IndexMeta:
    """What the index records for vectors from `embedder` (chosen by the name `source`)."""
    return current_meta(embedder.name, embedder.dim, embedder.model_sha256, source, embedder.max_chars)


def recorded_embedder(location: IndexLocation) -> str | None:
    """The registry name of the embedder the existing index was built with, if any."""
    meta = location.read_meta(fresh=True)
    return meta.source if meta and meta.source else None


class ActiveIndex:
    """The table being written (`store`, with `embedder`) and, during a rebuild, the complete one
    that searches keep using meanwhile."""

    def __init__(
        self,
        data_dir: Path,
        embedder: Embedder,
        source: str,
        *,
        writable: bool,
        threads: int | None,
        location: IndexLocation | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.location = location or IndexLocation(data_dir)
        self.threads = threads
        self.embedder = embedder
        self.source = source
        self.store = self._open(meta_for(embedder, source), writable=writable)
        self._searched: tuple[ChunkStore, Embedder] | None = self._previous()
        self._follow_lock = threading.Lock()

    def _open(self, meta: IndexMeta, *, writable: bool = True, fresh: bool = False) -> ChunkStore:
        from ragdown.indexing.store import ChunkStore

        return ChunkStore(self.data_dir, meta, writable=writable, fresh=fresh, location=self.location)

    def searched(self) -> tuple[ChunkStore, Embedder]:
        """The table and embedder a search uses now: the previous pair while a rebuild fills the new."""
        return self._searched or (self.store, self.embedder)

    def previous_vectors(self) -> ChunkStore | None:
        """During a rebuild, the table it replaces when the same model built it (same name, file digest
        and dimension), whose vectors a sync may reuse (docs/design.md#embedding-cache)."""
        previous = self._searched
        if previous is None or previous[0] is self.store:
            return None
        old, new = previous[0].meta, self.store.meta
        same = (old.embedder, old.model_sha256, old.dim) == (new.embedder, new.model_sha256, new.dim)
        return previous[0] if same else None

    def rebuild_beside(self) -> ChunkStore:
        """Start a fresh table beside the current one, which keeps answering searches; the caller
        fills the new one and calls `publish` once it is complete."""
        new = self._open(meta_for(self.embedder, self.source), fresh=True)
        self._searched = (self.store, self.embedder)
        self.store = new
        return new

    def publish(self) -> None:
        """After a sync: a table that was being built is complete, so searches switch to it."""
        if not self.store.building:
            return
        self.store.publish()
        searched, self._searched = self._searched, None
        if searched is not None and searched[1] is not self.embedder:
            searched[1].close()

    def _previous(self) -> tuple[ChunkStore, Embedder] | None:
        """A rebuild interrupted by a restart: the complete previous table, opened read-only with the
        embedder it was built with, answers until the new one is done."""
        previous = self.store.previous
        if not self.store.building or previous is None:
            return None
        if previous.index_version != INDEX_VERSION:  # columns this release may not read
            return None
        name = previous.source or previous.embedder
        try:
            same = previous.embedder == self.embedder.name
            embedder = self.embedder if same else create_embedder(name, threads=self.threads)
            if (embedder.name, embedder.dim) != (previous.embedder, previous.dim):
                if embedder is not self.embedder:
                    embedder.close()
                return None  # the model by that name is not the one that built it
            # Opened as it was recorded: a table another chunker cut still answers searches, and its
            # vectors are still the model's for each text (docs/design.md#embedding-cache).
            return self._open(previous, writable=False), embedder
        except (IndexNotReadyError, EmbedderError) as error:
            log.warning("the previous index cannot serve during the rebuild (%s)", error)
            return None

    def _moved(self, recorded: IndexMeta) -> bool:
        """The primary switched tables: another embedder or chunking, or a rebuild beside the old."""
        moved = recorded.lance_dir != self.store.lance_dir
        return moved or rebuild_reason(recorded, self.store.meta) is not None

    def follow(self) -> None:
        """On a reader: when the primary switched tables, load the embedder the new one was built
        with and reopen the store, so a query is never embedded with a model the index was not
        built with. Until the new table is complete the reader keeps the one it has."""
        recorded = self.location.read_meta()
        if recorded is None or not self._moved(recorded):
            return
        with self._follow_lock:
            if not self._moved(recorded):
                return
            name = recorded.source or recorded.embedder
            try:
                same = rebuild_reason(recorded, self.store.meta) is None
                embedder = self.embedder if same else create_embedder(name, threads=self.threads)
                store = self._open(meta_for(embedder, name), writable=False)
            except (IndexNotReadyError, EmbedderError) as error:
                log.info("the index is being rebuilt; searching the previous one meanwhile (%s)", error)
                return
            log.warning("the index was rebuilt with %s: following it", embedder.name)
            # The previous embedder is not closed: a search that started with it may still run.
            self.embedder, self.store, self.source = embedder, store, name
