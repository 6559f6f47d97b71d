"""The engine: one object wiring documents, the index and search for one docs dir.

Every front end (CLI, HTTP, MCP) calls this; none re-implements what it does.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragdown.catalog import DocEntry, DocRead, documents, read_document
from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import is_skipped_entry
from ragdown.errors import ConflictError, Refusal, UnavailableError
from ragdown.folders.dir_checks import check_data_dir, check_docs_dir
from ragdown.folders.scope import Scope
from ragdown.hook.context import ContextFormat, ContextResult, build_context
from ragdown.hook.session_memory import ROOT_KEY_PREFIX, LruSessionMemory, SessionMemory, session_key
from ragdown.hook.settings import HookSettings
from ragdown.hook.settings import layers as hook_layers
from ragdown.hook.settings import resolve as resolve_hook
from ragdown.indexing.active import ActiveIndex, recorded_embedder
from ragdown.indexing.embedders import Embedder, create_embedder
from ragdown.indexing.folder_copy import COPY_NAME, FolderCopy
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.meta import META_FILE
from ragdown.indexing.store import LANCE_DIR, ChunkStore, set_cache_limits
from ragdown.indexing.sync import ProgressCallback, Syncer, SyncReport
from ragdown.indexing.watcher import FolderWatcher
from ragdown.modes import make_private_dir, tighten, tighten_tree
from ragdown.release_memory import release_free_memory
from ragdown.search.filters import SearchFilters, filter_fields
from ragdown.search.hybrid import Hit
from ragdown.search.pipeline import SearchOutcome, run_search
from ragdown.search.policy import SearchPolicy
from ragdown.search.query_log import LOG_NAME, QueryLog
from ragdown.settings import ServerSettings

log = logging.getLogger(__name__)

# A call on an empty index waits this long for the first sync, then is told it is still running:
# MCP clients give up on a call after about a minute, and an answer beats a timeout.
FIRST_SYNC_WAIT_S = 30.0
# A full re-index re-embeds every folder: an agent may ask for one this often, no more.
FULL_REINDEX_EVERY_S = 600.0


def index_location(data_dir: Path, settings: ServerSettings) -> IndexLocation:
    """Where the index lives: `RAGDOWN_INDEX_URI`, else the data dir
    (docs/design.md#index-on-object-storage)."""
    return IndexLocation(data_dir, settings.index_uri, settings.index_refresh_seconds)


def keep_private(data_dir: Path) -> None:
    """The data dir and the index's files in it are the owner's only, those an older release left
    readable included (docs/security.md#tenants): it holds every folder's text."""
    make_private_dir(data_dir)
    tighten(data_dir)
    for entry in data_dir.iterdir():
        if entry.name.startswith(LANCE_DIR) or entry.name in (META_FILE, COPY_NAME):
            tighten_tree(entry)


class Engine:
    """The index of one folder: sync, watch, search."""

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
        self.docs_dir = check_docs_dir(docs_dir)
        self.data_dir = check_data_dir(data_dir, self.docs_dir)
        if writable:
            keep_private(self.data_dir)
        self.settings = settings or ServerSettings()
        self.watch = self.settings.watch if watch is None else watch
        self.policy = policy or SearchPolicy(
            max_per_document=self.settings.max_per_document,
            follow_links=self.settings.follow_links,
            abstain=self.settings.abstain,
        )
        self.memory: SessionMemory = memory or LruSessionMemory()
        self.server_config = server_config
        log_file = self.settings.query_log_file or self.data_dir / LOG_NAME
        self.query_log_path = log_file
        self.query_log = (
            QueryLog(log_file, include_prompts=self.settings.query_log_prompts)
            if self.settings.query_log
            else None
        )
        self._first_sync: Future[SyncReport] | None = None  # while the index is empty
        self._started: Future[SyncReport] | None = None
        self.first_sync_wait_s = FIRST_SYNC_WAIT_S
        self._full_lock = threading.Lock()
        self._last_full: float | None = None
        set_cache_limits(self.settings.index_cache_mb, self.settings.metadata_cache_mb)
        self.index = ActiveIndex(
            data_dir,
            embedder,
            source,
            writable=writable,
            threads=self.settings.threads,
            location=index_location(self.data_dir, self.settings),
        )
        self.writable = writable
        # Readers without the folder read it from beside an index on object storage.
        location = self.index.location
        self.folder_copy = FolderCopy(location) if location.remote and writable else None
        self.folders_mode = folders_mode
        self.syncer = Syncer(self.docs_dir, self.index.store, embedder, folders_only=folders_mode)
        self.syncer.after_sync = self._after_sync
        self.syncer.previous_vectors = self.index.previous_vectors
        self.watcher: FolderWatcher | None = None

    def _after_sync(self, report: SyncReport) -> None:
        self.index.publish()
        self.publish_folder_copy()
        if report.changed:
            release_free_memory()  # batches of text, vectors and Arrow tables, all freed now

    @classmethod
    def open(
        cls,
        docs_dir: Path,
        data_dir: Path,
        embedder_name: str | None = None,
        threads: int | None = None,
        watch: bool | None = None,
        settings: ServerSettings | None = None,
        **options: Any,
    ) -> Engine:
        """Open with `embedder_name`, else the embedder the index was built with, else the default."""
        check_data_dir(data_dir, check_docs_dir(docs_dir))
        location = index_location(data_dir, settings or ServerSettings())
        name = embedder_name or recorded_embedder(location) or "minilm"
        embedder = create_embedder(name, threads=threads)
        return cls(docs_dir, data_dir, embedder, source=name, watch=watch, settings=settings, **options)

    @property
    def store(self) -> ChunkStore:
        """The table being written (during a rebuild, the new one; searches use `index.searched()`)."""
        return self.index.store

    @property
    def embedder(self) -> Embedder:
        return self.index.embedder

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

    def totals(self) -> tuple[int, int]:
        """Documents and chunks in the whole index."""
        files = self.store.files()
        return len(files), sum(state.chunks for state in files.values())

    def is_empty(self) -> bool:
        return self.store.count_rows() == 0

    def sync(self, full: bool = False, progress: ProgressCallback | None = None) -> SyncReport:
        """Bring the index up to date; `full` re-embeds everything into a new index built beside the
        current one, which keeps answering searches until the new one is complete."""
        if full and self.writable and not self.store.building and not self.is_empty():
            self.syncer.store = self.index.rebuild_beside()
            full = False
        return self.syncer.sync(full, progress)

    def claim_full_reindex(self) -> None:
        """Allow one full re-index now, or refuse (429) if one was allowed less than
        FULL_REINDEX_EVERY_S ago: any agent may ask for one, and each re-embeds every folder."""
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

    def search(
        self,
        query: str,
        limit: int = 10,
        filters: SearchFilters | None = None,
        policy: SearchPolicy | None = None,
    ) -> list[Hit]:
        return self.search_outcome(query, limit, filters, policy).hits

    def search_outcome(
        self,
        query: str,
        limit: int = 10,
        filters: SearchFilters | None = None,
        policy: SearchPolicy | None = None,
    ) -> SearchOutcome:
        """The hits with what the pipeline decided (routed, abstained), under this engine's policy
        unless `policy` overrides it."""
        store, embedder = self.index.searched()
        return run_search(
            store, embedder, query, limit, filters, policy or self.policy, folders_mode=self.folders_mode
        )

    def recall(
        self,
        query: str,
        limit: int = 10,
        filters: SearchFilters | None = None,
        *,
        scope: Scope | None = None,
        kind: str = "recall",
    ) -> list[Hit]:
        """A search as an agent or person asks it, inside `scope`: `filters.path_prefix` is read
        relative to the scope and hit paths come back relative to it. Logged when enabled."""
        scope = scope or Scope()
        self.wait_until_indexed()
        self.follow_index()
        started = time.perf_counter()
        asked = filters or SearchFilters()
        effective = replace(asked, path_prefix=scope.search_prefix(asked.path_prefix))
        hits = [replace(h, path=scope.relative(h.path)) for h in self.search(query, limit, effective)]
        if self.query_log is not None:
            elapsed = (time.perf_counter() - started) * 1000
            self.query_log.search(kind, scope.dir, query, filter_fields(filters), elapsed, hits)
        return hits

    def hook_settings(
        self, call: Mapping[str, Any] | None = None, scope: Scope | None = None
    ) -> HookSettings:
        """Argument > the folder's `.ragdown.json` > saved server settings > environment > the
        embedder's own values; the files are re-read on every call. The folder is the scope's
        top-level directory (the docs dir itself when it is served as one folder)."""
        top = scope.dir.split("/")[0] if scope and scope.dir else ""
        below = hook_layers(self.docs_dir, top, self.server_config, self.settings.hook_layer())
        return resolve_hook(call or {}, below, self.embedder.min_score, self.embedder.min_ratio)

    def context(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        reset: bool = False,
        output: ContextFormat = "text",
        overrides: Mapping[str, Any] | None = None,
        scope: Scope | None = None,
        within: tuple[str, ...] | None = None,
        source: str | None = None,
        caller: str = "",
    ) -> ContextResult:
        """`ragdown_context` for `scope`: the related sections not yet given to the session, with
        paths relative to the scope and a memory of the scope's own. `source` names the scope in the
        block; by default its absolute path (a local client's own folder). A search over listed
        folders (root /mcp) keeps a memory per `caller` kind, so two teams never share one."""
        scope = scope or Scope()
        self.wait_until_indexed()
        self.follow_index()
        started = time.perf_counter()
        settings = self.hook_settings(overrides, scope)
        filters = SearchFilters(path_prefix=scope.search_prefix(), within=within)
        result = build_context(
            prompt,
            recall=lambda query, limit: [
                replace(h, path=scope.relative(h.path)) for h in self.search(query, limit, filters)
            ],
            settings=settings,
            memory=self.memory,
            # A search limited to listed folders (root /mcp) keeps a memory of its own.
            key=session_key(ROOT_KEY_PREFIX + caller if within is not None else scope.dir, session_id)
            if session_id
            else None,
            source=source or (str(self.docs_dir / scope.dir) if scope.dir else str(self.docs_dir)),
            text_limit=self.settings.text_limit,
            max_per_document=self.policy.max_per_document,
            reset=reset,
            output=output,
        )
        if self.query_log is not None and result.searched:
            elapsed = (time.perf_counter() - started) * 1000
            self.query_log.context(
                scope.dir, prompt.strip(), elapsed, result.candidates, result.dropped, result.injected
            )
        return result

    def start(self, progress: ProgressCallback | None = None) -> Future[SyncReport]:
        """As a server starts: the first sync in the background (`progress` follows it), then
        watching unless `RAGDOWN_WATCH=false`, in which case syncs happen only when asked for. An
        existing index answers searches meanwhile; an empty one makes them wait for the first sync
        (a search of a half-built index would say "nothing" where the documents do answer)."""
        if self.writable:
            # Temporary files of writers killed mid-write: dot files nobody indexes, only clutter.
            try:
                files.remove_stale_temps(Root(self.docs_dir), is_skipped_entry)
            except Exception:  # clutter is no reason not to start
                log.exception("could not sweep stale temporary files")
        empty = self.is_empty()
        first = self.syncer.request(progress=progress)
        self._started = first
        self._first_sync = first if empty else None
        if self.watch:
            self.start_watching()
        return first

    def warm(self) -> None:
        """Load what the first search would (the model's session, the BM25 index, the in-memory
        vectors) by running one search that nobody logs, so a client's first call is answered at the
        speed of the others (docs/design.md#start-up), and start building the rows' BM25 postings
        (docs/search.md#bm25-from-memory). A failure here is the first call's."""
        try:
            self.search_outcome("ragdown warm-up", 1)
            self.index.searched()[0].start_lexicon()
        except Exception as error:  # the first real call reports it with the caller's context
            log.debug("warm-up search failed: %s", error)

    @property
    def first_sync_done(self) -> bool:
        """The sync `start` began has ended (a reader, which never syncs, counts as done)."""
        return self._started is None or self._started.done()

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

    def see_latest(self) -> None:
        """Look at the index's newest commit now (a write just made for this reader), not within
        the refresh bound; a failure leaves the bound to catch up."""
        try:
            self.index.location.read_meta(fresh=True)
            self.follow_index()
            self.index.searched()[0].see_latest()
        except Exception as error:
            log.info("could not look at the newest index version: %s", error)

    def follow_index(self) -> None:
        """On a reader: follow the primary to a rebuilt index (ActiveIndex.follow)."""
        if not self.writable:
            self.index.follow()

    def documents(self) -> dict[str, DocEntry]:
        """Every indexed document (catalog.documents), once a new index has had its first sync: a
        list on a fresh start would otherwise say "No documents." of a folder full of them."""
        self.wait_until_indexed()
        self.follow_index()
        return documents(self.store, self.folders_mode)

    def folder_counts(self) -> dict[str, tuple[int, int]]:
        """Documents and chunks per top-level folder, kept until the table changes: the operator asks
        for every folder's counts on each resync, and a scan of a large index is not free."""

        def scan() -> dict[str, tuple[int, int]]:
            counts: dict[str, tuple[int, int]] = {}
            for path, state in self.store.files().items():
                folder = path.split("/", 1)[0]
                documents, chunks = counts.get(folder, (0, 0))
                counts[folder] = (documents + 1, chunks + state.chunks)
            return counts

        self.store.refresh()  # a commit by another process counts too
        return self.store.memo("folder_counts", scan)

    def read(self, scope: Scope, path: str, start_line: int | None, end_line: int | None) -> DocRead:
        """`ragdown_read_doc` in `scope` (catalog.read_document), after the first sync."""
        self.wait_until_indexed()
        self.follow_index()
        return read_document(
            self.docs_dir, self.store, scope, path, start_line, end_line, folders_mode=self.folders_mode
        )

    def wait_until_indexed(self) -> None:
        """Wait for the first sync of an empty index; past `first_sync_wait_s`, say that it is still running
        (UnavailableError) rather than answer "nothing" from a half-built index. A first sync that
        failed has been logged: the call answers with what there is."""
        first = self._first_sync
        if first is None or first.done():
            return
        with contextlib.suppress(Exception):
            first.result(timeout=self.first_sync_wait_s)
        if not first.done():
            checked = self.syncer.files_checked()
            so_far = f" ({checked[0]} of {checked[1]} files so far)" if checked else ""
            raise UnavailableError(
                f"the first index of this folder is still being built{so_far}; ask again in a minute"
            )

    def apply_settings(self, settings: ServerSettings) -> None:
        """Settings saved from the web UI, in effect from the next call (docs/web.md#server-settings):
        search rules, hit size, the query log and watching. The embedder changes through
        `switch_embedder`, which rebuilds the index."""
        self.settings = settings
        self.policy = replace(
            self.policy, max_per_document=settings.max_per_document, follow_links=settings.follow_links
        )
        if not settings.query_log:
            self.query_log = None
        elif self.query_log is None:
            self.query_log = QueryLog(self.query_log_path, include_prompts=settings.query_log_prompts)
        if settings.watch != self.watch and self.writable:
            self.watch = settings.watch
            if settings.watch:
                self.start_watching()
                self.syncer.request()  # what changed while nobody watched
            elif self.watcher is not None:
                self.watcher.stop()
                self.watcher = None

    def switch_embedder(self, name: str) -> None:
        """Load `name` first (an embedder that cannot load raises and changes nothing), then build a
        new index with it beside the current one, which answers searches until the new is complete."""
        if self.store.building:
            raise ConflictError("the index is being rebuilt already; change the embedder once it is done")
        loaded = create_embedder(name, threads=self.settings.threads)
        if loaded.name == self.embedder.name:
            loaded.close()
            return
        with self._full_lock:
            self.index.embedder, self.index.source = loaded, name
            self.syncer.store = self.index.rebuild_beside()
            self.syncer.embedder = loaded
        self.syncer.request()

    def start_watching(self) -> None:
        if self.watcher is None:
            self.watcher = FolderWatcher(self.docs_dir, self.syncer.request)
            self.watcher.start()

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        self.embedder.close()
