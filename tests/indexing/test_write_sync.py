"""A write through ragdown syncs only the paths it changed, and the index ends as a sync of every file
leaves it; searches keep the rows they hold while this process writes or compacts
(docs/design.md#sync, docs/design.md#compaction)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragdown import scoped_changes as changes
from ragdown.documents.text_edits import Edit
from ragdown.engine import Engine
from ragdown.folders.scope import Scope
from ragdown.indexing import listing
from ragdown.indexing.embedders import Embedder
from ragdown.indexing.schema import FileState
from ragdown.indexing.store import ChunkStore
from ragdown.indexing.watcher import FolderWatcher
from ragdown.scoped_changes import Place
from ragdown.search.hybrid import HIT_COLUMNS
from tests.conftest import WatchProbe, WriteDoc, synced_engine, wait_for

COMPARED = ["id", "path", "chunk_index", "heading", "text", "file_hash", "mtime_ms", "size", "vector"]


class Work:
    """The whole-folder work a sync does: walks of the folder and reads of every file's state; and
    whether it queried the table at all."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.walks = 0
        self.state_reads = 0
        self.queries = 0
        self._monkeypatch = monkeypatch
        real = listing.markdown_listing

        def walk(*args: Any, **kwargs: Any) -> Any:
            self.walks += 1
            return real(*args, **kwargs)

        monkeypatch.setattr("ragdown.indexing.sync.markdown_listing", walk)

    def watch(self, store: ChunkStore) -> None:
        real = store.files

        def files() -> dict[str, FileState]:
            self.state_reads += 1
            return real()

        self._monkeypatch.setattr(store, "files", files)
        scan = store._scan

        def counted_scan(*args: Any, **kwargs: Any) -> Any:
            self.queries += 1
            return scan(*args, **kwargs)

        self._monkeypatch.setattr(store, "_scan", counted_scan)

    def reset(self) -> tuple[int, int, bool]:
        done = (self.walks, self.state_reads, self.queries > 0)
        self.walks, self.state_reads, self.queries = 0, 0, 0
        return done


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Work:
    return Work(monkeypatch)


@pytest.fixture
def blind_watcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """A watcher that sees nothing: the engine counts as watched, so its writes sync only their
    paths, and no sync of the watcher's own runs beside the test's."""
    monkeypatch.setattr(FolderWatcher, "_watch", lambda self: None)


def rows_of(store: ChunkStore) -> list[tuple[Any, ...]]:
    table = store.chunks(COMPARED, "")
    columns = {name: table.column(name).to_pylist() for name in COMPARED if name != "vector"}
    vectors = [
        np.round(np.asarray(v, dtype=np.float32), 5).tobytes() for v in table.column("vector").to_pylist()
    ]
    return sorted(zip(*columns.values(), vectors, strict=True))


@pytest.fixture
def engines(
    make_engine: Callable[..., Engine], minilm: Embedder, docs: Path, tmp_path: Path, write: WriteDoc
) -> Iterator[tuple[Engine, Engine]]:
    """An engine written through (watched by a blind watcher) and a reference that syncs every file,
    over the same folder, both with the packaged model."""
    write("index.md", "# Index\n\nSee [the plan](notes/plan.md) and [the log](notes/log.md).\n")
    write("notes/plan.md", "# Plan\n\n## Goals\n\nShip the importer.\n\n## Risks\n\nThe parser.\n")
    write("notes/log.md", "# Log\n\nDay one.\n")
    engine = make_engine(minilm, "minilm", watch=True)
    engine.start().result()
    engine.search("importer", 1)  # the rows held in memory, as a serving engine has them
    reference = Engine(docs, tmp_path / "reference-data", minilm, source="minilm", watch=False)
    yield engine, reference
    reference.close()


@pytest.mark.usefixtures("blind_watcher")
def test_each_write_syncs_its_paths_alone_and_the_index_ends_as_a_full_sync(
    engines: tuple[Engine, Engine], work: Work, docs: Path
) -> None:
    engine, reference = engines
    work.watch(engine.store)
    place = Place(engine, Scope())
    # Expected: walks of the folder, reads of every file's state, whether the table was queried (a
    # write's file states and old vectors come from the rows held in memory).
    steps: list[tuple[str, Callable[[], str], tuple[int, int, bool]]] = [
        (
            "new",
            lambda: changes.write(
                place,
                "notes/new.md",
                "# New\n\nA kestrel.\n",
                base_hash=None,
                append=False,
                heading=None,
                session_id=None,
            ),
            (0, 0, False),
        ),
        (
            "edit",
            lambda: changes.edit(
                place, "notes/plan.md", [Edit("Ship the importer.", "Ship the exporter.")], None
            ),
            (0, 0, False),
        ),
        (
            "append",
            lambda: changes.write(
                place, "notes/log.md", "Day two.", base_hash=None, append=True, heading=None, session_id=None
            ),
            (0, 0, False),
        ),
        (
            "remember",
            lambda: changes.remember_note(
                place,
                title="Decision",
                content="We use Arrow.",
                tags=["db"],
                name=None,
                supersedes=[],
                session_id=None,
            ),
            (0, 0, False),
        ),
        (
            "move a file, links rewritten",
            lambda: changes.move_document(place, "notes/plan.md", "notes/roadmap.md"),
            (0, 0, False),
        ),
        (
            "delete a file",
            lambda: changes.delete(place, "notes/new.md", recursive=False, base_hash=None),
            (0, 0, False),
        ),
        # A folder moved or deleted: whatever it held is found by one walk.
        ("move a folder", lambda: changes.move_document(place, "notes", "archive"), (1, 1, True)),
        (
            "delete a folder",
            lambda: changes.delete(place, "archive", recursive=True, base_hash=None),
            (1, 1, True),
        ),
    ]
    for name, step, expected in steps:
        work.reset()
        answer = step()
        assert "not indexed" not in answer, name
        assert work.reset() == expected, name
        reference.sync()
        assert rows_of(engine.store) == rows_of(reference.store), name


@pytest.mark.usefixtures("blind_watcher")
def test_a_write_beside_a_sync_already_running_shares_its_follow_up(
    engines: tuple[Engine, Engine], write: WriteDoc
) -> None:
    """Requests made while a sync runs share one follow-up: over the union of their paths, or over
    every file if one of them asked for that."""
    engine, _ = engines
    syncer = engine.syncer
    write("notes/one.md", "# One\n\nfirst\n")
    write("notes/two.md", "# Two\n\nsecond\n")
    write("notes/three.md", "# Three\n\nthird\n")
    gate = threading.Event()
    real_states = syncer._states
    seen: list[set[str] | None] = []

    def held_states(paths: set[str] | None) -> Any:
        seen.append(None if paths is None else set(paths))
        if len(seen) == 1:
            assert gate.wait(30)
        return real_states(paths)

    syncer._states = held_states  # type: ignore[method-assign]
    first = syncer.request(paths=["notes/one.md"])
    assert wait_for(lambda: len(seen) == 1)
    second = syncer.request(paths=["notes/two.md"])
    third = syncer.request(paths=["notes/three.md"])
    assert second is third
    gate.set()
    assert first.result(30).added == 1
    assert third.result(30).added == 2
    assert seen == [{"notes/one.md"}, {"notes/two.md", "notes/three.md"}]


def test_without_a_watcher_a_write_syncs_every_file(
    make_engine: Callable[..., Engine], minilm: Embedder, write: WriteDoc, docs: Path, work: Work
) -> None:
    """With watching off, each write's sync is the only one: a person's edit made beside it is
    indexed with it, as before."""
    write("a.md", "# A\n\nalpha\n")
    engine = make_engine(minilm, "minilm", watch=False)
    engine.start().result()
    (docs / "by-a-person.md").write_text("# Person\n\nwritten by hand\n", encoding="utf-8")
    work.reset()
    write_answer = changes.write(
        Place(engine, Scope()),
        "agent.md",
        "# Agent\n\nwritten by an agent\n",
        base_hash=None,
        append=False,
        heading=None,
        session_id=None,
    )
    assert "not indexed" not in write_answer
    assert work.walks == 1
    assert {"a.md", "agent.md", "by-a-person.md"} <= set(engine.store.files())


def test_a_person_s_edit_beside_a_stream_of_agent_writes_is_indexed(
    make_engine: Callable[..., Engine], minilm: Embedder, write: WriteDoc, docs: Path, watch_probe: WatchProbe
) -> None:
    """Agent writes that never pause keep restarting the watcher's debounce; the watcher syncs all
    the same once the first change waiting is `max_delay_s` old. A person's edit to the file the agent
    appends to is kept on disk and in the index."""
    write("shared.md", "# Shared\n\nstarted\n")
    engine = make_engine(minilm, "minilm", watch=True)
    engine.start().result()
    assert watch_probe.attached(docs)
    watcher = engine.watcher
    assert watcher is not None
    watcher.max_delay_s = 1.0
    place = Place(engine, Scope())
    (docs / "by-a-person.md").write_text("# Person\n\nwritten by hand\n", encoding="utf-8")
    with (docs / "shared.md").open("a", encoding="utf-8") as shared:
        shared.write("\na line a person added\n")
    for n in range(400):  # stops as soon as the person's file is indexed
        changes.write(
            place,
            f"agent-{n % 4}.md",
            f"# Agent\n\nwrite {n}\n",
            base_hash=None,
            append=n >= 4,
            heading=None,
            session_id=None,
        )
        if "by-a-person.md" in engine.store.files():
            break
    assert "by-a-person.md" in engine.store.files()
    changes.write(
        place, "shared.md", "an agent's line", base_hash=None, append=True, heading=None, session_id=None
    )
    text = (docs / "shared.md").read_text(encoding="utf-8")
    assert "a line a person added" in text
    assert "an agent's line" in text
    indexed = " ".join(engine.store.chunks(["text"], "path = 'shared.md'").column("text").to_pylist())
    assert "a line a person added" in indexed
    assert "an agent's line" in indexed


def test_a_search_during_a_write_neither_waits_for_it_nor_drops_the_rows_held(
    make_engine: Callable[..., Engine], write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the write's delete and its add a search (here on the writing thread itself, which
    would deadlock if it waited) answers from the rows held for the version before; once the write
    is done, the rows it left are held, with no read of the table."""
    engine = synced_engine(make_engine, write, {"a.md": "# A\nalpha", "b.md": "# B\nbravo"})
    store = engine.store
    before = store.vector_snapshot(HIT_COLUMNS)
    assert before is not None
    table = type(store.table)
    real_add = table.add
    during: list[Any] = []

    def add(self: Any, *args: Any, **kwargs: Any) -> Any:
        store.refresh()  # the table is a version on since the delete
        during.append(store.vector_snapshot(HIT_COLUMNS))
        return real_add(self, *args, **kwargs)

    monkeypatch.setattr(table, "add", add)
    write("a.md", "# A\nalpha again")
    engine.sync(paths=["a.md"])
    assert during == [before]
    monkeypatch.setattr(store, "_scan", lambda *a, **k: pytest.fail("the table was read again"))
    store.refresh()
    after = store.vector_snapshot(HIT_COLUMNS)
    assert after is not None
    assert after is not before
    assert sorted(after.columns.column("path").to_pylist()) == ["a.md", "b.md"]


def test_a_compaction_keeps_the_rows_held_when_a_search_looks_meanwhile(
    make_engine: Callable[..., Engine], write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The versions an optimise makes hold the same rows: a search that sees one of them while the
    compaction runs keeps what is held instead of reading the table and building the postings again."""
    engine = synced_engine(make_engine, write, {"a.md": "# A\nalpha", "b.md": "# B\nbravo"})
    store = engine.store
    write("c.md", "# C\ncharlie")
    engine.sync(paths=["c.md"])
    held = store.vector_snapshot(HIT_COLUMNS)
    assert held is not None
    table = type(store.table)
    real_optimize = table.optimize
    seen: list[Any] = []

    def optimize(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = real_optimize(self, *args, **kwargs)
        store.refresh()  # a search looking at the optimised version before the compaction is done
        seen.append(store.vector_snapshot(HIT_COLUMNS))
        return result

    monkeypatch.setattr(table, "optimize", optimize)
    engine.syncer.compaction.drain()
    assert len(seen) == 1
    assert seen[0].rows is held.rows
    store.refresh()
    kept = store.vector_snapshot(HIT_COLUMNS)
    assert kept is not None
    assert kept.rows is held.rows
    assert kept.version == int(store.table.version)
