"""The search snapshot on disk (docs/design.md#search-snapshot): written by the primary after each
sync, it holds exactly the table's rows, vectors and BM25 postings at the version it names, searches
from it return the same rows and scores as searches from the table, a stale or foreign one is never
used, and a write cut short leaves the previous one in use."""

from __future__ import annotations

import json
import os
import random
import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ragdown.engine import Engine
from ragdown.indexing.active import meta_for
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.lexicon import Lexicon
from ragdown.indexing.schema import SNAPSHOT_COLUMNS
from ragdown.indexing.snapshot import read as snapshot_read
from ragdown.indexing.snapshot.layout import (
    CURRENT,
    MANIFEST,
    VECTORS,
    read_current,
    snapshot_root,
    table_version_on_disk,
)
from ragdown.indexing.snapshot.read import PersistedSnapshot, open_current
from ragdown.indexing.snapshot.store import current_snapshot
from ragdown.indexing.store import ChunkStore
from ragdown.search.filters import Prefilter, SearchFilters
from ragdown.search.hybrid import retrieve
from ragdown.search.pipeline import run_search
from tests.conftest import WriteDoc, synced_engine

DOCS = {
    "ops/postgres.md": "---\naliases: [pg]\n---\n# Postgres backups\nNightly pg_dump to the bucket.\n\n"
    "## Restore\nStop the app, then pg_restore the newest dump.\n\n## Schedule\nThe dump runs at 02:00.",
    "ops/on-call.md": "---\ntags: [ops/rota]\n---\n# On-call\nThe rota changes on Mondays.\n\n"
    "## Paging\nPage the secondary after ten minutes.",
    "notes/old.md": "# Old runbook\nRestore from tape; call the vendor.",
    "notes/new.md": "---\nsupersedes: notes/old.md\n---\n# New runbook\nRestore from the bucket.",
    "guide/rust.md": "# Errors\nUse Result and the ? operator instead of panicking.\n\n"
    "## Ownership\nEach value has one owner; borrowing lends it.",
}
QUERIES = [
    "restore the database",
    "pg_restore newest dump",
    "who gets paged",
    "ownership and borrowing",
    "the ? operator",
    "tape vendor",
    "rota Mondays",
    "nothing here matches zzzz",
]
FILTERS = [
    None,
    SearchFilters(path_prefix="ops/"),
    SearchFilters(tag="ops"),
    SearchFilters(written_by="user"),
]


@pytest.fixture
def engine(make_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    built = synced_engine(make_engine, write, DOCS)
    written(built)
    return built


def written(engine: Engine) -> PersistedSnapshot:
    """The snapshot the engine's writer left for the table as it is now."""
    assert engine.lifecycle.snapshots is not None
    engine.syncer.compaction.drain()  # a compaction now, not one racing the test (it re-points)
    engine.lifecycle.snapshots.wait()
    store = engine.store
    persisted = open_current(store.data_dir, store.lance_dir, int(store.table.version))
    assert persisted is not None, read_current(store.data_dir)
    return persisted


def hits_of(store: object, engine: Engine, query: str, filters: SearchFilters | None) -> object:
    """Every row each retriever finds for `query` with its scores (the pools deeper than the table,
    so the comparison does not depend on how rows tied in score are ordered, which follows the
    table's physical order and so changes with a compaction), and the hits' cosines."""
    prefilter = Prefilter(filters or SearchFilters(), store.superseded_paths())  # type: ignore[attr-defined]
    vector = engine.embedder.embed_query(query)
    rankings = retrieve(store, query, vector, 1000, prefilter)  # type: ignore[arg-type]
    pools = {
        name: {e.row["id"]: (round(e.similarity, 6), round(e.raw, 5)) for e in ranked}
        for name, ranked in rankings.items()
    }
    hits = run_search(store, engine.embedder, query, 5, filters).hits  # type: ignore[arg-type]
    return pools, sorted(round(h.similarity, 6) for h in hits)


def table_rows(store: ChunkStore) -> pa.Table:
    return store.chunks(SNAPSHOT_COLUMNS, "true").sort_by("id")


def assert_snapshot_is_the_table(persisted: PersistedSnapshot, store: ChunkStore) -> None:
    """Every row, column, vector and posting of the snapshot is the table's at this version."""
    table = table_rows(store)
    order = np.argsort(np.array(persisted.rows.column("id").to_pylist()), kind="stable")
    rows = persisted.rows.take(pa.array(order))
    assert rows.to_pylist() == table.drop_columns(["vector", "search_text"]).to_pylist()
    vectors = np.asarray(table.column("vector").to_pylist(), dtype=np.float32)
    assert np.array_equal(np.asarray(persisted.vectors)[order], vectors)
    rebuilt = Lexicon.build(table.column("search_text").to_pylist())
    ids = table.column("id").to_pylist()
    persisted_ids = persisted.rows.column("id").to_pylist()
    for query in QUERIES:
        ours = dict(zip(*persisted.lexicon.top(query, 100), strict=True))
        fresh = dict(zip(*rebuilt.top(query, 100), strict=True))
        assert {persisted_ids[p]: s for p, s in ours.items()} == {ids[p]: s for p, s in fresh.items()}


def assert_same_searches(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every query and filter: the same hits and scores from the snapshot alone, from the store
    reading the snapshot, and from the store reading the table (postings built from its rows)."""
    snapshot_store = current_snapshot(engine.data_dir)
    assert snapshot_store is not None
    from_snapshot = {(q, str(f)): hits_of(snapshot_store, engine, q, f) for q in QUERIES for f in FILTERS}
    engine.store._cache.forget()
    through_store = {(q, str(f)): hits_of(engine.store, engine, q, f) for q in QUERIES for f in FILTERS}
    with monkeypatch.context() as patched:
        patched.setattr(ChunkStore, "_persisted", lambda self, version: None)
        engine.store._cache.forget()
        assert engine.store.start_lexicon() is None  # nothing held: the next search reads the table
        scanned = engine.store.vector_snapshot(["id"])
        assert scanned is not None
        assert engine.store.start_lexicon() is not None
        engine.store.start_lexicon().result()  # type: ignore[union-attr]
        from_table = {(q, str(f)): hits_of(engine.store, engine, q, f) for q in QUERIES for f in FILTERS}
    engine.store._cache.forget()
    assert from_snapshot == through_store == from_table
    assert any(from_table.values())


def test_a_sync_leaves_the_snapshot_of_the_table_it_wrote(engine: Engine) -> None:
    persisted = written(engine)
    assert persisted.version == int(engine.store.table.version)
    assert persisted.version == table_version_on_disk(engine.data_dir, engine.store.lance_dir)
    assert persisted.manifest.meta.embedder == engine.embedder.name
    assert_snapshot_is_the_table(persisted, engine.store)
    root = snapshot_root(engine.data_dir)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    for entry in [root / CURRENT, *(root / persisted.name).iterdir()]:
        assert stat.S_IMODE(entry.stat().st_mode) & 0o077 == 0, entry  # every folder's text


def test_searches_from_the_snapshot_equal_searches_from_the_table(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_same_searches(engine, monkeypatch)


def test_after_writes_and_deletes_the_snapshot_follows(
    engine: Engine, write: WriteDoc, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = written(engine)
    write("ops/postgres.md", DOCS["ops/postgres.md"] + "\n\n## Verify\nCheck the row counts after a restore.")
    write("guide/tape.md", "# Tape\nThe vendor keeps the tapes; restore takes a day.")
    (docs / "notes" / "old.md").unlink()
    engine.sync()
    after = written(engine)
    assert after.version > before.version
    assert after.name != before.name
    assert_snapshot_is_the_table(after, engine.store)
    assert_same_searches(engine, monkeypatch)
    paths = set(after.rows.column("path").to_pylist())
    assert "guide/tape.md" in paths
    assert "notes/old.md" not in paths


def test_a_full_rebuild_and_another_model_get_their_own_snapshot(
    engine: Engine, make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = written(engine)
    engine.sync(full=True)  # rebuilt beside, then switched to
    rebuilt = written(engine)
    assert rebuilt.manifest.meta.lance_dir != first.manifest.meta.lance_dir
    assert_snapshot_is_the_table(rebuilt, engine.store)
    assert_same_searches(engine, monkeypatch)
    engine.close()
    other = make_engine(HashEmbedder(dim=64), source="hash")  # another model: another table
    other.sync()
    switched = written(other)
    assert switched.manifest.meta.embedder == "hash-64"
    assert switched.vectors.shape[1] == 64
    assert_snapshot_is_the_table(switched, other.store)
    assert_same_searches(other, monkeypatch)


def test_a_snapshot_of_another_version_or_model_is_not_used(
    engine: Engine, write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    persisted = written(engine)
    assert current_snapshot(engine.data_dir) is not None
    # A commit the writer has not caught up with: the table moved past the snapshot.
    monkeypatch.setattr(engine.lifecycle.snapshots, "request", lambda: None)
    write("guide/late.md", "# Late\nWritten after the snapshot.")
    engine.sync()
    assert read_current(engine.data_dir).table_version == persisted.version  # type: ignore[union-attr]
    assert current_snapshot(engine.data_dir) is None
    engine.store._cache.forget()
    held = engine.store.vector_snapshot(["id", "path"])
    assert held is not None
    assert "guide/late.md" in held.columns.column("path").to_pylist()
    # Another model than the one asked for: not used either.
    assert current_snapshot(engine.data_dir, meta_for(HashEmbedder(dim=64), "hash")) is None


def test_a_snapshot_that_does_not_check_out_is_ignored(engine: Engine) -> None:
    persisted = written(engine)
    directory = snapshot_root(engine.data_dir) / persisted.name
    snapshot_read._OPENED.clear()
    with (directory / VECTORS).open("ab") as handle:  # a file of another size than recorded
        handle.write(b"\0" * 16)
    assert open_current(engine.data_dir) is None
    assert current_snapshot(engine.data_dir) is None
    engine.store._cache.forget()
    assert engine.store.vector_snapshot(["id"]) is not None  # the table answers instead
    manifest = json.loads((directory / MANIFEST).read_text())
    manifest["format"] = 999
    (directory / MANIFEST).write_text(json.dumps(manifest))
    snapshot_read._OPENED.clear()
    assert open_current(engine.data_dir) is None


def test_a_compaction_keeps_the_snapshot_current(
    engine: Engine, write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patched:  # a commit left uncompacted, as between two compactions
        patched.setattr(ChunkStore, "compact", lambda self: None)
        write("guide/more.md", "# More\nA section to compact.")
        engine.sync()
        persisted = written(engine)
    version = int(engine.store.table.version)
    engine.store.compact()
    assert int(engine.store.table.version) > version
    current = read_current(engine.data_dir)
    assert current is not None
    assert current.name == persisted.name
    assert current.table_version == int(engine.store.table.version)
    assert current_snapshot(engine.data_dir) is not None


def test_old_snapshots_and_leftovers_are_removed_after_their_grace(engine: Engine, write: WriteDoc) -> None:
    first = written(engine)
    root = snapshot_root(engine.data_dir)
    leftover = root / ".tmp-lance-v1-dead"
    leftover.mkdir()
    os.utime(leftover, (0, 0))
    write("guide/more.md", "# More\ntext")
    engine.sync()
    second = written(engine)
    assert (root / first.name).is_dir()  # a search may still be opening it
    assert not leftover.exists()  # a writer that died long ago
    os.utime(root / first.name, (0, 0))
    write("guide/more.md", "# More\nother text")
    engine.sync()
    third = written(engine)
    assert not (root / first.name).exists()
    names = {e.name for e in root.iterdir()}
    assert {CURRENT, second.name, third.name} <= names
    assert not any(name.startswith(".tmp-") for name in names)


def test_postings_updated_for_changed_rows_equal_postings_built_again() -> None:
    rng = random.Random(3)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "running",
        "runner",
        "the",
        "cache",
        "caches",
        "café",
        "x2",
        "foo_bar",
        "zeta",
    ]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(150)]
    lexicon = Lexicon.build(texts)
    for _ in range(30):
        keep = np.array([rng.random() > 0.2 for _ in texts])
        added = [" ".join(rng.choice([*words, "eta"]) for _ in range(rng.randint(0, 12))) for _ in range(20)]
        updated = lexicon.updated(keep, added)
        texts = [t for t, k in zip(texts, keep, strict=True) if k] + added
        rebuilt = Lexicon.build(texts)
        assert (updated.documents, set(updated.term_ids)) == (rebuilt.documents, set(rebuilt.term_ids))
        assert np.array_equal(updated.norms, rebuilt.norms)
        for query in ("alpha", "running caches", "eta zeta", "café foo", "gamma gamma delta", "none"):
            ours, theirs = updated.top(query, 50), rebuilt.top(query, 50)
            assert np.array_equal(ours[0], theirs[0])
            assert np.array_equal(ours[1], theirs[1])
        lexicon = updated


def test_a_write_updates_the_rows_held_in_memory_without_reading_the_table(
    engine: Engine, write: WriteDoc, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.search("restore", 3)  # the rows and postings are held now
    scans: list[list[str]] = []
    real_scan = ChunkStore._scan

    def counted(self: ChunkStore, columns: list[str], where: str | None = None) -> pa.Table:
        scans.append(columns)
        return real_scan(self, columns, where)

    monkeypatch.setattr(ChunkStore, "_scan", counted)
    monkeypatch.setattr(engine.lifecycle.snapshots, "request", lambda: None)  # nothing on disk
    write("guide/tape.md", "# Tape\nThe vendor keeps the tapes; restore takes a day.")
    (docs / "notes" / "old.md").unlink()
    engine.sync()
    engine.syncer.compaction.drain()
    found = {q: hits_of(engine.store, engine, q, None) for q in QUERIES}
    assert SNAPSHOT_COLUMNS not in scans  # the held rows followed the write
    held = engine.store._cache.snapshot
    assert held is not None
    assert held.rows is not None
    assert held.version == int(engine.store.table.version)
    paths = set(held.columns.column("path").to_pylist())
    assert "guide/tape.md" in paths
    assert "notes/old.md" not in paths
    # The same hits and scores as rows and postings read again from the table.
    monkeypatch.setattr(ChunkStore, "_persisted", lambda self, version: None)
    engine.store._cache.forget()
    reread = engine.store.vector_snapshot(["id"])
    lexicon = engine.store.start_lexicon()
    assert lexicon is not None
    lexicon.result()
    assert {q: hits_of(engine.store, engine, q, None) for q in QUERIES} == found
    # Row for row (the order may differ once a compaction rewrote the table): each id with its
    # columns and its vector, as the table has them.
    assert reread is not None
    assert reread.rows is not None
    assert held.rows.num_rows == held.vectors.shape[0] == reread.vectors.shape[0]
    table_rows = {row["id"]: row for row in reread.rows.to_pylist()}
    for position, row in enumerate(held.rows.to_pylist()):
        at = reread.positions[row["id"]]
        assert np.array_equal(held.vectors[position], reread.vectors[at]), row["id"]
        assert table_rows[row["id"]] == row


def test_a_version_read_before_this_process_wrote_forgets_nothing(engine: Engine, write: WriteDoc) -> None:
    """A search that read the table's version while this process wrote (after its delete, before its
    add) must not throw away the rows the write left held."""
    engine.search("restore", 3)
    before = int(engine.store.table.version)
    write("guide/tape.md", "# Tape\nThe vendor keeps the tapes.")
    engine.sync()
    held = engine.store._cache.snapshot
    assert held is not None
    assert held.version == int(engine.store.table.version) > before
    engine.store._cache.refresh(before + 1)  # what such a search saw
    assert engine.store._cache.snapshot is held


def test_past_the_in_memory_bound_the_snapshot_is_looked_for_once_per_version(
    engine: Engine, write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No snapshot is written past the bound, and nothing is held, so every search would otherwise
    read CURRENT (a request, with the index on object storage) before LanceDB answers."""
    from ragdown.indexing import store as store_module

    written(engine)
    # Nothing in the background moves the version or writes a snapshot while the lookups are counted.
    monkeypatch.setattr(engine.store, "persist_snapshot", lambda: None)
    monkeypatch.setattr(engine.syncer.compaction, "committed", lambda count=1: None)
    engine.syncer.compaction.drain()
    (snapshot_root(engine.data_dir) / CURRENT).unlink()  # as past the bound: none was written
    monkeypatch.setattr(store_module, "VECTOR_INDEX_MIN_ROWS", 1)
    looked: list[int | None] = []

    def counted(data_dir: Path, lance_dir: str | None = None, version: int | None = None) -> None:
        looked.append(version)
        return None

    monkeypatch.setattr(store_module, "open_current", counted)
    engine.store._cache.forget()
    for _ in range(5):
        assert engine.store.vector_snapshot(["id"]) is None
        assert engine.recall("restore the database", 3)
    assert looked  # looked for, then remembered for that version (a compaction may add one)
    assert len(looked) == len(set(looked))
    seen = len(looked)
    write("guide/late.md", "# Late\nWritten past the bound.")
    engine.sync()
    for _ in range(3):
        assert engine.store.vector_snapshot(["id"]) is None
    # Once more for the new version (a search during the write may have read one in between).
    assert int(engine.store.table.version) in looked[seen:]
    assert len(looked) == len(set(looked))


@pytest.mark.parametrize("constant", ["CHUNKER_VERSION", "INDEX_VERSION"])
def test_an_unchanged_folder_under_another_chunker_or_layout_is_a_change(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, constant: str
) -> None:
    """An upgrade that re-chunks or re-lays the table rebuilds the index: `ragdown index` must not
    report every file unchanged from the snapshot the previous release wrote."""
    from ragdown.indexing.snapshot import unchanged

    written(engine)
    assert unchanged.unchanged_files(engine.docs_dir, engine.data_dir, None) == len(DOCS)
    monkeypatch.setattr(unchanged, constant, getattr(unchanged, constant) + 1)
    assert unchanged.unchanged_files(engine.docs_dir, engine.data_dir, None) is None
