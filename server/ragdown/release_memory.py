"""Giving freed memory back to the system after the few steps that free a lot at once
(docs/design.md#memory)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): their allocators return memory themselves
        return None
    return trim


def release_free_memory() -> None:
    """Hand the allocator's free pages back to the system.

    glibc keeps freed memory for reuse: after the int8 build (~300 MB of graphs and calibration
    sessions, all freed) a server went on holding 650 MB; trimmed, 340 MB.
    """
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:  # Arrow's own pool (mimalloc) keeps freed pages too; never imported for this
        arrow.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def release_after(*steps: Future[Any] | None) -> None:
    """Hand free pages back as each of `steps` (background work) ends, however it ends.

    A server's start frees most of what it reads: on 36,700 chunks the table scan behind the
    in-memory rows and the BM25 build over their texts left ~370 MB free in glibc's heaps, and a
    `stdio` process went on holding 690 MB where 430 MB were in use (docs/design.md#memory).
    """
    for step in steps:
        if step is not None:
            step.add_done_callback(lambda _done: release_free_memory())


def arrow_hands_back_at_once() -> bool:
    """Make Arrow's allocator (mimalloc) hand freed pages back as soon as they are freed, for a
    process that mostly reads (a reader, a stdio session): otherwise each thread's heap keeps what it
    freed while the thread idles, ~17 MB after a reader's searches on 30,546 sections. A server that
    indexes keeps them: giving them back cost each write ~9 ms of CPU (docs/design.md#memory). Only
    before Arrow loads, which reads the setting once; False when it came too late (or the user set
    it)."""
    if "pyarrow" in sys.modules or "MIMALLOC_PURGE_DELAY" in os.environ:
        return False
    os.environ["MIMALLOC_PURGE_DELAY"] = "0"
    return True
