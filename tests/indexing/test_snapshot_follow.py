"""A reader answered from the search snapshot its primary writes (docs/design.md#readers-from-the-snapshot):
the same hits, documents and counts as the index; the primary's commits followed; a write made
through the reader waited for; and the moment no snapshot follows the index any more said once."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.engine.snapshot_reader import SnapshotReader
from ragdown.folders.scope import Scope
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.meta import META_FILE
from ragdown.indexing.snapshot import follow, read
from ragdown.indexing.snapshot.layout import snapshot_root
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc, synced_engine

DOCS = {
    "ops/postgres.md": "# Postgres backups\nNightly pg_dump.\n\n## Restore\npg_restore the newest dump.",
    "ops/on-call.md": "---\ntags: [rota]\naliases: [pager duty]\n---\n# On-call\n"
    "The rota changes on Mondays.\n\n## Paging\nPage the secondary.",
    "guide/rust.md": "# Errors\nUse Result and the ? operator instead of panicking.",
}
QUERIES = ["restore the dump", "who is paged", "the ? operator", "rota mondays", "nothing like this"]


@pytest.fixture
def primary(make_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    """An in-process primary over DOCS whose snapshot is written (and every later one at once)."""
    engine = synced_engine(make_engine, write, DOCS)
    assert engine.lifecycle.snapshots is not None
    engine.lifecycle.snapshots.wait()
    return engine


def open_reader(docs: Path, data_dir: Path, look_every_s: float = 0.0) -> SnapshotReader:
    reader = SnapshotReader.following(docs, data_dir, (HashEmbedder(), "hash"), ServerSettings(), memory=None)
    assert reader is not None
    reader.index.followed.look_every_s = look_every_s
    return reader


def hits(engine: Engine | SnapshotReader, query: str) -> list[tuple[str, str, str, float, float]]:
    return [(h.id, h.path, h.text, h.score, h.similarity) for h in engine.recall(query, 5)]


def watched(reader: SnapshotReader) -> list[bool]:
    """An entry for each time the reader says no snapshot follows the index any more."""
    lost: list[bool] = []
    reader.watch(lambda: lost.append(True))
    return lost


def commit_without_snapshot(primary: Engine, write: WriteDoc) -> None:
    """A document written and synced by a primary whose snapshot writer has stopped."""
    primary.lifecycle.snapshots = None
    write("ops/kafka.md", "# Kafka\nTopics keep messages for a week.")
    primary.sync()


def stalled(
    primary: Engine, docs: Path, data_dir: Path, write: WriteDoc
) -> tuple[SnapshotReader, list[bool]]:
    """A reader, watched, whose primary then commits a document and writes no snapshot of it."""
    reader = open_reader(docs, data_dir)
    lost = watched(reader)
    commit_without_snapshot(primary, write)
    return reader, lost


def write_snapshot_later(primary: Engine, after_s: float) -> threading.Thread:
    """The primary's snapshot of its table as it is, written `after_s` from now."""
    timer = threading.Timer(after_s, lambda: primary.index.store.persist_snapshot())
    timer.start()
    return timer


def test_a_reader_answers_as_the_index_does(primary: Engine, docs: Path, data_dir: Path) -> None:
    reader = open_reader(docs, data_dir)
    for query in QUERIES:
        assert hits(reader, query) == hits(primary, query)
    assert reader.documents() == primary.documents()
    assert reader.totals() == primary.totals() == (3, primary.store.count_rows())
    assert reader.folder_counts() == primary.folder_counts()
    assert reader.index.store.files() == primary.store.files()
    ours, theirs = reader.read(Scope(), "ops/on-call.md", 2, 3), primary.read(Scope(), "ops/on-call.md", 2, 3)
    assert ours == theirs
    by_alias = reader.read(Scope(), "pager duty", None, None)  # a wikilink target, by alias
    assert by_alias.path == "ops/on-call.md"
    assert (reader.first_sync_done, reader.syncing, reader.pending_files, reader.last_sync) == (
        True,
        False,
        0,
        None,
    )


def test_a_reader_follows_the_primarys_commits(
    primary: Engine, docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    reader = open_reader(docs, data_dir)
    first = reader.index.store.persisted.name
    write("ops/kafka.md", "# Kafka\nTopics keep messages for a week.")
    primary.sync()
    assert primary.lifecycle.snapshots is not None
    primary.lifecycle.snapshots.wait()
    assert hits(reader, "topics keep messages")[0][1] == "ops/kafka.md"
    assert hits(reader, "topics keep messages") == hits(primary, "topics keep messages")
    assert reader.totals() == primary.totals()
    # The snapshot it moved past is no longer kept mapped by this process.
    assert snapshot_root(data_dir) / first not in read._OPENED


def test_a_search_after_a_write_through_the_reader_waits_for_its_snapshot(
    primary: Engine, docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    reader = open_reader(docs, data_dir, look_every_s=60.0)  # only the write makes it look
    commit_without_snapshot(primary, write)  # the snapshot comes when the test says
    reader.see_latest()  # as node.Forwarder does once the primary answered the write
    later = write_snapshot_later(primary, 0.3)
    assert hits(reader, "topics keep messages")[0][1] == "ops/kafka.md"
    later.join()


def test_a_snapshot_that_stops_following_the_index_is_said_once(
    primary: Engine, docs: Path, data_dir: Path, write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, lost = stalled(primary, docs, data_dir, write)
    monkeypatch.setattr(follow, "BEHIND_S", 0.0)
    before = hits(reader, "restore the dump")  # sees the table ahead: counts from now
    assert lost == []
    assert hits(reader, "restore the dump") == before  # still answering, from what it holds
    assert lost == [True]
    hits(reader, "restore the dump")
    assert lost == [True]  # once


def test_a_write_whose_snapshot_does_not_come_is_answered_and_said(
    primary: Engine, docs: Path, data_dir: Path, write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, lost = stalled(primary, docs, data_dir, write)
    monkeypatch.setattr(follow, "WRITE_WAIT_S", 0.2)
    reader.see_latest()
    assert hits(reader, "restore the dump")[0][1] == "ops/postgres.md"
    assert lost == [True]


def test_an_index_rebuilt_with_another_model_is_said_at_once(
    primary: Engine, docs: Path, data_dir: Path
) -> None:
    reader = open_reader(docs, data_dir)
    lost = watched(reader)
    meta = json.loads((data_dir / META_FILE).read_text(encoding="utf-8"))
    (data_dir / META_FILE).write_text(json.dumps({**meta, "embedder": "another-model"}), encoding="utf-8")
    assert hits(reader, "restore the dump")[0][1] == "ops/postgres.md"
    assert lost == [True]
