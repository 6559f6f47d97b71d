"""The index on object storage (docs/design.md#index-on-object-storage), against a real S3 API
(moto's server on loopback): the primary writes the table and meta.json there and nothing under
its data dir; a reader on another data dir finds both, follows new commits within the refresh
bound, and follows a full rebuild's switch; leftovers and old tables are removed there too."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from ragdown.engine import Engine
from ragdown.errors import IndexStorageError
from ragdown.indexing import store as store_module
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.meta import META_FILE
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc, wait_for
from tests.indexing.conftest import FOLLOW_S, REFRESH_S, published


def test_the_primary_writes_the_table_and_meta_to_the_store(
    open_engine: Callable[..., Engine], write: WriteDoc, tmp_path: Path, location: IndexLocation
) -> None:
    write("ops/cache.md", "# Cache\nRedis eviction policy and memory limits.")
    write("ops/backups.md", "# Backups\nRestore postgres dumps nightly.")
    primary = open_engine()
    primary.sync()
    assert primary.recall("redis eviction", 3)[0].path == "ops/cache.md"
    meta = published(location)
    assert meta.embedder == primary.embedder.name
    assert meta.lance_dir in location.table_dirs()
    # Nothing of the index under the primary's own data dir.
    assert not (tmp_path / "primary" / META_FILE).exists()
    assert not (tmp_path / "primary" / meta.lance_dir).exists()


def test_a_reader_on_another_data_dir_follows_the_primarys_commits(
    open_engine: Callable[..., Engine], write: WriteDoc
) -> None:
    write("ops/cache.md", "# Cache\nRedis eviction policy.")
    primary = open_engine()
    primary.sync()
    reader = open_engine("reader", writable=False)
    assert reader.recall("redis eviction", 3)[0].path == "ops/cache.md"
    write("ops/queues.md", "# Queues\nKafka consumer lag alerts.")
    primary.sync()
    assert wait_for(
        lambda: any(h.path == "ops/queues.md" for h in reader.recall("kafka consumer lag", 3)), FOLLOW_S
    )


@pytest.mark.slow  # a real process (or the real S3 API) for seconds: the slow tier
def test_a_full_rebuild_switches_readers_and_removes_the_old_table(
    open_engine: Callable[..., Engine],
    write: WriteDoc,
    location: IndexLocation,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write("ops/cache.md", "# Cache\nRedis eviction policy.")
    primary = open_engine()
    primary.sync()
    reader = open_engine("reader", writable=False)
    before = published(location)
    monkeypatch.setattr(store_module, "KEEP_VERSIONS_FOR", timedelta(seconds=2))  # not a minute
    primary.sync(full=True)
    after = published(location)
    assert after.lance_dir != before.lance_dir
    failures = 0
    for _ in range(20):  # no search fails across the switch
        try:
            assert reader.recall("redis eviction", 3)[0].path == "ops/cache.md"
        except Exception:
            failures += 1
        time.sleep(REFRESH_S / 4)
    assert failures == 0
    assert wait_for(
        lambda: bool(reader.recall("redis", 1)) and reader.index.store.lance_dir == after.lance_dir, FOLLOW_S
    )
    assert wait_for(lambda: before.lance_dir not in location.table_dirs(), FOLLOW_S)


def test_a_rebuild_that_never_switched_is_removed_at_the_next_start(
    open_engine: Callable[..., Engine], write: WriteDoc, location: IndexLocation
) -> None:
    write("ops/cache.md", "# Cache\nRedis eviction policy.")
    open_engine().sync()
    import pyarrow as pa

    store_module.connect(location, "lance-deadbeef").create_table("chunks", pa.table({"x": [1]}))
    assert "lance-deadbeef" in location.table_dirs()
    restarted = open_engine("restarted")
    assert "lance-deadbeef" not in location.table_dirs()
    assert restarted.recall("redis eviction", 3)[0].path == "ops/cache.md"


@pytest.mark.parametrize(
    ("uri", "fault"),
    [
        ("http://bucket/prefix", "must be a path or an s3://, gs:// or az:// URI"),
        ("s3:///prefix", "names no bucket"),
        ("s3://bucket/prefix?region=x", "takes no ?query"),
    ],
)
def test_a_uri_no_store_can_serve_is_refused_when_the_settings_load(uri: str, fault: str) -> None:
    with pytest.raises(ValidationError, match=fault.replace("?", r"\?").replace(".", r"\.")):
        ServerSettings(index_uri=uri)


def test_a_store_that_cannot_be_reached_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    location = IndexLocation(tmp_path, "s3://nowhere/index")
    with pytest.raises(IndexStorageError, match="s3://nowhere/index"):
        location.read_meta(fresh=True)


def test_the_folder_copy_follows_additions_changes_and_removals(
    open_engine: Callable[..., Engine], write: WriteDoc, docs: Path, tmp_path: Path, index_uri: str
) -> None:
    """docs/design.md#readers-without-the-folder: what a reader with no docs dir reads."""
    from ragdown.indexing.folder_copy import FolderCopy

    write("ops/cache.md", "# Cache\nRedis eviction policy.")
    write("ops/old.md", "# Old\nTo be removed.")
    (docs / "ops/.ragdown.json").write_text('{"title": "Ops", "mcp": true}', encoding="utf-8")
    (docs / ".ragdown-server.json").write_text('{"text_limit": 500}', encoding="utf-8")
    (docs / ".secrets").mkdir()
    (docs / ".secrets/token.md").write_text("never copied", encoding="utf-8")
    primary = open_engine()
    primary.sync()
    copy = FolderCopy(IndexLocation(tmp_path / "elsewhere", index_uri, REFRESH_S))
    target = tmp_path / "copy"
    assert copy.restore(target) == 4
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert copied == [".ragdown-server.json", "ops/.ragdown.json", "ops/cache.md", "ops/old.md"]
    assert (target / "ops/cache.md").read_bytes() == (docs / "ops/cache.md").read_bytes()
    assert copy.restore(target) == 0  # nothing changed, nothing written

    write("ops/cache.md", "# Cache\nRedis eviction policy, rewritten.")
    (docs / "ops/old.md").unlink()
    write("ops/new.md", "# New\nA new page.")
    primary.sync()
    time.sleep(REFRESH_S * 3)  # past the refresh bound: the reader's next look sees the new version
    assert copy.restore(target) == 3
    assert (target / "ops/cache.md").read_text(encoding="utf-8").endswith("rewritten.")
    assert not (target / "ops/old.md").exists()
    assert (target / "ops/new.md").exists()


def test_a_name_that_is_not_utf8_is_neither_indexed_nor_copied(
    open_engine: Callable[..., Engine], write: WriteDoc, docs: Path, tmp_path: Path, index_uri: str
) -> None:
    """docs/security.md#tenants: the sync reports it, and the copy of the folder leaves it out."""
    from ragdown.indexing.folder_copy import FolderCopy

    write("ops/cache.md", "# Cache\nRedis eviction policy.")
    for relative in (b"ops/bad\xffname.md", b"bad\xfc/.ragdown.json", b"bad\xfc/x.md"):
        path = os.fsencode(docs) + b"/" + relative
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as file:
            file.write(b"# Bad\n")
    primary = open_engine()
    report = primary.sync()
    assert sorted(f.path for f in report.failed) == ["bad\\xfc/x.md", "ops/bad\\xffname.md"]
    target = tmp_path / "copy"
    FolderCopy(IndexLocation(tmp_path / "elsewhere", index_uri, REFRESH_S)).restore(target)
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == ["ops/cache.md"]


def test_a_readers_copy_of_the_folder_is_its_owners_only(
    open_engine: Callable[..., Engine], write: WriteDoc, tmp_path: Path, index_uri: str
) -> None:
    """docs/security.md#tenants: the copy holds every folder's text, under the reader's data dir."""
    from ragdown.indexing.folder_copy import FolderCopy

    write("ops/db/vacuum.md", "# Vacuum\nNightly.")
    open_engine().sync()
    old = os.umask(0o022)
    try:
        target = tmp_path / "reader" / "folder"
        FolderCopy(IndexLocation(tmp_path / "elsewhere", index_uri, REFRESH_S)).restore(target)
    finally:
        os.umask(old)
    modes = {str(p.relative_to(target)): stat.S_IMODE(p.stat().st_mode) for p in [target, *target.rglob("*")]}
    assert modes == {".": 0o700, "ops": 0o700, "ops/db": 0o700, "ops/db/vacuum.md": 0o600}


def test_a_copied_path_the_path_rule_refuses_is_never_written(
    open_engine: Callable[..., Engine], write: WriteDoc, tmp_path: Path, location: IndexLocation
) -> None:
    """Rows put in the bucket by someone else cannot make a reader write outside its copy."""
    import pyarrow as pa

    from ragdown.indexing.folder_copy import COPY_DIR, SCHEMA, TABLE, FolderCopy

    write("ops/cache.md", "# Cache\nRedis.")
    open_engine().sync()
    table = store_module.connect(location, COPY_DIR).open_table(TABLE)
    hostile = ["../escape.md", "/etc/passwd.md", "ops/../../up.md", ".git/config.md", "ops/.env", "a\0b.md"]
    table.add(
        pa.table(
            {"path": hostile, "data": [b"x"] * len(hostile), "hash": ["0"] * len(hostile)}, schema=SCHEMA
        )
    )
    target = tmp_path / "nested" / "copy"
    FolderCopy(location).restore(target)
    inside = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert [p for p in inside if not p.startswith(("nested/copy/", "docs/", "primary/"))] == []
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == ["ops/cache.md"]


# lancedb warns that cleanup_older_than=0 drops versions another process may still read: this test sets
# the bound to 0 on purpose, with no other process on the table.
@pytest.mark.slow
@pytest.mark.filterwarnings(r"ignore:optimize\(cleanup_older_than=0\):UserWarning")
def test_old_versions_are_cleaned_up_on_the_store(
    open_engine: Callable[..., Engine],
    write: WriteDoc,
    location: IndexLocation,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Compaction drops versions past KEEP_VERSIONS_FOR there as on disk: the manifests kept stay
    few however many syncs ran."""
    import pyarrow.fs as pafs

    monkeypatch.setattr(store_module, "KEEP_VERSIONS_FOR", timedelta(0))
    primary = open_engine()
    for round_ in range(6):
        write("ops/cache.md", f"# Cache\nRedis eviction, edit {round_}.")
        primary.store.keep_versions_for = timedelta(0)
        primary.sync()
        primary.syncer.compaction.drain()  # as the background thread does once writes pause
    meta = published(location)
    fs, root = location.filesystem()
    infos = fs.get_file_info(pafs.FileSelector(f"{root}/{meta.lance_dir}", recursive=True))
    manifests = [i.path for i in infos if "/_versions/" in i.path and i.path.endswith(".manifest")]
    assert 1 <= len(manifests) <= 3, manifests
    assert primary.recall("redis eviction edit", 1)[0].text.endswith("edit 5.")
