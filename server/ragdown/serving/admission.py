"""Bounded work: a few tool calls run at once, a bounded number wait, the rest are
told to retry. An unbounded queue would turn a burst into minutes of latency for everyone and
memory that grows with the burst; a prompt "overloaded, retry" is what an agent can act on.

Admission is fair between folders (docs/security.md#tenants): one folder runs at most `per_folder`
calls (one slot fewer than all of them, by default) and waits in at most `per_folder_waiting`
places of the line, and a freed slot goes to the first waiter of the folder running fewest calls.
So four slow calls of one folder (backlinks over a large folder, a write of a huge document) leave
a slot, and room in line, for every other folder's recall.

The retry hint reaches the caller three ways (docs/tools.md#calls-errors-and-limits): in the
result's words, in its `_meta` under `RETRY_META` (errors.py), and over HTTP as a `Retry-After` header."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import anyio.to_thread

from ragdown.errors import RETRY_AFTER_S, OverloadedError

T = TypeVar("T")


@dataclass
class CallNotes:
    """What a tool call tells the HTTP response that carries its result. The MCP route sets one per
    request; a refusal fills it in, from a task or thread the SDK started for the call with a copy
    of the request's context (a copy that holds this same object); the route then adds the headers."""

    retry_after_s: int | None = None


CALL_NOTES: ContextVar[CallNotes | None] = ContextVar("ragdown_call_notes", default=None)


@dataclass(eq=False)
class _Ticket:
    """A call of `folder` waiting in line, and how to wake it when a leaving call hands it the slot
    (set its thread's event, or its future on its own event loop). `granted` is read and written
    under the admission's lock."""

    wake: Callable[[], object]
    folder: str
    granted: bool = False


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():  # a waiter that gave up meanwhile finds `granted` and passes the slot on
        future.set_result(None)


class Admission:
    """At most `active` calls at once and `waiting` more in line; a call that waits longer than
    `wait_s` gives up as overloaded too. Per folder (the key a call names; "" for calls of no
    folder), at most `per_folder` running and `per_folder_waiting` in line; the next slot goes to
    the earliest waiter among the folders running fewest calls. Calls of "" (a docs dir served as
    one folder: stdio, or `serve` outside folders mode) have no other tenant to leave room for and
    may take every slot and the whole line.

    A call waits on its event loop (`run`, how the tools call it), holding no worker thread: only the
    `active` running calls use one. Tool calls on different event loops (the public port and the
    primary's internal API) share one admission, so the state is guarded by a thread lock and a
    leaving call wakes the next waiter on that waiter's own loop.
    """

    def __init__(
        self,
        active: int = 4,
        waiting: int = 32,
        wait_s: float = 30.0,
        *,
        per_folder: int | None = None,
        per_folder_waiting: int | None = None,
    ) -> None:
        self.active = active
        self.waiting = waiting
        self.wait_s = wait_s
        # One slot, and half the line, always left to the other folders (when there is more than one).
        self.per_folder = per_folder or max(1, active - 1)
        self.per_folder_waiting = (
            per_folder_waiting if per_folder_waiting is not None else max(1, waiting // 2)
        )
        self._lock = threading.Lock()
        self._running = 0
        self._by_folder: Counter[str] = Counter()  # running calls per folder
        self._line: deque[_Ticket] = deque()

    def running(self, folder: str) -> int:
        """Calls of `folder` running now."""
        with self._lock:
            return self._by_folder[folder]

    @property
    def queued(self) -> int:
        """Calls waiting in line now."""
        with self._lock:
            return len(self._line)

    async def run(self, work: Callable[[], T], folder: str = "") -> T:
        """`work()` in a worker thread once a slot is free for `folder`; OverloadedError when the line
        (or the folder's share of it) is full or the wait runs out."""
        async with self._claim(folder):
            return await anyio.to_thread.run_sync(work)

    @asynccontextmanager
    async def _claim(self, folder: str) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        ticket = self._enter(
            folder, lambda: _Ticket(lambda: loop.call_soon_threadsafe(_wake, future), folder)
        )
        if ticket is not None:
            try:
                async with asyncio.timeout(self.wait_s):
                    await future
            except TimeoutError:
                if self._leave_line(ticket):
                    raise self._overloaded(self.waiting) from None
                # handed the slot just as the wait ran out: it is this call's
            except BaseException:  # cancelled while waiting (the client went away)
                if not self._leave_line(ticket):
                    self._release(folder)
                raise
        try:
            yield
        finally:
            self._release(folder)

    @contextmanager
    def slot(self, folder: str = "") -> Iterator[None]:
        """The same admission for a caller on a thread of its own (it blocks while it waits)."""
        event = threading.Event()
        ticket = self._enter(folder, lambda: _Ticket(event.set, folder))
        if ticket is not None and not event.wait(self.wait_s) and self._leave_line(ticket):
            raise self._overloaded(self.waiting)
        try:
            yield
        finally:
            self._release(folder)

    def _enter(self, folder: str, make_ticket: Callable[[], _Ticket]) -> _Ticket | None:
        """None when admitted at once, else the ticket now in line; overloaded when the line, or the
        folder's share of it, is full. A free slot never coexists with a waiter that may take it
        (`_release` hands it over), so a call that finds one and is under its folder's cap runs."""
        with self._lock:
            if self._running < self.active and self._by_folder[folder] < self._cap(folder):
                self._running += 1
                self._by_folder[folder] += 1
                return None
            if len(self._line) >= self.waiting:
                raise self._overloaded(len(self._line))
            if folder and sum(1 for t in self._line if t.folder == folder) >= self.per_folder_waiting:
                raise self._overloaded(len(self._line))
            ticket = make_ticket()
            self._line.append(ticket)
            return ticket

    def _leave_line(self, ticket: _Ticket) -> bool:
        """A waiter giving up: True if it left the line, False if it had been handed the slot (it holds
        it now, and must use or release it)."""
        with self._lock:
            if ticket.granted:
                return False
            self._line.remove(ticket)
            return True

    def _release(self, folder: str) -> None:
        """A call of `folder` leaves: its slot goes to the next waiter that may run, else it frees up."""
        with self._lock:
            self._running -= 1
            self._by_folder[folder] -= 1
            if not self._by_folder[folder]:
                del self._by_folder[folder]
            while self._running < self.active and (ticket := self._next()) is not None:
                self._line.remove(ticket)
                ticket.granted = True
                self._running += 1
                self._by_folder[ticket.folder] += 1
                try:
                    ticket.wake()
                except RuntimeError:  # its event loop has closed: nobody waits on it any more
                    self._running -= 1
                    self._by_folder[ticket.folder] -= 1

    def _cap(self, folder: str) -> int:
        return self.per_folder if folder else self.active

    def _next(self) -> _Ticket | None:
        """The earliest waiter among the folders running fewest calls, under their cap (lock held)."""
        eligible = [t for t in self._line if self._by_folder[t.folder] < self._cap(t.folder)]
        return min(eligible, key=lambda t: self._by_folder[t.folder], default=None)

    @staticmethod
    def _overloaded(waiting: int) -> OverloadedError:
        notes = CALL_NOTES.get()
        if notes is not None:
            notes.retry_after_s = RETRY_AFTER_S
        return OverloadedError(waiting)
