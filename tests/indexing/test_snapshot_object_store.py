"""The search snapshot beside an index on object storage (docs/design.md#search-snapshot-on-object-storage),
against a real S3 API (moto's server on loopback): the primary copies each snapshot to the store and
names it there; a reader on another data dir copies it down once per version and answers from it
without scanning the table; a compaction re-points it; old ones are removed; and nothing a bucket
holds makes a reader write outside its snapshot directory."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from ragdown.engine import Engine
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.snapshot import remote
from ragdown.indexing.snapshot.layout import CURRENT, MANIFEST, SNAPSHOT_DIR, read_current
from ragdown.indexing.store import ChunkStore
from tests.conftest import WriteDoc


def settled(engine: Engine) -> None:
    """The primary's compaction and snapshot writes requested so far are done (copied to the store
    included): a compaction moves the table's version, and re-points the snapshot."""
    engine.syncer.compaction.drain()
    assert engine.lifecycle.snapshots is not None
    engine.lifecycle.snapshots.wait()


def synced_primary(open_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    """A primary over the store that indexed one note, its snapshot copied there."""
    write("ops/cache.md", "# Cache\nRedis eviction policy and memory limits.")
    primary = open_engine()
    primary.sync()
    settled(primary)
    return primary


def store_files(location: IndexLocation, name: str) -> dict[str, int]:
    fs, root = location.filesystem()
    infos = fs.get_file_info(pafs.FileSelector(f"{root}/{SNAPSHOT_DIR}/{name}", allow_not_found=True))
    return {Path(info.path).name: info.size for info in infos}


def put(location: IndexLocation, name: str, body: bytes) -> None:
    fs, root = location.filesystem()
    with fs.open_output_stream(f"{root}/{SNAPSHOT_DIR}/{name}") as stream:
        stream.write(body)


def no_table_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_store: ChunkStore) -> None:
        raise AssertionError("the table was scanned")

    monkeypatch.setattr(ChunkStore, "_scan_rows", refuse)


@pytest.mark.slow  # the real S3 API for seconds: the slow tier
def test_the_primary_copies_each_snapshot_to_the_store_and_names_it_there(
    open_engine: Callable[..., Engine], write: WriteDoc, location: IndexLocation, tmp_path: Path
) -> None:
    primary = synced_primary(open_engine, write)
    current = remote.read_remote_current(location)
    local = read_current(tmp_path / "primary")
    assert current is not None
    assert current == local
    assert current.table_version == int(primary.store.table.version)
    written = tmp_path / "primary" / SNAPSHOT_DIR / current.name
    local_files = {e.name: e.stat().st_size for e in written.iterdir()}
    assert store_files(location, current.name) == local_files
    assert MANIFEST in local_files


def test_a_reader_answers_from_its_copy_without_scanning_the_table(
    open_engine: Callable[..., Engine],
    write: WriteDoc,
    location: IndexLocation,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write("ops/backups.md", "# Backups\nRestore postgres dumps nightly.")
    primary = synced_primary(open_engine, write)
    expected = [(hit.path, hit.score) for hit in primary.recall("postgres restore", 5)]
    no_table_scan(monkeypatch)
    reader = open_engine("reader", writable=False)
    assert [(hit.path, hit.score) for hit in reader.recall("postgres restore", 5)] == expected
    current = remote.read_remote_current(location)
    assert current is not None
    assert read_current(tmp_path / "reader") == current
    copied = tmp_path / "reader" / SNAPSHOT_DIR / current.name
    assert {e.name: e.stat().st_size for e in copied.iterdir()} == store_files(location, current.name)


@pytest.mark.slow  # the real S3 API for seconds: the slow tier
def test_a_reader_follows_a_new_version_through_its_snapshot(
    open_engine: Callable[..., Engine], write: WriteDoc, location: IndexLocation, tmp_path: Path
) -> None:
    primary = synced_primary(open_engine, write)
    reader = open_engine("reader", writable=False)
    assert reader.recall("redis eviction", 3)[0].path == "ops/cache.md"
    first = read_current(tmp_path / "reader")
    write("ops/queue.md", "# Queue\nKafka consumer lag alerts.")
    primary.sync()
    settled(primary)
    reader.index.store.see_latest()
    assert reader.recall("kafka consumer lag", 3)[0].path == "ops/queue.md"
    second = read_current(tmp_path / "reader")
    assert first is not None
    assert second is not None
    assert second.table_version > first.table_version
    # Both copies are kept until the old one's grace ends: one local copy per version.
    assert (tmp_path / "reader" / SNAPSHOT_DIR / first.name).is_dir()


@pytest.mark.slow  # the real S3 API for seconds: the slow tier
def test_a_compaction_re_points_the_stores_snapshot(
    open_engine: Callable[..., Engine],
    write: WriteDoc,
    location: IndexLocation,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    primary = synced_primary(open_engine, write)
    monkeypatch.setattr(primary.syncer.compaction, "committed", lambda count=1: None)  # compacted here
    write("ops/queue.md", "# Queue\nKafka consumer lag alerts.")
    primary.sync()
    settled(primary)
    before = remote.read_remote_current(location)
    primary.store.compact()
    after = remote.read_remote_current(location)
    assert before is not None
    assert after is not None
    assert after.name == before.name
    assert after.table_version == int(primary.store.table.version)
    assert after.table_version > before.table_version


@pytest.mark.slow  # the real S3 API for seconds: the slow tier
def test_snapshots_no_longer_current_are_removed_from_the_store_after_their_grace(
    open_engine: Callable[..., Engine], write: WriteDoc, location: IndexLocation, tmp_path: Path
) -> None:
    primary = synced_primary(open_engine, write)
    old = remote.read_remote_current(location)
    write("ops/cache.md", "# Cache\nRedis eviction policy, edited.")
    primary.sync()
    settled(primary)
    new = remote.read_remote_current(location)
    assert old is not None
    assert new is not None
    assert new.name != old.name
    remote.remove_old_remote(location, keep_for_s=3600)
    assert store_files(location, old.name)  # within its grace: a reader may be copying it
    remote.remove_old_remote(location, keep_for_s=0)
    assert not store_files(location, old.name)
    assert store_files(location, new.name)


@pytest.mark.parametrize(
    ("change", "fault"),
    [
        ("name", "a pointer whose name is a path"),
        ("file", "a manifest naming a file outside the snapshot"),
        ("longer", "a file longer than the manifest says"),
        ("shorter", "a file shorter than the manifest says"),
    ],
)
def test_a_snapshot_on_the_store_that_does_not_check_out_is_never_used_or_written_outside(
    open_engine: Callable[..., Engine],
    write: WriteDoc,
    location: IndexLocation,
    tmp_path: Path,
    change: str,
    fault: str,
) -> None:
    synced_primary(open_engine, write)
    current = remote.read_remote_current(location)
    assert current is not None
    if change == "name":
        pointer = {**current.model_dump(), "name": "../../escape-v1-0000abcd"}
        put(location, CURRENT, json.dumps(pointer).encode())
    elif change == "file":
        fs, root = location.filesystem()
        path = f"{root}/{SNAPSHOT_DIR}/{current.name}/{MANIFEST}"
        with fs.open_input_stream(path) as stream:
            manifest = json.loads(stream.read())
        manifest["sizes"]["../../../escape.txt"] = 3
        put(location, f"{current.name}/{MANIFEST}", json.dumps(manifest).encode())
    else:
        sizes = store_files(location, current.name)
        fs, root = location.filesystem()
        with fs.open_input_stream(f"{root}/{SNAPSHOT_DIR}/{current.name}/vectors.npy") as stream:
            body = stream.read()
        put(location, f"{current.name}/vectors.npy", body + b"x" if change == "longer" else body[:-1])
        assert store_files(location, current.name)["vectors.npy"] != sizes["vectors.npy"]
    reader_dir = tmp_path / "reader"
    reader = open_engine("reader", writable=False)
    assert reader.recall("redis eviction", 3)[0].path == "ops/cache.md", fault  # from the table
    assert read_current(reader_dir) is None, fault
    assert not (tmp_path / "escape.txt").exists()
    assert not (tmp_path / "escape-v1-0000abcd").exists()
    snapshots = reader_dir / SNAPSHOT_DIR
    assert not snapshots.exists() or not any(snapshots.iterdir()), fault  # no copy, no leftover
