"""The sync engine: diffs, batches, removed files, preserved failures, single flight, rebuilds."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.indexing.embedders.base import EmbedKind, Vectors
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.listing import list_markdown_files
from ragdown.indexing.meta import current_meta
from ragdown.indexing.store import ChunkStore
from ragdown.indexing.sync import Syncer, SyncReport
from tests.conftest import WriteDoc


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting what it is asked to embed, and able to refuse marked texts."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.refuse_marker: str | None = None
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(10)
        if self.refuse_marker and any(self.refuse_marker in t for t in texts):
            raise RuntimeError("the endpoint refused this text")
        self.texts.extend(texts)
        return super().embed(texts, kind)

    def start_held_sync(self, syncer: Syncer) -> Future[SyncReport]:
        """Start a sync and return once it is waiting inside `embed`, until `gate` is set."""
        self.gate = threading.Event()
        running = syncer.request()
        assert self.entered.wait(10)
        return running

    def release(self) -> None:
        """Let the held sync go on."""
        assert self.gate is not None
        self.gate.set()


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def store(data_dir: Path) -> ChunkStore:
    return ChunkStore(data_dir, current_meta("hash-384", 384))


@pytest.fixture
def syncer(docs: Path, store: ChunkStore, embedder: CountingEmbedder) -> Syncer:
    return Syncer(docs, store, embedder)


def counts(report: SyncReport) -> tuple[int, int, int, int]:
    return (report.added, report.updated, report.removed, report.unchanged)


def test_incremental_add_update_remove(
    syncer: Syncer, store: ChunkStore, write: WriteDoc, docs: Path
) -> None:
    write("a.md", "# A\nalpha")
    write("sub/b.md", "# B\nbeta")
    first = syncer.sync()
    assert counts(first) == (2, 0, 0, 0)
    assert first.chunks == 2
    assert set(store.files()) == {"a.md", "sub/b.md"}

    write("a.md", "# A\nalpha changed\n\n## More\nmore text")
    (docs / "sub/b.md").unlink()
    write("c.markdown", "gamma")
    second = syncer.sync()
    assert counts(second) == (1, 1, 1, 0)
    assert second.chunks == 3
    files = store.files()
    assert set(files) == {"a.md", "c.markdown"}
    assert files["a.md"].chunks == 2

    assert counts(syncer.sync()) == (0, 0, 0, 2)


def test_the_report_has_the_documented_fields(syncer: Syncer, write: WriteDoc) -> None:
    write("a.md", "alpha")
    report = syncer.sync()
    assert set(report.model_dump()) == {
        "added",
        "updated",
        "removed",
        "unchanged",
        "chunks",
        "reused",
        "ms",
        "failed",
        "at",
    }
    assert report.at.endswith("Z")
    assert report.ms >= 0
    assert syncer.last_sync is report


def test_walk_skips_dot_folders_node_modules_symlinks_and_other_files(
    syncer: Syncer, store: ChunkStore, write: WriteDoc, docs: Path, tmp_path: Path
) -> None:
    write("keep.md", "kept")
    write("UPPER.MD", "kept too")
    write("page.mdx", "mdx")
    write(".git/HEAD.md", "no")
    write(".hidden.md", "no")
    write("node_modules/pkg/readme.md", "no")
    write("notes.txt", "no")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    os.symlink(outside, docs / "linked-dir")
    os.symlink(outside / "secret.md", docs / "linked.md")
    syncer.sync()
    assert set(store.files()) == {"keep.md", "UPPER.MD", "page.mdx"}
    assert set(list_markdown_files(docs)) == {"keep.md", "UPPER.MD", "page.mdx"}


def test_a_touched_file_is_rehashed_but_never_reembedded(
    syncer: Syncer, embedder: CountingEmbedder, write: WriteDoc, docs: Path
) -> None:
    path = write("a.md", "alpha")
    syncer.sync()
    embedded = len(embedder.texts)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    for _ in range(2):
        report = syncer.sync()
        assert counts(report) == (0, 0, 0, 1)
    assert len(embedder.texts) == embedded


def test_an_unchanged_stat_is_not_even_read(
    syncer: Syncer, write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("a.md", "alpha")
    syncer.sync()

    def no_reads(root: Path, path: str) -> str:
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr("ragdown.indexing.sync.read_text", no_reads)
    assert counts(syncer.sync()) == (0, 0, 0, 1)


def test_flushes_every_256_chunks_with_one_delete_and_one_add_each(
    syncer: Syncer, store: ChunkStore, write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        write(f"d{i}.md", "\n".join(f"# Section {j}\ntext {i} {j}" for j in range(150)))
    calls: list[tuple[list[str], int]] = []
    original = store.replace

    def spy(paths: list[str], rows: pa.Table | None) -> None:
        calls.append((list(paths), 0 if rows is None else rows.num_rows))
        original(paths, rows)

    monkeypatch.setattr(store, "replace", spy)
    report = syncer.sync()
    assert report.chunks == 450
    # 150 + 150 = 300 >= 256 flushes after the second file; the third goes out at the end.
    assert calls == [(["d0.md", "d1.md"], 300), (["d2.md"], 150)]
    assert store.count_rows() == 450


def test_removed_paths_go_out_with_the_first_flush(
    syncer: Syncer, store: ChunkStore, write: WriteDoc, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("gone.md", "bye")
    write("a.md", "one")
    syncer.sync()
    (docs / "gone.md").unlink()
    write("a.md", "two")
    calls: list[list[str]] = []
    original = store.replace

    def spy(paths: list[str], rows: pa.Table | None) -> None:
        calls.append(list(paths))
        original(paths, rows)

    monkeypatch.setattr(store, "replace", spy)
    syncer.sync()
    assert calls == [["a.md", "gone.md"]]


def test_a_file_that_cannot_be_embedded_keeps_its_last_rows(
    syncer: Syncer, store: ChunkStore, embedder: CountingEmbedder, write: WriteDoc
) -> None:
    write("good.md", "fine text")
    write("bad.md", "first version")
    syncer.sync()
    old = store.files()["bad.md"]
    write("bad.md", "second version POISON")
    write("good.md", "fine text, edited")
    embedder.refuse_marker = "POISON"
    report = syncer.sync()
    assert [(f.path, f.error) for f in report.failed] == [
        ("bad.md", "cannot embed: the endpoint refused this text")
    ]
    assert counts(report) == (0, 1, 0, 0)
    files = store.files()
    assert files["bad.md"] == old  # the last good rows are still searchable
    rows = store.table.search().where("path = 'bad.md'").limit(None).to_list()
    assert [r["text"] for r in rows] == ["first version"]
    embedder.refuse_marker = None
    retried = syncer.sync()
    assert counts(retried) == (0, 1, 0, 1)
    assert not retried.failed


def test_a_file_that_cannot_be_read_is_reported_not_dropped(
    syncer: Syncer, store: ChunkStore, write: WriteDoc, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("locked.md", "v1")
    syncer.sync()
    write("locked.md", "v2 longer")
    real_read = files.read_file

    def read_file(root: Root, parts: Sequence[str], *, display: str = "") -> bytes | None:
        if parts[-1] == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real_read(root, parts, display=display)

    monkeypatch.setattr(files, "read_file", read_file)
    report = syncer.sync()
    assert [(f.path, f.error) for f in report.failed] == [("locked.md", "cannot read: Permission denied")]
    assert "locked.md" in store.files()


def test_invalid_utf8_is_indexed_with_replacement_characters(
    syncer: Syncer, store: ChunkStore, docs: Path
) -> None:
    (docs / "latin1.md").write_bytes("caf\xe9 menu".encode("latin-1"))
    assert syncer.sync().added == 1
    assert store.table.search().limit(None).to_list()[0]["text"] == "caf\ufffd menu"


def test_callers_during_a_run_share_one_follow_up(
    syncer: Syncer, embedder: CountingEmbedder, write: WriteDoc
) -> None:
    write("a.md", "alpha")
    first = embedder.start_held_sync(syncer)
    write("b.md", "beta")
    second = syncer.request()
    third = syncer.request()
    assert second is third
    assert second is not first
    assert syncer.syncing
    embedder.release()
    assert counts(first.result(10)) == (1, 0, 0, 0)
    assert counts(second.result(10)) == (1, 0, 0, 1)
    fourth = syncer.request()
    assert fourth is not second
    fourth.result(10)


def test_a_full_rebuild_reembeds_everything(
    syncer: Syncer, store: ChunkStore, embedder: CountingEmbedder, write: WriteDoc
) -> None:
    write("a.md", "alpha")
    write("b.md", "beta")
    syncer.sync()
    before = len(embedder.texts)
    report = syncer.sync(full=True)
    assert counts(report) == (2, 0, 0, 0)
    assert len(embedder.texts) == before + 2
    assert store.count_rows() == 2


def test_a_full_request_during_a_run_makes_the_follow_up_full(
    syncer: Syncer, embedder: CountingEmbedder, write: WriteDoc
) -> None:
    write("a.md", "alpha")
    first = embedder.start_held_sync(syncer)
    plain = syncer.request()
    full = syncer.request(full=True)
    assert plain is full
    embedder.release()
    first.result(10)
    assert counts(full.result(10)) == (1, 0, 0, 0)  # re-added from scratch, not "unchanged"


def test_a_reader_mid_sync_sees_whole_files(
    docs: Path, data_dir: Path, syncer: Syncer, store: ChunkStore, embedder: CountingEmbedder, write: WriteDoc
) -> None:
    write("a.md", "# A\none\n\n## Two\ntwo")
    syncer.sync()
    reader = ChunkStore(data_dir, current_meta("hash-384", 384), writable=False)
    write("a.md", "# A\nuno\n\n## Two\ndos\n\n## Three\ntres")
    running = embedder.start_held_sync(syncer)
    assert reader.count_rows() == 2  # nothing deleted before the vectors exist
    embedder.release()
    running.result(10)
    assert reader.count_rows() == 3


def test_vectors_are_unit_length(syncer: Syncer, store: ChunkStore, write: WriteDoc) -> None:
    write("a.md", "# A\nalpha beta")
    syncer.sync()
    vector = np.asarray(store.table.search().limit(1).to_list()[0]["vector"])
    assert abs(np.linalg.norm(vector) - 1.0) < 1e-5


def test_in_folders_mode_loose_top_level_files_are_not_indexed(
    docs: Path, data_dir: Path, write: WriteDoc
) -> None:
    from ragdown.engine import Engine
    from ragdown.indexing.embedders.hashing import HashEmbedder

    write("loose.md", "# Loose\nnot in any folder")
    write("work/a.md", "# A\nin the work folder")
    engine = Engine(docs, data_dir, HashEmbedder(), source="hash", folders_mode=True, watch=False)
    try:
        report = engine.sync()
        assert report.added == 1
        assert set(engine.store.files()) == {"work/a.md"}
    finally:
        engine.close()


def test_pending_files_count_what_the_running_sync_has_left(
    syncer: Syncer, embedder: CountingEmbedder, write: WriteDoc
) -> None:
    """The `ragdown_embed_queue_depth` gauge: files still to read or embed, 0 when no sync runs."""
    for n in range(5):
        write(f"d{n}.md", f"# Doc {n}\n\ntext {n}")
    assert syncer.pending_files == 0
    running = embedder.start_held_sync(syncer)  # all five read, held at their first embedding
    assert syncer.pending_files == 5
    embedder.release()
    assert running.result(timeout=30).added == 5
    assert syncer.pending_files == 0
