"""The syncs that run by themselves (docs/design.md#engine): the first one as a server starts, which
calls on an empty index wait for, and one after each change the watcher sees."""

from __future__ import annotations

import contextlib
from concurrent.futures import Future
from pathlib import Path

from ragdown.errors import UnavailableError
from ragdown.indexing.sync import ProgressCallback, Syncer, SyncReport
from ragdown.indexing.watcher import FolderWatcher

# A call on an empty index waits this long for the first sync, then is told it is still running:
# MCP clients give up on a call after about a minute, and an answer beats a timeout.
FIRST_SYNC_WAIT_S = 30.0


class SyncLoop:
    """Requests syncs from `syncer`: the first at `start`, then on every change while `watch` is on."""

    def __init__(self, docs_dir: Path, syncer: Syncer, *, watch: bool) -> None:
        self.docs_dir = docs_dir
        self.syncer = syncer
        self.watch = watch
        self.watcher: FolderWatcher | None = None
        self.first_sync_wait_s = FIRST_SYNC_WAIT_S
        self._first_sync: Future[SyncReport] | None = None  # while calls must wait for it
        self._catching_up = False  # they wait for changes to a full index, not for a first index
        self._started: Future[SyncReport] | None = None

    def start(
        self, progress: ProgressCallback | None, *, empty: bool, catch_up: bool = False
    ) -> Future[SyncReport]:
        """The first sync in the background, then watching when `watch` is on. Calls wait for that
        sync only when the index was `empty`, or when `catch_up` says it is known to be behind the
        folder (its answers would show text the files no longer hold)."""
        first = self.syncer.request(progress=progress)
        self._started = first
        self._first_sync = first if empty or catch_up else None
        self._catching_up = catch_up and not empty
        if self.watch:
            self.start_watching()
        return first

    @property
    def first_sync_done(self) -> bool:
        """The sync `start` began has ended (a reader, which never syncs, counts as done)."""
        return self._started is None or self._started.done()

    def wait_until_indexed(self) -> None:
        """Wait for the first sync of an empty (or known stale) index; past `first_sync_wait_s`, say
        that it is still running (UnavailableError) rather than answer "nothing" from a half-built
        index. A first sync that failed has been logged: the call answers with what there is."""
        first = self._first_sync
        if first is None or first.done():
            return
        with contextlib.suppress(Exception):
            first.result(timeout=self.first_sync_wait_s)
        if not first.done():
            checked = self.syncer.files_checked()
            so_far = f" ({checked[0]} of {checked[1]} files so far)" if checked else ""
            doing = (
                "the index is still taking in what changed in this folder since it was last open"
                if self._catching_up
                else "the first index of this folder is still being built"
            )
            raise UnavailableError(f"{doing}{so_far}; ask again in a minute")

    def set_watch(self, watch: bool) -> None:
        """Watch from now on, after one sync for what changed while nobody watched; or stop."""
        if watch == self.watch:
            return
        self.watch = watch
        if watch:
            self.start_watching()
            self.syncer.request()
        else:
            self.stop_watching()

    def start_watching(self) -> None:
        if self.watcher is None:
            self.watcher = FolderWatcher(self.docs_dir, self.syncer.request)
            self.watcher.start()

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
