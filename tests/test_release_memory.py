"""Freed memory goes back to the system after the steps that free a lot (docs/design.md#memory)."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from ragdown import release_memory


@pytest.fixture
def trims(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    monkeypatch.setattr(
        release_memory, "release_free_memory", lambda: calls.append(threading.current_thread().name)
    )
    return calls


def test_each_step_is_followed_by_a_trim_when_it_ends_not_before(trims: list[str]) -> None:
    gate = threading.Event()
    with ThreadPoolExecutor(1, thread_name_prefix="step") as pool:
        slow = pool.submit(gate.wait)
        done: Future[None] = Future()
        done.set_result(None)
        release_memory.release_after(slow, None, done)
        assert len(trims) == 1, "a step already over is followed at once; None is no step"
        gate.set()
    assert len(trims) == 2
    assert trims[1].startswith("step"), "the trim runs on the step's own thread, off the caller's"


def test_a_step_that_fails_is_followed_too(trims: list[str]) -> None:
    failed: Future[None] = Future()
    release_memory.release_after(failed)
    failed.set_exception(RuntimeError("the sync failed"))
    assert len(trims) == 1


def test_the_trim_is_safe_to_call_here() -> None:
    release_memory.release_free_memory()  # glibc trims; other C libraries return None and skip it


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_arrows_own_pool_hands_its_freed_pages_back_too() -> None:
    """Arrow's pool (mimalloc) keeps what Arrow freed, out of glibc's reach: a comparison of file
    states over 30,000 rows left ~15 MB held in a stdio session until the pool was asked too."""
    import numpy as np
    import pyarrow as pa

    release_memory.release_free_memory()
    before = _rss_mb()
    held = [pa.concat_arrays([pa.array(np.arange(250_000, dtype=np.int64))]) for _ in range(60)]  # ~120 MB
    assert _rss_mb() - before > 90
    del held
    freed = _rss_mb()
    release_memory.release_free_memory()
    assert freed - _rss_mb() > 60
