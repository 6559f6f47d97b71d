"""Search calls and reads of documents answered from the search snapshot while the index itself is
not open (docs/design.md#search-snapshot): `ragdown search` and a starting `ragdown stdio` need
neither LanceDB nor a scan of the table."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ragdown.engine.document_calls import DocumentCalls
from ragdown.engine.reader import DocumentReader
from ragdown.engine.search_calls import SearchCalls
from ragdown.engine.searcher import Searcher
from ragdown.indexing.active import meta_for
from ragdown.indexing.embedder_loading import Loaded
from ragdown.indexing.index_location import index_location
from ragdown.indexing.meta import rebuild_reason
from ragdown.indexing.snapshot.store import SnapshotIndex, current_snapshot
from ragdown.settings import ServerSettings

if TYPE_CHECKING:
    from ragdown.hook.session_memory import SessionMemory
    from ragdown.indexing.active import ActiveIndex
    from ragdown.indexing.embedders import Embedder


class SnapshotEngine(SearchCalls, DocumentCalls):
    """The search calls of an `Engine`, and its reads of documents (the list, one read, counts), over
    the snapshot of the index as it is on disk now: the snapshot holds every column but the vector and
    the BM25 text. The embedder is the caller's: it outlives this (the engine that takes over uses
    it)."""

    def __init__(self, searcher: Searcher) -> None:
        self.searcher = searcher
        # What the reads of documents take of `index.store` the snapshot store answers in full.
        index = cast("ActiveIndex", searcher.index)
        self.reader = DocumentReader(
            index, searcher.docs_dir, ready=lambda: None, folders_mode=searcher.folders_mode
        )

    @property
    def settings(self) -> ServerSettings:
        return self.searcher.settings

    @property
    def memory(self) -> SessionMemory:
        """The hook's session memory, for the engine that takes over to keep."""
        return self.searcher.memory

    @classmethod
    def open(
        cls,
        docs_dir: Path,
        data_dir: Path,
        embedder: Embedder | Future[Loaded],
        source: str,
        settings: ServerSettings,
    ) -> SnapshotEngine | None:
        """None unless the index is on this disk, its snapshot answers for its newest version and was
        built by `embedder`, and no setting asks for what only the table answers (following links).
        `embedder` may still be loading (`embedder_loading.load_beside`, whose name then replaces
        `source`): the snapshot is mapped meanwhile."""
        location = index_location(data_dir, settings)
        if location.remote or settings.follow_links > 0:
            return None
        store = current_snapshot(location.data_dir)
        if isinstance(embedder, Future):
            embedder, source = embedder.result()
        if store is None or rebuild_reason(store.meta, meta_for(embedder, source)) is not None:
            return None
        searcher = Searcher(
            SnapshotIndex(store, embedder),
            docs_dir,
            data_dir,
            settings,
            ready=lambda: None,
            folders_mode=False,
            policy=None,
            memory=None,
            server_config=None,
        )
        return cls(searcher)

    def close(self) -> None:
        """Close the embedder: for a caller that hands it to no engine (a one-shot search)."""
        self.searcher.index.embedder.close()
