"""Writing a search snapshot whole or not at all (docs/design.md#search-snapshot)."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa

from ragdown.atomic import sync_dir, write_atomic
from ragdown.indexing.lexicon import Lexicon
from ragdown.indexing.meta import IndexMeta
from ragdown.indexing.snapshot.layout import (
    CURRENT,
    FORMAT,
    MANIFEST,
    ROWS,
    VECTORS,
    CurrentSnapshot,
    SnapshotManifest,
    current_json,
    read_current,
    snapshot_root,
)
from ragdown.modes import make_private_dir, private_files

log = logging.getLogger(__name__)

TEMP_PREFIX = ".tmp-"


def _sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_snapshot(
    data_dir: Path,
    meta: IndexMeta,
    table_version: int,
    rows: pa.Table,
    vectors: np.ndarray,
    lexicon: Lexicon,
    *,
    keep_for_s: float,
) -> str:
    """Write the snapshot of `meta.lance_dir` at `table_version` and make it current; returns its name.

    The files go into a temporary directory, each synced, the manifest last; the directory is renamed
    into place and only then does CURRENT name it. A crash at any point leaves CURRENT naming the
    previous snapshot. Snapshots no longer current for more than `keep_for_s` are removed.
    """
    if not (rows.num_rows == vectors.shape[0] == lexicon.size):
        raise ValueError("the snapshot's rows, vectors and postings do not line up")
    root = snapshot_root(data_dir)
    make_private_dir(root)
    name = f"{meta.lance_dir}-v{table_version}-{uuid.uuid4().hex[:8]}"
    staging = root / f"{TEMP_PREFIX}{name}"
    with private_files():
        staging.mkdir(mode=0o700)
        try:
            with pa.OSFile(str(staging / ROWS), "wb") as sink:
                table = rows.combine_chunks()
                with pa.ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table, max_chunksize=max(1, table.num_rows))
            np.save(staging / VECTORS, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
            lexicon.save(staging)
            sizes = {entry.name: entry.stat().st_size for entry in staging.iterdir()}
            for entry in staging.iterdir():
                _sync_file(entry)
            manifest = SnapshotManifest(
                format=FORMAT, meta=meta, table_version=table_version, rows=rows.num_rows, sizes=sizes
            )
            (staging / MANIFEST).write_text(manifest.model_dump_json(), encoding="utf-8")
            _sync_file(staging / MANIFEST)
            os.rename(staging, root / name)
            sync_dir(root)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    previous = read_current(data_dir)
    if previous is not None:  # its age counts from now, when it stops being current
        with contextlib.suppress(OSError):
            os.utime(root / previous.name)
    current = CurrentSnapshot(name=name, lance_dir=meta.lance_dir, table_version=table_version)
    write_atomic(root / CURRENT, current_json(current), mode=0o600)
    remove_old(data_dir, keep_for_s)
    return name


def repoint(data_dir: Path, lance_dir: str, old_version: int, new_version: int) -> bool:
    """After a commit that changed no row (a compaction): the current snapshot of `old_version`
    answers for `new_version` too. False when the current snapshot is not that one."""
    current = read_current(data_dir)
    if current is None or (current.lance_dir, current.table_version) != (lance_dir, old_version):
        return False
    moved = current.model_copy(update={"table_version": new_version})
    write_atomic(snapshot_root(data_dir) / CURRENT, current_json(moved), mode=0o600)
    return True


def remove_old(data_dir: Path, keep_for_s: float) -> None:
    """Remove snapshots that CURRENT stopped naming more than `keep_for_s` ago (a search may still be
    opening one), and temporary directories of writers that died as long ago."""
    root = snapshot_root(data_dir)
    current = read_current(data_dir)
    cutoff = time.time() - keep_for_s
    try:
        entries = list(root.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name == CURRENT or not entry.is_dir() or (current and entry.name == current.name):
            continue
        try:
            if entry.stat().st_mtime < cutoff:
                shutil.rmtree(entry)
        except OSError as error:  # left for the next write
            log.debug("could not remove the old snapshot %s: %s", entry, error)
