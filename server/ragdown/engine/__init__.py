"""The engine: what every front end (CLI, HTTP, MCP) calls for one docs dir, none re-implementing it.

`Engine` is a thin composition (docs/design.md#engine) of four parts, each in a module of its own:
the index's lifecycle (`lifecycle`: open, sync, rebuild, embedder switch, close), the syncs that run
by themselves (`sync_loop`: the first one, the watcher), the searcher (`searcher`: search, recall,
the hook, the query log) and the reader of documents (`reader`: list, read, counts).
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown.engine.document_calls import DocumentCalls
from ragdown.engine.search_calls import SearchCalls
from ragdown.engine.searcher import Searcher
from ragdown.folders.dir_checks import check_data_dir, check_docs_dir
from ragdown.indexing.embedder_loading import load_embedder
from ragdown.indexing.index_location import index_location
from ragdown.settings import ServerSettings

# The index's own parts (LanceDB's store, the syncer, the watcher, the catalog) are imported when an
# engine opens: a search answered from the snapshot never needs them (docs/design.md#start-up).
if TYPE_CHECKING:
    from ragdown.hook.session_memory import SessionMemory
    from ragdown.indexing.embedders import Embedder
    from ragdown.indexing.store import ChunkStore
    from ragdown.indexing.sync import ProgressCallback, SyncReport
    from ragdown.indexing.watcher import FolderWatcher
    from ragdown.search.policy import SearchPolicy

__all__ = ["Engine", "index_location", "load_embedder"]


class Engine(SearchCalls, DocumentCalls):
    """The index of one folder: sync, watch, search, read. Each call is handed to the part that
    owns it; the parts share the index (`index`, `syncer`) and nothing else."""

    def __init__(
        self,
        docs_dir: Path,
        data_dir: Path,
        embedder: Embedder,
        *,
        source: str,
        watch: bool | None = None,
        settings: ServerSettings | None = None,
        policy: SearchPolicy | None = None,
        memory: SessionMemory | None = None,
        server_config: Path | None = None,
        folders_mode: bool = False,
        writable: bool = True,
    ) -> None:
        """`settings` defaults to the environment's; `server_config` is the saved server settings
        file (`.ragdown-server.json`) whose `hook` sits between a folder's and the environment's."""
        from ragdown.engine.lifecycle import IndexLifecycle, keep_private
        from ragdown.engine.reader import DocumentReader
        from ragdown.engine.sync_loop import SyncLoop

        self.docs_dir = check_docs_dir(docs_dir)
        self.data_dir = check_data_dir(data_dir, self.docs_dir)
        if writable:
            keep_private(self.data_dir)
        self.settings = settings or ServerSettings()
        self.folders_mode = folders_mode
        self.writable = writable
        self.lifecycle = IndexLifecycle(
            self.docs_dir,
            data_dir,
            embedder,
            source=source,
            settings=self.settings,
            location=index_location(self.data_dir, self.settings),
            folders_mode=folders_mode,
            writable=writable,
        )
        self.index, self.syncer = self.lifecycle.index, self.lifecycle.syncer
        watching = self.settings.watch if watch is None else watch
        self.sync_loop = SyncLoop(self.docs_dir, self.syncer, watch=watching)
        self.searcher = Searcher(
            self.index,
            self.docs_dir,
            self.data_dir,
            self.settings,
            ready=self._ready,
            folders_mode=folders_mode,
            policy=policy,
            memory=memory,
            server_config=server_config,
        )
        self.reader = DocumentReader(self.index, self.docs_dir, ready=self._ready, folders_mode=folders_mode)

    @classmethod
    def open(
        cls,
        docs_dir: Path,
        data_dir: Path,
        embedder_name: str | None = None,
        threads: int | None = None,
        watch: bool | None = None,
        settings: ServerSettings | None = None,
        *,
        loaded: tuple[Embedder, str] | None = None,
        **options: Any,
    ) -> Engine:
        """Open with `embedder_name`, else the embedder the index was built with, else the default;
        `loaded`: that embedder, loaded already (`load_embedder`), with the name it was chosen by."""
        check_data_dir(data_dir, check_docs_dir(docs_dir))
        embedder, name = loaded or load_embedder(data_dir, embedder_name, threads, settings)
        return cls(docs_dir, data_dir, embedder, source=name, watch=watch, settings=settings, **options)

    def _ready(self) -> None:
        """Before a search or read: the first sync of an empty index is waited for, and a reader
        follows the primary to a rebuilt index."""
        self.sync_loop.wait_until_indexed()
        self.lifecycle.follow_index()

    # --- the index: lifecycle.IndexLifecycle and sync_loop.SyncLoop ---------------------------

    @property
    def store(self) -> ChunkStore:
        """The table being written (during a rebuild, the new one; searches use `index.searched()`)."""
        return self.lifecycle.store

    @property
    def embedder(self) -> Embedder:
        return self.lifecycle.embedder

    @property
    def rebuilt_because(self) -> str | None:
        return self.store.rebuilt_because

    @property
    def syncing(self) -> bool:
        """A sync is running or queued."""
        return self.syncer.syncing

    @property
    def last_sync(self) -> SyncReport | None:
        return self.syncer.last_sync

    @property
    def pending_files(self) -> int:
        """Files waiting to be embedded (the embed queue's depth)."""
        return self.syncer.pending_files

    def is_empty(self) -> bool:
        return self.lifecycle.is_empty()

    def sync(
        self, full: bool = False, progress: ProgressCallback | None = None, *, paths: list[str] | None = None
    ) -> SyncReport:
        return self.lifecycle.sync(full, progress, paths=paths)

    def sync_changed(self, paths: list[str] | None) -> SyncReport:
        """After a change ragdown made itself (a write tool), to `paths` (root-relative; None: it
        cannot say which): only those files are synced while the watcher watches, since it catches
        every change made beside ragdown's (a person's edit). Without a working watcher, every file
        is, as each write's sync is then the only one (docs/design.md#sync)."""
        watcher = self.sync_loop.watcher
        watching = watcher is not None and not watcher.polling
        return self.sync(paths=paths if watching else None)

    def claim_full_reindex(self) -> None:
        self.lifecycle.claim_full_reindex()

    def switch_embedder(self, name: str) -> None:
        self.lifecycle.switch_embedder(name, self.settings.threads)

    def publish_folder_copy(self) -> None:
        self.lifecycle.publish_folder_copy()

    def see_latest(self) -> None:
        self.lifecycle.see_latest()

    def start(
        self, progress: ProgressCallback | None = None, *, catch_up: bool = False
    ) -> Future[SyncReport]:
        """As a server starts: stale temporary files swept, the first sync in the background
        (`progress` follows it), then watching unless `RAGDOWN_WATCH=false`, in which case syncs
        happen only when asked for. An existing index answers searches meanwhile; an empty one makes
        them wait for the first sync (a search of a half-built index would say "nothing" where the
        documents do answer), and so does one the caller knows to be behind the folder (`catch_up`),
        whose answers would show text the files no longer hold."""
        if self.writable:
            self.lifecycle.sweep_temps()
        return self.sync_loop.start(progress, empty=self.lifecycle.is_empty(), catch_up=catch_up)

    @property
    def first_sync_done(self) -> bool:
        return self.sync_loop.first_sync_done

    @property
    def first_sync_wait_s(self) -> float:
        return self.sync_loop.first_sync_wait_s

    @first_sync_wait_s.setter
    def first_sync_wait_s(self, seconds: float) -> None:
        self.sync_loop.first_sync_wait_s = seconds

    @property
    def watcher(self) -> FolderWatcher | None:
        return self.sync_loop.watcher

    def start_watching(self) -> None:
        self.sync_loop.start_watching()

    # --- searches: searcher.Searcher ----------------------------------------------------------

    @property
    def memory(self) -> SessionMemory:
        """The hook's session memory (a reader's is kept by the primary)."""
        return self.searcher.memory

    @memory.setter
    def memory(self, memory: SessionMemory) -> None:
        self.searcher.memory = memory

    # --- the whole ------------------------------------------------------------------------------

    def apply_settings(self, settings: ServerSettings) -> None:
        """Settings saved from the web UI, in effect from the next call (docs/web.md#server-settings):
        search rules, hit size, the query log and watching. The embedder changes through
        `switch_embedder`, which rebuilds the index."""
        self.settings = settings
        self.searcher.apply_settings(settings)
        if self.writable:
            self.sync_loop.set_watch(settings.watch)

    def close(self) -> None:
        self.sync_loop.stop_watching()
        self.lifecycle.close()
