"""Opening the current search snapshot by mapping its files (docs/design.md#search-snapshot)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from ragdown.indexing.lexicon import Lexicon, load_array
from ragdown.indexing.snapshot.layout import (
    FORMAT,
    MANIFEST,
    ROWS,
    VECTORS,
    SnapshotManifest,
    read_current,
    snapshot_root,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PersistedSnapshot:
    """One snapshot, mapped: `rows` (every column but the vector and the BM25 text), `vectors`
    row-aligned with them, the BM25 `lexicon` over the same rows, and the table `version` it answers
    for (CURRENT's, which a compaction may have moved past the manifest's)."""

    name: str
    manifest: SnapshotManifest
    version: int
    rows: pa.Table
    vectors: np.ndarray
    lexicon: Lexicon


# The snapshots this process mapped, by directory: every store and searcher of one process shares one
# mapping, so each page is resident once.
_OPENED: dict[Path, PersistedSnapshot] = {}
_OPENED_LOCK = threading.Lock()
_KEEP_OPENED = 2


def open_current(
    data_dir: Path, lance_dir: str | None = None, version: int | None = None
) -> PersistedSnapshot | None:
    """The current snapshot, when CURRENT names one of `lance_dir` at `version` (either None: any);
    None when there is none or it does not check out (it is then written again or not used)."""
    current = read_current(data_dir)
    if current is None:
        return None
    if lance_dir is not None and current.lance_dir != lance_dir:
        return None
    if version is not None and current.table_version != version:
        return None
    directory = snapshot_root(data_dir) / current.name
    # Opened under the lock: two threads opening the same snapshot at once (a stdio session's search
    # and its comparison of the folder) would each read its term list into a dict of their own.
    with _OPENED_LOCK:
        opened = _OPENED.get(directory)
        if opened is None:
            try:
                opened = _open(directory, current.name)
            except (
                OSError,
                ValueError,
                KeyError,
            ) as error:  # removed meanwhile, or not a snapshot this reads
                log.info("not using the search snapshot %s: %s", directory, error)
                return None
            _OPENED[directory] = opened
            while len(_OPENED) > _KEEP_OPENED:
                del _OPENED[next(iter(_OPENED))]
    if opened.version != current.table_version:
        opened = PersistedSnapshot(
            opened.name, opened.manifest, current.table_version, opened.rows, opened.vectors, opened.lexicon
        )
    return opened


def forget(data_dir: Path, name: str) -> None:
    """Stop keeping snapshot `name` mapped (a reader moved past it): its pages go once no search
    holds its arrays any more, so a reader's resident memory counts one snapshot, not two."""
    with _OPENED_LOCK:
        _OPENED.pop(snapshot_root(data_dir) / name, None)


def _open(directory: Path, name: str) -> PersistedSnapshot:
    manifest = SnapshotManifest.model_validate_json((directory / MANIFEST).read_bytes())
    if manifest.format != FORMAT:
        raise ValueError(f"format {manifest.format}, this release reads {FORMAT}")
    for file, size in manifest.sizes.items():
        if (directory / file).stat().st_size != size:
            raise ValueError(f"{file} is not the size the manifest records")
    rows = pa.ipc.open_file(pa.memory_map(str(directory / ROWS), "r")).read_all()
    vectors = load_array(directory / VECTORS)
    lexicon = Lexicon.load(directory)
    shape = (manifest.rows, manifest.meta.dim)
    if rows.num_rows != manifest.rows or vectors.shape != shape or lexicon.size != manifest.rows:
        raise ValueError("its rows, vectors and postings do not line up")
    return PersistedSnapshot(name, manifest, manifest.table_version, rows, vectors, lexicon)
