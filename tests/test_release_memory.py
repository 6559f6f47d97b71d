"""Freed memory goes back to the system after the steps that free a lot (docs/design.md#memory)."""

from __future__ import annotations

import os
import subprocess
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


# Arrow allocates ~160 MB in 160 KB buffers on a worker thread and frees them; the thread then idles,
# as a server's worker does between calls. Prints how much more anonymous memory the process holds.
IDLE_WORKER = """
import os, sys, threading, time
from ragdown import release_memory
if sys.argv[1] == "reader":
    assert release_memory.arrow_hands_back_at_once()
import numpy as np, pyarrow as pa, pyarrow.compute as pc
assert not release_memory.arrow_hands_back_at_once()  # Arrow is loaded: too late to change it
def anon():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssAnon")) // 1024
base = pa.array(np.arange(20_000, dtype=np.int64))
freed, stop = threading.Event(), threading.Event()
def work():
    kept = [pc.add(base, i) for i in range(1000)]
    del kept
    freed.set()
    stop.wait()
before = anon()
threading.Thread(target=work, daemon=True).start()
freed.wait()
time.sleep(0.2)
print(anon() - before)
stop.set()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads RssAnon in /proc")
def test_a_reader_hands_arrows_freed_pages_back_while_its_threads_idle() -> None:
    def held_mb(role: str) -> int:
        env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_PURGE_DELAY"}
        done = subprocess.run(
            [sys.executable, "-c", IDLE_WORKER, role], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return int(done.stdout)

    assert held_mb("writer") > 100  # Arrow's allocator keeps what an idle thread freed
    assert held_mb("reader") < 40


def test_the_cli_loads_arrow_only_after_a_reader_could_set_its_allocator() -> None:
    """commands/server.py sets it once the settings are read, before `serving.launch` loads Arrow."""
    probe = "import sys, ragdown.cli; print('pyarrow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
