"""When the table is compacted: in the background, once writes pause or enough have piled up, never
on a write's path (docs/design.md#compaction).

A commit is readable and durable the moment LanceDB has it; compaction (merging the small fragments
each commit adds, folding new rows into the full-text index, dropping old versions) only keeps
searches and storage lean. The full-text index already answers for rows it has not indexed yet
(LanceDB searches those flat beside the index) and never returns deleted ones, so nothing a search
finds depends on when compaction runs, and a crash before it loses nothing: the next start sees the
backlog and compacts it.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable

log = logging.getLogger(__name__)

# Compact once no commit has landed for this long: a burst of writes costs one compaction.
IDLE_S = 1.0
# Under writes that never pause, compact anyway once the oldest waiting commit is this old or this
# many have piled up: each commit adds a fragment and a version, which every scan then opens.
MAX_WAIT_S = 20.0
MAX_COMMITS = 100

# Every Compaction with a thread, so the backlog is compacted as the process exits (a one-shot
# `ragdown index` leaves a compacted table, as before). At exit, not in `atexit`: LanceDB's own
# exit hooks stop its runtime there first, and an optimise after that never returns.
_LIVE: weakref.WeakSet[Compaction] = weakref.WeakSet()


class Compaction:
    """Runs `compact` on a thread of its own after commits: when they pause for `idle_s`, or when
    the oldest waiting one is `max_wait_s` old, or `max_commits` are waiting. One run at a time;
    commits that land during a run wait for the next."""

    def __init__(
        self,
        compact: Callable[[], None],
        *,
        idle_s: float = IDLE_S,
        max_wait_s: float = MAX_WAIT_S,
        max_commits: int = MAX_COMMITS,
    ) -> None:
        self._compact = compact
        self.idle_s = idle_s
        self.max_wait_s = max_wait_s
        self.max_commits = max_commits
        self.runs = 0  # compactions run so far (for tests and the log)
        # Called after each compaction, on its thread: the table is at a new version whose rows are
        # those of the one before (what is derived from the rows can be kept, only re-stamped).
        self.after: Callable[[], None] | None = None
        self._wake = threading.Condition()
        self._pending = 0  # commits since the last compaction started
        self._first = 0.0  # monotonic time of the oldest of them
        self._last = 0.0  # and of the newest
        self._running = threading.Lock()  # held by a compaction while it runs, from any thread
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def pending(self) -> int:
        """Commits not compacted yet (those a running compaction started after included)."""
        return self._pending

    def committed(self, count: int = 1) -> None:
        """`count` commits landed: schedule a compaction."""
        now = time.monotonic()
        with self._wake:
            if self._pending == 0:
                self._first = now
            self._pending += count
            self._last = now
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._loop, name="ragdown-compaction", daemon=True)
                self._thread.start()
                _LIVE.add(self)
            self._wake.notify()

    def drain(self) -> None:
        """Compact now, in this thread, if any commit waits (the thread's run, if one is under way,
        is waited for first)."""
        with self._running:
            with self._wake:
                pending, self._pending = self._pending, 0
            if pending:
                self._run(pending)

    def close(self) -> None:
        """Stop the thread; waiting commits stay for `drain` (or the next start)."""
        with self._wake:
            self._closed = True
            self._wake.notify()

    def _due(self) -> float | None:
        """Seconds until the waiting commits are due (0: now), or None when nothing waits."""
        if self._pending == 0:
            return None
        if self._pending >= self.max_commits:
            return 0.0
        now = time.monotonic()
        return max(0.0, min(self._last + self.idle_s, self._first + self.max_wait_s) - now)

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._closed and (wait := self._due()) != 0.0:
                    self._wake.wait(wait)
                if self._closed:
                    return
            with self._running:
                with self._wake:
                    pending, self._pending = self._pending, 0
                if pending:
                    self._run(pending)

    def _run(self, pending: int) -> None:
        started = time.perf_counter()
        try:
            self._compact()
        except Exception:  # the next commit schedules another try; searches are unaffected
            log.exception("compaction failed; the next commit tries again")
            return
        self.runs += 1
        log.debug("compacted %d commits in %.0f ms", pending, (time.perf_counter() - started) * 1000)
        if self.after is not None:
            try:
                self.after()
            except Exception:  # what it keeps up to date is rebuilt at the next commit anyway
                log.exception("the step after a compaction failed")


def _drain_all() -> None:
    for compaction in list(_LIVE):
        compaction.close()
        try:
            compaction.drain()
        except Exception:  # exiting anyway: the next start compacts the backlog
            log.exception("could not compact before exit")


# Run by `threading` as the interpreter starts to exit, before it joins threads and before any
# `atexit` hook (the standard library's thread pools stop the same way).
_register_at_exit: Callable[[Callable[[], None]], None] = threading._register_atexit  # type: ignore[attr-defined]
_register_at_exit(_drain_all)
