"""The primary's writes of the search snapshot: after each sync, in the background, one at a time
(docs/design.md#search-snapshot)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

log = logging.getLogger(__name__)

_WRITES = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragdown-snapshot")


class SnapshotWriter:
    """Runs `persist` (the table's `ChunkStore.persist_snapshot`) when asked, each write starting at
    least `every_s` after the one before; requests made meanwhile collapse into that one write. Under
    a stream of commits the snapshot follows about once a second, not once per commit, whether the
    commits come faster than a write takes or are spread out (it is for other processes and the next
    start; this one searches what it holds)."""

    def __init__(self, persist: Callable[[], object], every_s: float = 1.0) -> None:
        self._persist = persist
        self._every_s = every_s
        self._hurry = threading.Event()  # set by `wait`: the next write starts at once
        self._lock = threading.Lock()
        self._running: Future[None] | None = None
        self._again = False
        self._last_started = -float("inf")

    def request(self) -> Future[None]:
        with self._lock:
            if self._running is not None:  # cleared by `_run`, under the lock, as it gives up
                self._again = True
                return self._running
            self._running = _WRITES.submit(self._run)
            return self._running

    def wait(self) -> None:
        """Until the requested writes are done (a one-shot command leaves its snapshot behind); the
        pause between two writes is skipped from now on."""
        self._hurry.set()
        running = self._running
        if running is not None:
            running.result()

    def _run(self) -> None:
        while True:
            self._hurry.wait(max(0.0, self._last_started + self._every_s - time.monotonic()))
            with self._lock:
                self._again = False
            self._last_started = time.monotonic()
            try:
                self._persist()
            except Exception:  # searches then read LanceDB, as without a snapshot
                log.exception("could not write the search snapshot")
            with self._lock:
                if not self._again:
                    # A request from now on starts another run: one made after this check but before
                    # the future is done would otherwise be lost.
                    self._running = None
                    return
