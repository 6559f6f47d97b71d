"""Compaction off the write path (docs/design.md#compaction): a sync answers before the table is
optimised, searches find what it wrote meanwhile, compaction follows by itself, and a process that
stops in between loses nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.indexing.compaction import Compaction
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.meta import current_meta
from ragdown.indexing.store import ChunkStore
from ragdown.indexing.sync import Syncer
from tests.conftest import WriteDoc

NEVER = 3600.0  # an idle bound no test reaches: compaction runs only when drained
WAIT_S = 30.0  # how long a test waits for the background thread (it never waits this long when it works)


def lexical_paths(store: ChunkStore, text: str) -> list[str]:
    """What LanceDB's full-text search returns for `text` (the index plus rows not yet in it)."""
    return [row["path"] for row in store.lexical(text, 10, None, ["path"], with_vectors=False).to_pylist()]


def on(calls: list[ChunkStore], store: ChunkStore) -> list[ChunkStore]:
    """The calls on `store` (other tests' syncers may still compact theirs in the background)."""
    return [called for called in calls if called is store]


@pytest.fixture
def optimised(monkeypatch: pytest.MonkeyPatch) -> list[ChunkStore]:
    """Every ChunkStore.compact call, in order (each one optimise)."""
    calls: list[ChunkStore] = []
    compact = ChunkStore.compact

    def counted(self: ChunkStore) -> None:
        calls.append(self)
        compact(self)

    monkeypatch.setattr(ChunkStore, "compact", counted)
    return calls


def make(docs: Path, data_dir: Path, idle_s: float = NEVER) -> Syncer:
    syncer = Syncer(docs, ChunkStore(data_dir, current_meta("hash-384", 384)), HashEmbedder())
    syncer.compaction.idle_s = idle_s
    syncer.compaction.max_wait_s = NEVER
    return syncer


def test_a_sync_answers_before_compaction_and_its_rows_are_searchable_meanwhile(
    docs: Path, data_dir: Path, write: WriteDoc, optimised: list[ChunkStore]
) -> None:
    syncer = make(docs, data_dir)
    write("ops/cache.md", "# Cache\nRedis eviction policy.")
    syncer.sync()
    write("ops/cache.md", "# Cache\nMemcached slab allocator.")
    write("ops/queue.md", "# Queue\nKafka partition rebalancing.")
    syncer.sync()
    store = syncer.store
    assert on(optimised, store) == []
    assert syncer.compaction.pending == 2
    assert store.needs_compaction()  # the rewritten rows are not in the full-text index yet
    # LanceDB searches the rows its index lacks and leaves deleted ones out.
    assert lexical_paths(store, "memcached slab") == ["ops/cache.md"]
    assert lexical_paths(store, "kafka rebalancing") == ["ops/queue.md"]
    assert lexical_paths(store, "redis eviction") == []
    syncer.compaction.drain()
    assert on(optimised, store) == [store]
    assert syncer.compaction.pending == 0
    assert not store.needs_compaction()
    assert lexical_paths(store, "memcached slab") == ["ops/cache.md"]
    assert lexical_paths(store, "redis eviction") == []
    syncer.compaction.drain()  # nothing waits: no second optimise
    assert on(optimised, store) == [store]


def test_a_search_after_a_write_finds_the_new_text_and_not_the_old(
    make_engine: Callable[..., Engine], write: WriteDoc, optimised: list[ChunkStore]
) -> None:
    write("ops/cache.md", "# Cache\nRedis eviction policy.")
    write("ops/other.md", "# Other\nNothing about caches here.")
    engine = make_engine()
    engine.syncer.compaction.idle_s = NEVER
    engine.sync()
    assert engine.search("redis eviction", 3)[0].path == "ops/cache.md"
    engine.search("redis eviction", 3)  # a second search: the in-memory postings are wanted
    write("ops/cache.md", "# Cache\nMemcached slab allocator.")
    engine.sync()
    assert on(optimised, engine.store) == []
    for _ in range(3):  # from LanceDB until the postings of the new rows are built, then from memory
        hits = engine.search("memcached slab allocator", 3)
        assert hits[0].path == "ops/cache.md"
        assert "Memcached" in hits[0].text
        assert all("Redis" not in hit.text for hit in engine.search("redis eviction", 3))


def caught_up(check: Callable[[], bool]) -> bool:
    """Whether `check` holds within WAIT_S (the background thread's work is awaited, never timed)."""
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_compaction_runs_by_itself_once_writes_pause_and_drops_old_versions(
    docs: Path, data_dir: Path, write: WriteDoc, optimised: list[ChunkStore]
) -> None:
    syncer = make(docs, data_dir, idle_s=0.05)
    store = syncer.store
    store.keep_versions_for = timedelta(milliseconds=1)
    for i in range(4):
        write(f"d{i}.md", f"doc {i}")
        syncer.sync()
    commits = 4 * 2  # a delete and an add each (the first one's delete has nothing to delete)
    compaction = syncer.compaction
    assert caught_up(
        lambda: compaction.pending == 0 and bool(on(optimised, store)) and not store.needs_compaction()
    )
    assert caught_up(lambda: len(store.table.list_versions()) < commits)  # the last run's clean-up
    assert store.count_rows() == 4


def test_under_writes_that_never_pause_compaction_runs_after_enough_commits(
    docs: Path, data_dir: Path, write: WriteDoc, optimised: list[ChunkStore]
) -> None:
    syncer = make(docs, data_dir)
    syncer.compaction.max_commits = 3
    done = threading.Event()
    compact = syncer.compaction._compact

    def then_signal() -> None:
        compact()
        done.set()

    syncer.compaction._compact = then_signal
    for i in range(2):
        write(f"d{i}.md", f"doc {i}")
        syncer.sync()
    assert on(optimised, syncer.store) == []
    write("d2.md", "doc 2")
    syncer.sync()
    assert done.wait(WAIT_S)
    assert len(on(optimised, syncer.store)) == 1


def test_a_sync_that_changes_nothing_schedules_nothing(
    docs: Path, data_dir: Path, write: WriteDoc, optimised: list[ChunkStore]
) -> None:
    syncer = make(docs, data_dir)
    write("a.md", "# A\ntext")
    syncer.sync()
    syncer.compaction.drain()
    syncer.sync()
    syncer.sync()
    assert syncer.compaction.pending == 0
    assert len(on(optimised, syncer.store)) == 1


def test_a_failed_compaction_is_logged_and_the_next_commit_tries_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")

    compaction = Compaction(flaky, idle_s=NEVER)
    after: list[int] = []
    compaction.after = lambda: after.append(compaction.runs)
    compaction.committed()
    compaction.drain()
    assert "compaction failed" in caplog.text
    assert compaction.runs == 0
    assert after == []  # told only of a compaction that ran
    compaction.committed()
    compaction.drain()
    assert compaction.runs == 1
    assert len(calls) == 2
    assert after == [1]
    compaction.close()


# A process that syncs a change and is killed before its compaction (which never comes: the idle
# bound is an hour), with a sync that left the index compacted before it.
_KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.meta import current_meta
from ragdown.indexing.store import ChunkStore
from ragdown.indexing.sync import Syncer

docs, data_dir = Path(sys.argv[1]), Path(sys.argv[2])
syncer = Syncer(docs, ChunkStore(data_dir, current_meta("hash-384", 384)), HashEmbedder())
syncer.compaction.idle_s = 3600.0
syncer.compaction.max_wait_s = 3600.0
syncer.sync()
syncer.compaction.drain()
(docs / "ops" / "cache.md").write_text("# Cache\\nMemcached slab allocator.", encoding="utf-8")
(docs / "ops" / "queue.md").write_text("# Queue\\nKafka partition rebalancing.", encoding="utf-8")
report = syncer.sync()
assert report.added == 1 and report.updated == 1 and syncer.compaction.runs == 1
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_process_killed_between_a_write_and_its_compaction_loses_nothing(
    docs: Path, data_dir: Path, write: WriteDoc, optimised: list[ChunkStore]
) -> None:
    write("ops/cache.md", "# Cache\nRedis eviction policy.")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(docs), str(data_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    syncer = make(docs, data_dir)
    store = syncer.store
    assert sorted(store.files()) == ["ops/cache.md", "ops/queue.md"]
    assert lexical_paths(store, "memcached slab") == ["ops/cache.md"]
    assert lexical_paths(store, "kafka rebalancing") == ["ops/queue.md"]
    assert lexical_paths(store, "redis eviction") == []
    assert store.needs_compaction()
    report = syncer.sync()  # nothing changed on disk: the backlog alone schedules a compaction
    assert not report.changed
    assert syncer.compaction.pending == 1
    syncer.compaction.drain()
    assert on(optimised, store) == [store]
    assert not store.needs_compaction()
    assert lexical_paths(store, "memcached slab") == ["ops/cache.md"]
