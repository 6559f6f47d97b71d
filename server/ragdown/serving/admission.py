"""Bounded work (Ragmir's idea): a few tool calls run at once, a bounded number wait, the rest are
told to retry. An unbounded queue would turn a burst into minutes of latency for everyone and
memory that grows with the burst; a prompt "overloaded, retry" is what an agent can act on.

The retry hint reaches the caller three ways (docs/tools.md#calls-errors-and-limits): in the
result's words, in its `_meta` under `RETRY_META`, and over HTTP as a `Retry-After` header."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ragdown.errors import UnavailableError

RETRY_AFTER_S = 1
RETRY_META = "ragdown/retryAfterSeconds"


class OverloadedError(UnavailableError):
    """Every slot is busy and the waiting line is full."""

    def __init__(self, waiting: int) -> None:
        super().__init__(
            f"ragdown is overloaded ({waiting} calls already waiting); retry in {RETRY_AFTER_S} s",
            code="overloaded",
        )

    @property
    def meta(self) -> dict[str, int]:
        """The hint as a tool result's `_meta` carries it."""
        return {RETRY_META: RETRY_AFTER_S}


@dataclass
class CallNotes:
    """What a tool call tells the HTTP response that carries its result. The MCP route sets one per
    request; a refusal fills it in from the tool's worker thread, which runs in a copy of the
    request's context (so it sees this same object); the route then adds the headers."""

    retry_after_s: int | None = None


CALL_NOTES: ContextVar[CallNotes | None] = ContextVar("ragdown_call_notes", default=None)


class Admission:
    """At most `active` calls at once and `waiting` more in line; a call that waits longer than
    `wait_s` gives up as overloaded too."""

    def __init__(self, active: int = 4, waiting: int = 32, wait_s: float = 30.0) -> None:
        self.active = active
        self.waiting = waiting
        self.wait_s = wait_s
        self._slots = threading.Semaphore(active)
        self._lock = threading.Lock()
        self._queued = 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        if not self._slots.acquire(blocking=False):
            with self._lock:
                if self._queued >= self.waiting:
                    raise self._overloaded(self._queued)
                self._queued += 1
            try:
                acquired = self._slots.acquire(timeout=self.wait_s)
            finally:
                with self._lock:
                    self._queued -= 1
            if not acquired:
                raise self._overloaded(self.waiting)
        try:
            yield
        finally:
            self._slots.release()

    @staticmethod
    def _overloaded(waiting: int) -> OverloadedError:
        notes = CALL_NOTES.get()
        if notes is not None:
            notes.retry_after_s = RETRY_AFTER_S
        return OverloadedError(waiting)
