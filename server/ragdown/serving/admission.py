"""Bounded work (Ragmir's idea): a few tool calls run at once, a bounded number wait, the rest are
told to retry. An unbounded queue would turn a burst into minutes of latency for everyone and
memory that grows with the burst; a prompt "overloaded, retry" is what an agent can act on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ragdown.errors import UnavailableError

RETRY_AFTER_S = 1


class OverloadedError(UnavailableError):
    """Every slot is busy and the waiting line is full."""

    def __init__(self, waiting: int) -> None:
        super().__init__(
            f"ragdown is overloaded ({waiting} calls already waiting); retry in {RETRY_AFTER_S} s",
            code="overloaded",
        )


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
                    raise OverloadedError(self._queued)
                self._queued += 1
            try:
                acquired = self._slots.acquire(timeout=self.wait_s)
            finally:
                with self._lock:
                    self._queued -= 1
            if not acquired:
                raise OverloadedError(self.waiting)
        try:
            yield
        finally:
            self._slots.release()
