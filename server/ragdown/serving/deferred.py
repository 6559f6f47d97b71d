"""An engine that loads in the background, so a stdio client connects at once.

Loading the model (and, the first time, building its int8 copy) and opening the index can take longer
than a client waits for the handshake. The load runs in two steps on one thread: first the embedder
and the search snapshot (`early`), which answer searches at once when the snapshot is current
(docs/design.md#search-snapshot); then the index itself. Searches, lists and reads of documents made
before the index is open go to the snapshot; every other call waits for the index. With `stay`, the
folder is compared with the snapshot first: while it is as the snapshot has it, the session goes on
answering from the snapshot alone, and the index opens only once something needs it (a change in the
folder, or a call only the index answers); when it is not, the snapshot answers nothing, as its
answers would be stale, and the index opens at once (docs/design.md#start-up).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ragdown.engine import Engine
    from ragdown.engine.search_calls import SearchCalls

log = logging.getLogger(__name__)

# When the index opens beside a snapshot that answers: after the first search, or this long without
# one; then once no search has run for a pause; and at the latest this long after the start.
OPEN_INDEX_AFTER_S = 2.0
OPEN_INDEX_PAUSE_S = 1.0
OPEN_INDEX_BY_S = 10.0
# What a snapshot answers as the engine would (engine/snapshot_engine.SnapshotEngine): searches, the
# hook, and the reads of documents (a read's text comes from the file itself).
EARLY_CALLS = frozenset(
    {
        "search",
        "search_outcome",
        "recall",
        "hook_settings",
        "context",
        "documents",
        "read",
        "totals",
        "folder_counts",
    }
)
# ... and what the tools read beside the call.
EARLY_VALUES = frozenset({"settings", "query_log"})


_MISSING = object()
E = TypeVar("E", bound="SearchCalls")  # what answers while the index is not open


def _no_snapshot() -> None:
    return None


# Given the function that wakes the load: whether the snapshot may answer alone for now (the folder
# is as it has it), and if so, what stops the watch that wakes the load on a change.
Stay = Callable[[Callable[[], None]], "Callable[[], None] | None"]


class DeferredEngine(Generic[E]):
    """Stands in for an `Engine`: search calls go to `early()`'s snapshot until `load(snapshot)` has
    returned the engine; other attribute access waits for it."""

    def __init__(
        self,
        load: Callable[[E | None], Engine],
        early: Callable[[], E | None] = _no_snapshot,
        stay: Stay | None = None,
        answers: frozenset[str] | None = EARLY_CALLS | EARLY_VALUES,
    ) -> None:
        """`answers`: the names the early engine answers while the index is not open; None for every
        one it has (a reader's, serving/node.py)."""
        self._answers = answers
        self._early: Future[E | None] = Future()
        self._wake = threading.Event()  # something needs the index: open it now
        self._stop_staying: Callable[[], None] | None = None
        self._future: Future[Engine] = Future()
        self._first_search = threading.Event()
        self._counting = threading.Lock()
        self._calls = 0  # searches the snapshot is answering now
        self._last_call = time.monotonic()

        def run() -> None:
            # The folder is compared with the snapshot beside the embedder's load, which the first
            # search waits for anyway.
            compared = self._compare(stay) if stay is not None else None
            try:
                snapshot = early()
            except Exception as error:  # the load below reports it, with what the user set
                log.debug("no early search: %s", error)
                snapshot = None
            if compared is not None:
                self._stop_staying = compared.result()
                if self._stop_staying is None:
                    snapshot = None  # the folder changed since: the snapshot's answers would be stale
                elif snapshot is None:
                    self._stop_staying()
                    self._stop_staying = None
            self._early.set_result(snapshot)
            if self._stop_staying is not None:
                self._wake.wait()
                self._stop_staying()
            elif snapshot is not None:
                self._wait_for_a_pause()
            try:
                self._future.set_result(load(snapshot))
            except BaseException as error:
                log.error("the index could not be opened: %s", error)
                self._future.set_exception(error)

        threading.Thread(target=run, name="ragdown-load", daemon=True).start()

    def __getattr__(self, name: str) -> Any:
        if not self._future.done():
            if self._answers is None or name in self._answers:
                snapshot = self._early.result()
                value: Any = _MISSING if snapshot is None else getattr(snapshot, name, _MISSING)
                if value is not _MISSING:
                    return self._then_open(value) if name in EARLY_CALLS else value
            self._wake.set()  # a call only the index answers
        return getattr(self._future.result(), name)

    def _compare(self, stay: Stay) -> Future[Callable[[], None] | None]:
        """`stay(wake)` on a thread of its own; a failure to compare is an answer of None."""
        compared: Future[Callable[[], None] | None] = Future()

        def compare() -> None:
            try:
                compared.set_result(stay(self._wake.set))
            except Exception as error:  # the index's first sync looks at the folder instead
                log.info("could not compare the folder with the search snapshot: %s", error)
                compared.set_result(None)

        threading.Thread(target=compare, name="ragdown-compare", daemon=True).start()
        return compared

    def _wait_for_a_pause(self) -> None:
        """Open the index (LanceDB's import alone is ~1 s of CPU, which would slow the searches it
        runs beside) once the snapshot has answered a first search and then no search for a moment,
        or after a while whatever the searches do."""
        started = time.monotonic()
        self._first_search.wait(OPEN_INDEX_AFTER_S)
        while time.monotonic() - started < OPEN_INDEX_BY_S and (
            self._calls or time.monotonic() - self._last_call < OPEN_INDEX_PAUSE_S
        ):
            time.sleep(0.05)

    def _then_open(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def answered(*args: Any, **kwargs: Any) -> Any:
            with self._counting:
                self._calls += 1
            try:
                return call(*args, **kwargs)
            finally:
                with self._counting:
                    self._calls -= 1
                    self._last_call = time.monotonic()
                self._first_search.set()

        return answered

    def close(self) -> None:
        if self._stop_staying is not None:
            self._stop_staying()
        if self._future.done() and self._future.exception() is None:
            self._future.result().close()
