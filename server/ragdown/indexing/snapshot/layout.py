"""Where the search snapshot lives and how the current one is named (docs/design.md#search-snapshot).

`<data_dir>/snapshot/<name>/` holds one snapshot: `rows.arrow` (the rows' columns, an Arrow IPC file),
`vectors.npy` (one float32 matrix), the BM25 postings (`indexing.lexicon.Lexicon.save`) and
`manifest.json`, written last. `<data_dir>/snapshot/CURRENT` names the one to use and the table version
it answers for; it is replaced whole by a rename after the directory is complete, so a reader finds a
complete snapshot or the previous one, never a part.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ragdown.indexing.meta import IndexMeta

SNAPSHOT_DIR = "snapshot"
CURRENT = "CURRENT"
MANIFEST = "manifest.json"
ROWS = "rows.arrow"
VECTORS = "vectors.npy"
# Bump when a file's layout changes: a snapshot of another format is ignored and written again.
FORMAT = 1
# The columns kept: every one but the vector (its own file) and the BM25 text (the postings).
SKIPPED_COLUMNS = ("vector", "search_text")


class SnapshotManifest(BaseModel):
    """What one snapshot holds: the index meta it was read under, its table version, its row count
    and every file's size (a file of another size is not this snapshot's)."""

    format: int
    meta: IndexMeta
    table_version: int
    rows: int
    sizes: dict[str, int]


class CurrentSnapshot(BaseModel):
    """The pointer: which snapshot directory answers for which version of which table."""

    name: str
    lance_dir: str
    table_version: int


def snapshot_root(data_dir: Path) -> Path:
    return data_dir / SNAPSHOT_DIR


def read_current(data_dir: Path) -> CurrentSnapshot | None:
    try:
        return CurrentSnapshot.model_validate_json((snapshot_root(data_dir) / CURRENT).read_bytes())
    except (OSError, ValueError, ValidationError):
        return None


def current_json(current: CurrentSnapshot) -> bytes:
    return json.dumps(current.model_dump()).encode()


def table_version_on_disk(data_dir: Path, lance_dir: str) -> int | None:
    """The newest committed version of the `chunks` table in `lance_dir`, read from the names of its
    manifests without LanceDB: `{u64::MAX - v:020}.manifest` (Lance's V2 naming) or `{v}.manifest`."""
    versions = data_dir / lance_dir / "chunks.lance" / "_versions"
    newest: int | None = None
    try:
        names = [entry.name for entry in versions.iterdir()]
    except OSError:
        return None
    for name in names:
        stem, dot, suffix = name.partition(".")
        if suffix != "manifest" or not dot or not stem.isdigit():
            continue
        number = int(stem)
        version = (2**64 - 1) - number if len(stem) == 20 and number > 2**63 else number
        newest = version if newest is None else max(newest, version)
    return newest
