"""How many characters the parsers read: the count the tests compare at 1x and 4x an input to hold
every parser of document text linear (docs/documents.md#bounded-parsing). A wall clock would say the
same on a quiet machine only; a count says it on any.

Counting is off (one context-variable read per scan) unless a caller opens `metered()`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class WorkMeter:
    """Characters read by the scans run under it."""

    __slots__ = ("chars",)

    def __init__(self) -> None:
        self.chars = 0


_METER: ContextVar[WorkMeter | None] = ContextVar("ragdown_work_meter", default=None)


def read(chars: int) -> None:
    """A scan read `chars` characters (a linear regex over a string counts the string's length)."""
    meter = _METER.get()
    if meter is not None:
        meter.chars += chars


@contextmanager
def metered() -> Iterator[WorkMeter]:
    """Count the characters the parsers read in this block (this thread or task only)."""
    meter = WorkMeter()
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)
