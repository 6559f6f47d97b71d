"""Searches from the search snapshot alone (docs/design.md#search-snapshot): a one-shot `ragdown
search` answers from it without importing LanceDB, with the hits the index gives; a starting
`ragdown stdio` answers searches from it while the index opens, and other calls wait for the index."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from ragdown.engine import Engine
from ragdown.engine.snapshot_engine import SnapshotEngine
from ragdown.indexing.embedders.base import Embedder
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.serving.deferred import DeferredEngine
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc, run_cli, synced_engine

DOCS = {
    "ops/postgres.md": "# Postgres backups\nNightly pg_dump.\n\n## Restore\npg_restore the newest dump.",
    "ops/on-call.md": "# On-call\nThe rota changes on Mondays.\n\n## Paging\nPage the secondary.",
    "guide/rust.md": "# Errors\nUse Result and the ? operator instead of panicking.",
}
# Runs `ragdown search` in this process and says afterwards whether LanceDB (or ragdown's store over
# it) was imported.
PROBE = (
    "import sys\nfrom ragdown.cli import main\n"
    "try:\n    code = main(sys.argv[1:])\nfinally:\n"
    "    index = any(m in sys.modules for m in ('lancedb', 'ragdown.indexing.store'))\n"
    "    print('LANCEDB' if index else 'NO-LANCEDB', file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def probed(*args: str) -> tuple[Any, bool]:
    """`ragdown ARGS` as a real process: its JSON output, and whether it imported LanceDB."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-c", PROBE, *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), "NO-LANCEDB" not in done.stderr


def indexed_folder(tmp_path: Path) -> tuple[Path, Path]:
    """DOCS written under `tmp_path` and indexed by a real `ragdown index` (hash embedder)."""
    docs, data_dir = tmp_path / "docs", tmp_path / "data"
    for path, text in DOCS.items():
        (docs / path).parent.mkdir(parents=True, exist_ok=True)
        (docs / path).write_text(text, encoding="utf-8")
    indexed = run_cli("index", str(docs), "--data-dir", str(data_dir), "--embedder", "hash")
    assert indexed.returncode == 0, indexed.stderr
    return docs, data_dir


def search(docs: Path, data_dir: Path, query: str) -> tuple[list[tuple[str, str, float]], bool]:
    found, imported = probed("search", str(docs), query, "--data-dir", str(data_dir), "--top-k", "3")
    return [(h["path"], h["heading"], h["score"]) for h in found["hits"]], imported


@pytest.mark.slow
def test_a_one_shot_search_answers_from_the_snapshot_without_lancedb(tmp_path: Path) -> None:
    docs, data_dir = indexed_folder(tmp_path)
    assert (data_dir / "snapshot" / "CURRENT").is_file()  # `ragdown index` leaves its snapshot
    for query in ("restore the dump", "who is paged", "the ? operator"):
        from_snapshot, imported = search(docs, data_dir, query)
        assert not imported
        assert from_snapshot
        saved = data_dir / "snapshot"
        shutil.move(saved, tmp_path / "kept")
        from_table, imported = search(docs, data_dir, query)
        shutil.move(tmp_path / "kept", saved)
        assert imported  # without a snapshot the index itself answers
        assert [h[:2] for h in from_snapshot] == [h[:2] for h in from_table]
        assert [h[2] for h in from_snapshot] == pytest.approx([h[2] for h in from_table], rel=1e-6)


# `ragdown search` as the program itself (`main()` without arguments, as the console script calls it),
# saying whether the interpreter's teardown ran (an exit handler does, then).
AS_PROGRAM = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('TEARDOWN', file=sys.stderr))\n"
    "from ragdown.cli import main\nsys.exit(main())\n"
)


@pytest.mark.slow
def test_a_search_from_the_snapshot_ends_without_the_teardown(tmp_path: Path) -> None:
    """Answered from the snapshot, nothing is left to finish: the process ends once its output is
    flushed (docs/design.md#start-up). Answered by the index, it ends as any program does."""
    docs, data_dir = indexed_folder(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    args = ["search", str(docs), "restore the dump", "--data-dir", str(data_dir), "--top-k", "3"]

    def run() -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", AS_PROGRAM, *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)

    at_once = run()
    assert at_once.returncode == 0, at_once.stderr
    assert "TEARDOWN" not in at_once.stderr
    assert json.loads(at_once.stdout)["hits"][0]["path"] == "ops/postgres.md"  # all of it written
    shutil.move(data_dir / "snapshot", tmp_path / "kept")
    by_the_index = run()
    assert by_the_index.returncode == 0, by_the_index.stderr
    assert "TEARDOWN" in by_the_index.stderr
    found = [(h["path"], h["heading"]) for h in json.loads(by_the_index.stdout)["hits"]]
    assert found == [(h["path"], h["heading"]) for h in json.loads(at_once.stdout)["hits"]]


def test_a_snapshot_engine_searches_as_the_engine_does(
    make_engine: Callable[..., Engine], write: WriteDoc, docs: Path, data_dir: Path
) -> None:
    engine = synced_engine(make_engine, write, DOCS)
    assert engine.lifecycle.snapshots is not None
    engine.lifecycle.snapshots.wait()
    settings = ServerSettings()
    snapshot = SnapshotEngine.open(docs, data_dir, engine.embedder, "hash", settings)
    assert snapshot is not None
    loading: Future[tuple[Embedder, str]] = Future()
    loading.set_result((engine.embedder, "hash"))  # as `load_beside` hands it over
    from_future = SnapshotEngine.open(docs, data_dir, loading, "", settings)
    assert from_future is not None
    for query in ("restore the dump", "who is paged", "panicking"):
        assert snapshot.search(query, 3) == engine.search(query, 3)
        assert from_future.search(query, 3) == engine.search(query, 3)
    # Not for another model, nor when following links (which reads the table), nor off this disk.
    assert SnapshotEngine.open(docs, data_dir, HashEmbedder(dim=64), "hash", settings) is None
    linking = ServerSettings(follow_links=2)
    assert SnapshotEngine.open(docs, data_dir, engine.embedder, "hash", linking) is None


def test_searches_go_to_the_snapshot_until_the_engine_is_loaded(
    make_engine: Callable[..., Engine], write: WriteDoc, docs: Path, data_dir: Path
) -> None:
    engine = synced_engine(make_engine, write, DOCS)
    assert engine.lifecycle.snapshots is not None
    engine.lifecycle.snapshots.wait()
    snapshot = SnapshotEngine.open(docs, data_dir, engine.embedder, "hash", ServerSettings())
    assert snapshot is not None
    release = threading.Event()
    handed: list[object] = []

    def load(early: SnapshotEngine | None) -> Engine:
        handed.append(early)
        assert release.wait(30)
        return engine

    deferred = DeferredEngine(load, lambda: snapshot)
    hits = deferred.recall("restore the dump", 3)  # answered while the load waits
    assert hits == engine.recall("restore the dump", 3)
    assert deferred.documents() == engine.documents()  # and so are lists and reads of documents
    assert deferred.totals() == engine.totals()
    waiting: list[object] = []
    caller = threading.Thread(target=lambda: waiting.append(deferred.sync))
    caller.start()
    caller.join(0.2)
    assert caller.is_alive()  # anything else waits for the index
    release.set()
    caller.join(30)
    assert waiting == [engine.sync]
    assert handed == [snapshot]  # the engine is told of the snapshot (its hook memory goes on)
    bound: Any = deferred.search
    assert bound.__self__ is engine


def test_a_snapshot_that_may_stay_answers_alone_until_something_needs_the_index(
    make_engine: Callable[..., Engine], write: WriteDoc, docs: Path, data_dir: Path
) -> None:
    """With `stay`, the index is not opened after a pause: only once the watch wakes it (a change)
    or a call only the index answers arrives; the watch is stopped before the index opens. When the
    folder is not as the snapshot has it, the index answers from the start."""
    engine = synced_engine(make_engine, write, DOCS)
    assert engine.lifecycle.snapshots is not None
    engine.lifecycle.snapshots.wait()
    snapshot = SnapshotEngine.open(docs, data_dir, engine.embedder, "hash", ServerSettings())
    assert snapshot is not None
    loads: list[object] = []
    events: list[str] = []
    wakes: list[Callable[[], None]] = []
    staying = threading.Event()

    def load(early: SnapshotEngine | None) -> Engine:
        events.append("load")
        loads.append(early)
        return engine

    def stay(wake: Callable[[], None]) -> Callable[[], None]:
        wakes.append(wake)
        staying.set()
        return lambda: events.append("stopped")

    for wake_by in ("change", "call"):
        loads.clear()
        events.clear()
        staying.clear()
        deferred = DeferredEngine(load, lambda: snapshot, stay)
        assert deferred.recall("restore the dump", 3) == engine.recall("restore the dump", 3)
        assert staying.wait(30)
        for _ in range(3):  # searches keep going to the snapshot, and open nothing
            deferred.search("rota", 2)
        assert loads == []
        if wake_by == "change":
            wakes[-1]()  # what the watch calls on a change
            deadline = threading.Event()
            for _ in range(300):
                if loads:
                    break
                deadline.wait(0.1)
        else:
            assert deferred.sync == engine.sync  # a call only the index answers
        assert loads == [snapshot]
        assert events == ["stopped", "load"]

    # A folder that changed since the snapshot: the snapshot answers nothing (its hits would be
    # stale), and the index opens at once and answers instead.
    loads.clear()
    events.clear()
    deferred = DeferredEngine(load, lambda: snapshot, lambda wake: None)
    assert deferred.recall("restore the dump", 3) == engine.recall("restore the dump", 3)
    assert loads == [None]


def index(docs: Path, data_dir: Path) -> tuple[dict[str, object], bool]:
    """`ragdown index` as a real process: its report, and whether it imported LanceDB."""
    return probed("index", str(docs), "--data-dir", str(data_dir))


@pytest.mark.slow
def test_an_unchanged_folder_is_indexed_from_the_snapshot_alone(tmp_path: Path) -> None:
    docs, data_dir = indexed_folder(tmp_path)
    report, imported = index(docs, data_dir)
    assert (report["unchanged"], report["added"], report["updated"], report["removed"]) == (3, 0, 0, 0)
    assert not imported
    # Each change is seen: the index itself syncs it, and the next run is quick again.
    changes: list[tuple[Callable[[], object], str]] = [
        (lambda: (docs / "ops/on-call.md").write_text("# On-call\nThe rota changes on Fridays."), "updated"),
        (lambda: (docs / "guide/new.md").write_text("# New\nA new page."), "added"),
        (lambda: (docs / "guide/rust.md").unlink(), "removed"),
    ]
    for change, counted in changes:
        change()
        report, imported = index(docs, data_dir)
        assert imported
        assert report[counted] == 1
        report, imported = index(docs, data_dir)
        assert not imported
        assert report["unchanged"] == len(list(docs.rglob("*.md")))
    # Asking for another embedder than the index's is a rebuild, never "unchanged".
    other = run_cli("index", str(docs), "--data-dir", str(data_dir), "--embedder", "minilm")
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout)["added"] == len(list(docs.rglob("*.md")))
