"""A reader following the search snapshot its primary writes
(docs/design.md#readers-from-the-snapshot): the newest snapshot that answers for the index, looked
for again every quarter second while the reader is asked anything; a write made through this reader
waited for; and the moment no snapshot follows the index any more, told to whoever then opens the
index itself."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ragdown.indexing.meta import IndexMeta, read_meta, rebuild_reason
from ragdown.indexing.snapshot.layout import table_version_on_disk
from ragdown.indexing.snapshot.read import forget
from ragdown.indexing.snapshot.store import SnapshotStore, snapshot_at

log = logging.getLogger(__name__)

# How often a reader looks for a newer snapshot, while it is asked anything: a look reads two small
# files and lists the table's versions.
LOOK_EVERY_S = 0.25
# How long the table may stay ahead of every snapshot before the reader reads the table instead. The
# primary writes one at most a second after each commit (docs/design.md#search-snapshot); one that
# stays behind this long is not coming (its writer fails, or the index outgrew the snapshot bound).
BEHIND_S = 10.0
# How long a search after a write made through this reader waits for that write's snapshot.
WRITE_WAIT_S = 5.0
POLL_S = 0.05


def _no_one() -> None:
    return None


class FollowedSnapshot:
    """The snapshot a reader answers from (`current()`), following its primary's commits.

    `lost` is called, at most once, when the index moved where no snapshot follows: rebuilt with
    another model or chunker (only the index loads the new model), or its table ahead of every
    snapshot for BEHIND_S. Until then the snapshot held goes on answering, at most a snapshot behind.
    """

    def __init__(
        self, data_dir: Path, store: SnapshotStore, wanted: IndexMeta, look_every_s: float = LOOK_EVERY_S
    ) -> None:
        self.data_dir = data_dir
        self.store = store
        self.wanted = wanted
        self.look_every_s = look_every_s
        self.lost: Callable[[], None] = _no_one
        self._lock = threading.Lock()
        self._checked = time.monotonic()
        self._behind_since: float | None = None
        self._written = 0  # the table version a write through this reader made
        self._gone = False

    def watch(self, lost: Callable[[], None]) -> Callable[[], None]:
        """Call `lost` once no snapshot follows the index; the function returned stops that."""
        self.lost = lost
        if self._gone:  # lost before anyone watched
            lost()

        def stop() -> None:
            self.lost = _no_one

        return stop

    def current(self) -> SnapshotStore:
        """The snapshot to answer from now: looked for again every `look_every_s`, and once a write
        made through this reader is in it (waited for, up to WRITE_WAIT_S)."""
        if self._written > self.store.version:
            self._wait_for_write()
        elif time.monotonic() - self._checked >= self.look_every_s:
            self.check()
        return self.store

    def see_latest(self) -> None:
        """A write made through this reader has landed: the next search waits for its snapshot."""
        meta = read_meta(self.data_dir)
        version = table_version_on_disk(self.data_dir, meta.lance_dir) if meta is not None else None
        if version is not None:
            self._written = max(self._written, version)

    def _wait_for_write(self) -> None:
        deadline = time.monotonic() + WRITE_WAIT_S
        while self.check() < self._written:
            if time.monotonic() > deadline:
                log.warning(
                    "the search snapshot did not reach the version a write made through this reader "
                    "committed within %.0f s: reading the index itself from now on",
                    WRITE_WAIT_S,
                )
                self._written = 0
                self._lose()
                return
            time.sleep(POLL_S)

    def check(self) -> int:
        """Move to the snapshot of the index's newest version when there is one; the version held."""
        with self._lock:
            now = self._checked = time.monotonic()
            meta = read_meta(self.data_dir)
            if meta is None:  # removed, or being replaced: the next look decides
                return self.store.version
            if rebuild_reason(meta, self.wanted) is not None:
                log.warning("the index was rebuilt with another model or chunking: reading it itself")
                self._lose()
                return self.store.version
            newest = table_version_on_disk(self.data_dir, meta.lance_dir)
            held = self.store.meta.lance_dir, self.store.version
            if held == (meta.lance_dir, newest):
                self._behind_since = None
                return self.store.version
            fresh = snapshot_at(self.data_dir, meta, newest, self.wanted)
            if fresh is not None and (fresh.meta.lance_dir, fresh.version) != held:
                old = self.store.persisted.name
                self.store, self._behind_since = fresh, None
                if fresh.persisted.name != old:
                    forget(self.data_dir, old)
            elif self._behind_since is None:
                self._behind_since = now
            elif now - self._behind_since > BEHIND_S:
                log.warning(
                    "the index has been ahead of its search snapshot for %.0f s: reading it itself", BEHIND_S
                )
                self._lose()
            return self.store.version

    def _lose(self) -> None:
        if not self._gone:
            self._gone = True
            self.lost()
