"""Watching a folder: a debounced sync after Markdown changes, polling when watching fails."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ragdown.documents.paths import is_markdown

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.75
# Under changes that never pause for DEBOUNCE_S (an agent writing several times a second), a sync
# all the same once the first change waiting is this old: a person's edit beside them is indexed.
MAX_DELAY_S = 5.0
POLL_INTERVAL_S = 60.0
# A watch that ran this long before it failed was working: it failed on one batch of events (the
# watcher cannot report a name that is not UTF-8), so it starts again at once.
WATCH_HELD_S = 5.0


def wants_sync(root: Path, changed: str) -> bool:
    """Markdown files and extension-less names (directory renames) matter; dot-paths never do."""
    try:
        relative = PurePosixPath(Path(changed).relative_to(root).as_posix())
    except ValueError:
        return False
    if not relative.parts:
        return True  # an event on the root itself carries no name
    if any(part.startswith(".") for part in relative.parts):
        return False
    return is_markdown(relative.name) or not relative.suffix


class FolderWatcher:
    """Calls `on_change` 750 ms after the last relevant event, or 5 s after the first one waiting
    under events that never pause; while watching fails, at each try to watch again
    (docs/design.md#watcher)."""

    def __init__(
        self,
        root: Path,
        on_change: Callable[[], object],
        *,
        debounce_s: float = DEBOUNCE_S,
        poll_interval_s: float = POLL_INTERVAL_S,
        max_delay_s: float = MAX_DELAY_S,
    ) -> None:
        self.root = root.resolve()
        self.on_change = on_change
        self.debounce_s = debounce_s
        self.max_delay_s = max_delay_s
        self._first_waiting: float | None = None  # monotonic time of the oldest change not synced
        self.poll_interval_s = poll_interval_s
        self.polling = False
        self._stop = threading.Event()
        self._timer: threading.Timer | None = None
        self._timer_lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="ragdown-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
        self._thread.join(timeout=5)

    def _schedule(self) -> None:
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
            now = time.monotonic()
            if self._first_waiting is None:
                self._first_waiting = now
            delay = min(self.debounce_s, max(0.0, self._first_waiting + self.max_delay_s - now))
            self._timer = threading.Timer(delay, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._timer_lock:
            self._first_waiting = None
        if self._stop.is_set():
            return
        try:
            self.on_change()
        except Exception:
            log.exception("a sync after a file change failed")

    def _watch(self) -> None:
        """Watch until stopped. After a failure, sync (the failed batch is lost) and watch again: at
        once after a watch that held, else after a wait that doubles up to the polling interval, so
        a folder that cannot be watched is synced on that timer."""
        from watchfiles import watch

        retry_s = 0.0
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                for changes in watch(
                    self.root, stop_event=self._stop, debounce=100, step=20, raise_interrupt=False
                ):
                    self.polling = False
                    if any(wants_sync(self.root, changed) for _, changed in changes):
                        self._schedule()
                return
            except Exception as error:
                held = time.monotonic() - started >= WATCH_HELD_S
                retry_s = 0.0 if held else min(max(2 * retry_s, 1.0), self.poll_interval_s)
                self.polling = not held
                log.warning(
                    "watching %s failed (%s); syncing and watching again in %.1f s",
                    self.root,
                    error,
                    retry_s,
                )
                if self._stop.wait(retry_s):
                    return
                self._fire()
