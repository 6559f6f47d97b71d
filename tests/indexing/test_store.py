"""The LanceDB table: layout, meta.json, every rebuild reason, reader refusals, indexes."""

from __future__ import annotations

import json
import os
import stat
from datetime import timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ragdown.errors import IndexNotReadyError
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.meta import INDEX_VERSION, current_meta, read_meta, rebuild_reason, write_meta
from ragdown.indexing.schema import chunk_schema, sql_in, sql_string
from ragdown.indexing.store import VECTOR_INDEX_MIN_ROWS, ChunkStore
from ragdown.indexing.sync import Syncer
from tests.conftest import WriteDoc


def build(docs: Path, data_dir: Path, embedder_name: str = "hash-384") -> ChunkStore:
    store = ChunkStore(data_dir, current_meta(embedder_name, 384))
    Syncer(docs, store, HashEmbedder()).sync()
    return store


def test_lance_cpu_threads_is_at_least_two_before_lancedb_loads() -> None:
    assert int(os.environ["LANCE_CPU_THREADS"]) >= 2


def test_schema_has_every_column_and_none_nullable() -> None:
    schema = chunk_schema(384)
    assert schema.names == [
        "id",
        "path",
        "file_hash",
        "mtime_ms",
        "size",
        "chunk_index",
        "title",
        "heading",
        "text",
        "search_text",
        "supersedes",
        "tags",
        "aliases",
        "description",
        "created_by",
        "session",
        "line_start",
        "line_end",
        "vector",
    ]
    assert not any(field.nullable for field in schema)
    assert str(schema.field("vector").type) == "fixed_size_list<item: float>[384]"


def test_rows_hold_the_documented_values(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write(
        "notes/pg.md",
        "---\ntags: [Ops, db/pg]\naliases: [Big DB, pg]\nsupersedes: old.md, ../x/y.md\n"
        "description: Vacuum notes\ncreated_by: claude\nsession: s1\n---\n# Postgres\nVacuum nightly.\n",
    )
    store = build(docs, data_dir)
    rows = store.table.search().limit(None).to_list()
    assert len(rows) == 1
    row = rows[0]
    assert row["path"] == "notes/pg.md"
    assert len(row["file_hash"]) == 64
    assert row["id"] == f"notes/pg.md#0@{row['file_hash'][:12]}"
    assert row["tags"] == " db/pg ops "
    assert row["aliases"] == "Big DB\npg"
    assert row["supersedes"] == "notes/old.md\nx/y.md"
    assert (row["description"], row["created_by"], row["session"]) == ("Vacuum notes", "claude", "s1")
    assert row["title"] == "Postgres"
    assert row["heading"] == "Postgres"
    assert row["text"] == "Vacuum nightly."
    assert row["search_text"] == "Postgres\n\nVacuum nightly.\n\nBig DB\npg"
    assert (row["line_start"], row["line_end"]) == (10, 10)
    assert row["size"] == (docs / "notes/pg.md").stat().st_size
    assert abs(sum(v * v for v in row["vector"]) - 1.0) < 1e-5


def test_empty_optional_fields_are_empty_strings(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("plain.md", "just text")
    row = build(docs, data_dir).table.search().limit(None).to_list()[0]
    assert [row[c] for c in ("tags", "aliases", "supersedes", "description", "created_by", "session")] == [
        ""
    ] * 6


def test_meta_file_is_private_and_records_versions(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("a.md", "alpha")
    build(docs, data_dir)
    meta_path = data_dir / "meta.json"
    assert stat.S_IMODE(meta_path.stat().st_mode) == 0o600
    recorded = json.loads(meta_path.read_text())
    assert recorded["embedder"] == "hash-384"
    assert recorded["dim"] == 384
    assert recorded["chunker_version"] == 3
    assert recorded["index_version"] == INDEX_VERSION == 5


def test_only_the_full_text_index_exists_below_ten_thousand_rows(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    for i in range(30):
        write(f"d{i}.md", f"# Doc {i}\nbody {i}")
    assert build(docs, data_dir).list_index_columns() == [["search_text"]]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"embedder": "other"}, "the embedder changed from other to hash-384"),
        ({"chunker_version": 1}, "the chunker changed from v1 to v3"),
        ({"index_version": 4}, "the index layout changed from v4 to v5"),
        ({"dim": 8}, "the embedding dimension changed from 8 to 384"),
        ({"max_chars": 1000}, "the chunk size changed from 1000 to 0 characters"),
    ],
)
def test_every_mismatch_rebuilds_a_writable_store(
    docs: Path, data_dir: Path, write: WriteDoc, change: dict[str, object], reason: str
) -> None:
    write("a.md", "alpha")
    build(docs, data_dir)
    stale = current_meta("hash-384", 384).model_copy(update=change)
    write_meta(data_dir, stale)
    reopened = ChunkStore(data_dir, current_meta("hash-384", 384))
    assert reopened.rebuilt_because == reason
    assert reopened.count_rows() == 0
    assert reopened.building
    assert read_meta(data_dir) == stale  # the old index is still the one served
    reopened.publish()
    switched = read_meta(data_dir)
    assert switched is not None
    assert switched.lance_dir == reopened.lance_dir != "lance"
    assert switched == current_meta("hash-384", 384).model_copy(update={"lance_dir": reopened.lance_dir})


def test_a_rebuild_switches_only_when_published_and_then_removes_the_old_index(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    import time

    write("a.md", "alpha")
    build(docs, data_dir)
    write_meta(data_dir, current_meta("hash-384", 384).model_copy(update={"embedder": "other"}))
    rebuilding = ChunkStore(data_dir, current_meta("hash-384", 384))
    rebuilding.keep_versions_for = timedelta(0)
    assert (data_dir / "lance").is_dir()
    assert (data_dir / rebuilding.lance_dir).is_dir()
    rebuilding.publish()
    deadline = time.monotonic() + 30
    while (data_dir / "lance").exists():
        assert time.monotonic() < deadline, "the old index was not removed"
        time.sleep(0.05)
    reader = ChunkStore(data_dir, current_meta("hash-384", 384), writable=False)
    assert reader.lance_dir == rebuilding.lance_dir


def test_a_rebuild_that_never_switched_is_cleaned_up_at_the_next_start(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    write("a.md", "alpha")
    build(docs, data_dir)
    write_meta(data_dir, current_meta("hash-384", 384).model_copy(update={"embedder": "other"}))
    crashed = ChunkStore(data_dir, current_meta("hash-384", 384))  # building, never published
    leftover = data_dir / crashed.lance_dir
    assert leftover.is_dir()
    again = ChunkStore(data_dir, current_meta("hash-384", 384))
    assert not leftover.exists()
    assert again.building
    assert (data_dir / "lance").is_dir()  # the index that still serves is kept


@pytest.mark.parametrize("content", [None, "{not json", '{"embedder": "hash-384"}'])
def test_a_missing_or_malformed_meta_file_rebuilds(
    docs: Path, data_dir: Path, write: WriteDoc, content: str | None
) -> None:
    write("a.md", "alpha")
    build(docs, data_dir)
    if content is None:
        (data_dir / "meta.json").unlink()
    else:
        (data_dir / "meta.json").write_text(content)
    reopened = ChunkStore(data_dir, current_meta("hash-384", 384))
    assert reopened.rebuilt_because == "the index has no meta file"
    assert reopened.count_rows() == 0


def test_a_matching_meta_keeps_the_rows(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("a.md", "alpha")
    build(docs, data_dir)
    reopened = ChunkStore(data_dir, current_meta("hash-384", 384))
    assert reopened.rebuilt_because is None
    assert reopened.count_rows() == 1


def test_a_reader_never_drops_and_says_what_to_do(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    with pytest.raises(
        IndexNotReadyError, match=r"^the index does not exist yet; start the primary server first$"
    ):
        ChunkStore(data_dir, current_meta("hash-384", 384), writable=False)
    write("a.md", "alpha")
    build(docs, data_dir)
    with pytest.raises(
        IndexNotReadyError,
        match=r"^the index needs a rebuild \(the embedder changed from hash-384 to other\); "
        r"start the primary server first$",
    ):
        ChunkStore(data_dir, current_meta("other", 384), writable=False)
    assert ChunkStore(data_dir, current_meta("hash-384", 384)).count_rows() == 1
    reader = ChunkStore(data_dir, current_meta("hash-384", 384), writable=False)
    with pytest.raises(PermissionError, match="read-only"):
        reader.delete_all()


def test_a_reader_sees_the_writers_commits_at_once(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("a.md", "alpha")
    writer = ChunkStore(data_dir, current_meta("hash-384", 384))
    syncer = Syncer(docs, writer, HashEmbedder())
    syncer.sync()
    reader = ChunkStore(data_dir, current_meta("hash-384", 384), writable=False)
    assert reader.count_rows() == 1
    write("b.md", "beta")
    syncer.sync()
    assert reader.count_rows() == 2


def test_rebuild_reason_is_none_for_equal_meta() -> None:
    meta = current_meta("hash-384", 384)
    assert rebuild_reason(meta, meta) is None
    assert rebuild_reason(None, meta) == "the index has no meta file"


def test_sql_literals_double_quotes() -> None:
    assert sql_string("it's") == "'it''s'"
    assert sql_in("path", ["a.md", "b'c.md"]) == "path IN ('a.md', 'b''c.md')"


def test_compaction_indexes_new_rows_and_prunes_old_versions(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    store = ChunkStore(data_dir, current_meta("hash-384", 384))
    syncer = Syncer(docs, store, HashEmbedder())
    for i in range(4):
        write(f"d{i}.md", f"doc {i}")
        syncer.sync()
    syncer.compaction.drain()  # compaction runs in the background after syncs (test_compaction.py)
    assert store.count_rows() == 4
    assert store.table.list_indices()[0].num_unindexed_rows == 0
    versions_before = len(store.table.list_versions())
    store.keep_versions_for = timedelta(milliseconds=1)
    store.compact()
    assert len(store.table.list_versions()) < versions_before
    assert store.count_rows() == 4


@pytest.mark.slow  # a table of the threshold's size (50,000 rows) and its full-text index
def test_compaction_builds_a_cosine_vector_index_from_the_threshold_on(data_dir: Path) -> None:
    dim = 8
    store = ChunkStore(data_dir, current_meta("hash-8", dim))
    schema = chunk_schema(dim)
    rows = VECTOR_INDEX_MIN_ROWS
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(rows, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    columns: dict[str, pa.Array] = {}
    for field in schema:
        if field.name == "vector":
            columns[field.name] = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim)
        elif pa.types.is_string(field.type):
            columns[field.name] = pa.array([f"{field.name}-{i}" for i in range(rows)])
        else:
            columns[field.name] = pa.array(np.arange(rows), type=field.type)
    store.replace([], pa.Table.from_arrays(list(columns.values()), schema=schema))
    store.compact()
    assert sorted(store.list_index_columns()) == [["search_text"], ["vector"]]
    vector_index = next(i for i in store.table.list_indices() if i.columns == ["vector"])
    assert vector_index.index_type == "IvfFlat"
    assert vector_index.index_details["metric_type"] == "COSINE"
    nearest = store.dense(vectors[42], 1, None, ["id"]).to_pylist()[0]
    assert nearest["id"] == "id-42"
