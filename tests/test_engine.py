"""The engine: start-up sync, RAGDOWN_WATCH, and where an index may live."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.errors import DataDirError, UnavailableError
from ragdown.folders.dir_checks import check_data_dir, default_data_dir
from ragdown.folders.scope import Scope
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.sync import SyncProgress, SyncReport
from tests.conftest import WatchProbe, WriteDoc, wait_for


def test_start_syncs_in_the_background_and_watches(
    docs: Path, data_dir: Path, write: WriteDoc, watch_probe: WatchProbe
) -> None:
    write("a.md", "alpha")
    engine = Engine(docs, data_dir, HashEmbedder(), source="hash")
    try:
        engine.start()
        assert wait_for(lambda: engine.syncer.last_sync is not None)
        assert engine.watcher is not None
        assert watch_probe.attached(docs)
        write("b.md", "beta")
        assert wait_for(lambda: "b.md" in engine.store.files())
    finally:
        engine.close()


def test_watch_off_syncs_only_at_start_and_on_request(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("a.md", "alpha")
    engine = Engine(docs, data_dir, HashEmbedder(), source="hash", watch=False)
    try:
        engine.start()
        assert wait_for(lambda: engine.syncer.last_sync is not None)
        assert engine.watcher is None
        write("b.md", "beta")
        time.sleep(1.5)  # longer than the watcher's debounce: nothing may pick the file up
        assert set(engine.store.files()) == {"a.md"}
        assert engine.sync().added == 1
    finally:
        engine.close()


@contextmanager
def held_first_sync(
    docs: Path, data_dir: Path, *, catch_up: bool = False
) -> Iterator[tuple[Engine, Future[SyncReport], threading.Event]]:
    """An engine over the folder as it is, started, whose first sync holds at its first flush until
    the test sets the event it is given (and is let go and closed at the end in any case)."""
    release = threading.Event()

    def hold(progress: SyncProgress) -> None:
        release.wait(30)

    engine = Engine(docs, data_dir, HashEmbedder(), source="hash", watch=False)
    try:
        yield engine, engine.start(progress=hold, catch_up=catch_up), release
    finally:
        release.set()
        engine.close()


def test_a_call_during_the_first_sync_waits_then_says_it_is_still_running(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    """docs/tools.md#status-and-health: an empty index never answers "nothing" for a note on disk;
    past the wait the caller is told the sync is running and how far it got."""
    for number in range(3):
        write(f"n{number}.md", f"# Note {number}\n\nkestrel {number}")
    with held_first_sync(docs, data_dir) as (engine, first, release):
        assert wait_for(lambda: engine.syncer.files_checked() == (3, 3))
        assert not engine.first_sync_done
        engine.first_sync_wait_s = 0.2
        with pytest.raises(UnavailableError, match=r"still being built \(3 of 3 files so far\)") as refused:
            engine.recall("kestrel", 5, scope=Scope())
        assert refused.value.status == 503
        with pytest.raises(UnavailableError):
            engine.documents()  # every read path waits the same way, not only search
        engine.first_sync_wait_s = 30
        release.set()
        hits = engine.recall("kestrel", 5, scope=Scope())  # waits for the sync, then answers
        assert first.done()
        assert engine.first_sync_done
        assert {hit.path for hit in hits} == {"n0.md", "n1.md", "n2.md"}


def test_an_existing_index_answers_while_the_start_up_sync_catches_up(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    write("old.md", "# Old\n\nheron")
    Engine(docs, data_dir, HashEmbedder(), source="hash", watch=False).sync()
    write("new.md", "# New\n\nheron again")
    with held_first_sync(docs, data_dir) as (engine, _first, release):
        assert wait_for(lambda: engine.syncer.files_checked() == (2, 2))
        assert not engine.first_sync_done  # /api/status says ready: false meanwhile
        engine.first_sync_wait_s = 0.2
        assert "old.md" in [hit.path for hit in engine.recall("heron", 5, scope=Scope())]  # no wait
        release.set()
        assert wait_for(lambda: engine.first_sync_done)


def test_an_index_known_to_be_behind_makes_calls_wait_for_its_catch_up(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    """`catch_up` (a stdio session whose folder differs from its snapshot): no answer from the stale
    index; a call waits for the start-up sync, past the wait says so, and then answers with the change."""
    write("old.md", "# Old\n\nheron")
    Engine(docs, data_dir, HashEmbedder(), source="hash", watch=False).sync()
    write("old.md", "# Old\n\nheron and egret")
    with held_first_sync(docs, data_dir, catch_up=True) as (engine, _first, release):
        assert wait_for(lambda: engine.syncer.files_checked() == (1, 1))
        engine.first_sync_wait_s = 0.2
        with pytest.raises(
            UnavailableError, match=r"still taking in what changed .* \(1 of 1 files so far\)"
        ):
            engine.recall("egret", 5, scope=Scope())
        engine.first_sync_wait_s = 30
        release.set()
        hits = engine.recall("egret", 5, scope=Scope())  # waits for the sync, then answers
        assert "egret" in hits[0].text


def test_a_data_dir_inside_the_folder_is_refused_unless_hidden(docs: Path) -> None:
    with pytest.raises(DataDirError, match="inside the folder it indexes"):
        check_data_dir(docs / "index", docs)
    assert check_data_dir(docs / ".ragdown", docs) == (docs / ".ragdown").resolve()


def test_a_data_dir_that_is_a_file_is_refused(docs: Path, tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(DataDirError, match="is a file"):
        check_data_dir(file, docs)


def test_open_uses_the_recorded_embedder(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("a.md", "alpha")
    first = Engine.open(docs, data_dir, "hash")
    first.sync()
    first.close()
    again = Engine.open(docs, data_dir)
    try:
        assert again.embedder.name == "hash-384"
        assert again.rebuilt_because is None
        assert again.store.count_rows() == 1
    finally:
        again.close()


def test_the_default_data_dir_is_under_the_cache_and_differs_by_mode(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    single = default_data_dir(docs)
    folders = default_data_dir(docs, folders_mode=True)
    assert single.parent == tmp_path / "cache" / "ragdown"
    assert len(single.name) == 16
    assert single != folders
    assert default_data_dir(docs) == single


def test_an_embedder_change_keeps_answering_from_the_old_index_until_the_new_one_is_complete(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    import threading

    from ragdown.indexing.embedders.base import EmbedKind, Vectors
    from ragdown.indexing.embedders.hashing import HashEmbedder
    from ragdown.indexing.meta import read_meta

    class HeldEmbedder(HashEmbedder):
        """Another model (by name), whose document embedding waits until the test lets it go."""

        def __init__(self) -> None:
            super().__init__()
            self.name = "hash-held"
            self.release = threading.Event()

        def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
            if kind == "document":
                self.release.wait(30)
            return super().embed(texts, kind)

    write("ops/redis.md", "# Redis\nRedis evicts keys by maxmemory-policy.")
    old = Engine(docs, data_dir, HashEmbedder(), source="hash", watch=False)
    old.sync()
    old.close()
    held = HeldEmbedder()
    engine = Engine(docs, data_dir, held, source="hash", watch=False)
    try:
        assert engine.store.building
        running = engine.syncer.request()
        hits = engine.search("redis eviction", 3)  # mid-rebuild: the old index answers
        assert [h.path for h in hits] == ["ops/redis.md"]
        meta = read_meta(data_dir)
        assert meta is not None
        assert meta.embedder == "hash-384"
        held.release.set()
        running.result(timeout=60)
        assert not engine.store.building
        meta = read_meta(data_dir)
        assert meta is not None
        assert meta.embedder == "hash-held"
        assert [h.path for h in engine.search("redis eviction", 3)] == ["ops/redis.md"]
    finally:
        held.release.set()
        engine.close()


def test_a_full_rebuild_is_built_beside_the_index_that_keeps_answering(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    from ragdown.indexing.meta import read_meta

    write("ops/redis.md", "# Redis\nRedis evicts keys by maxmemory-policy.")
    engine = Engine(docs, data_dir, HashEmbedder(), source="hash", watch=False)
    try:
        engine.sync()
        before = read_meta(data_dir)
        assert before is not None
        report = engine.sync(full=True)
        assert report.added == 1  # everything embedded again, into a fresh index
        after = read_meta(data_dir)
        assert after is not None
        assert after.lance_dir != before.lance_dir
        assert after.embedder == before.embedder
        assert [h.path for h in engine.search("redis eviction", 3)] == ["ops/redis.md"]
        assert not engine.store.building
    finally:
        engine.close()
