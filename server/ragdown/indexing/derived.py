"""What is derived from the rows, the same whether they come from LanceDB or from the search
snapshot: the vectors as one matrix, each file's state, the paths superseded documents hide, and each
document's aliases."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragdown.documents.metadata import supersedes_boundary, within
from ragdown.indexing.schema import FileState


def vector_matrix(rows: pa.Table) -> np.ndarray:
    """The `vector` column as one contiguous float32 matrix, a row per row."""
    vectors = rows.column("vector")
    if rows.num_rows == 0:  # an empty table (a rebuild's, before its first batch): no width to infer
        width = vectors.type.list_size if isinstance(vectors.type, pa.FixedSizeListType) else 0
        return np.zeros((0, max(width, 0)), dtype=np.float32)
    column = vectors.combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return np.ascontiguousarray(column, dtype=np.float32).reshape(rows.num_rows, -1)


def vector_column(vectors: np.ndarray, dim: int) -> pa.FixedSizeListArray:
    """A matrix as the table's `vector` column (the inverse of `vector_matrix`)."""
    flat = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1)
    return pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), dim)


def file_states(rows: pa.Table) -> dict[str, FileState]:
    """Per path: hash, mtime, size and chunk count (`rows`: path, file_hash, mtime_ms, size). Every
    row of a file carries the same hash, mtime and size: grouping in Arrow keeps the no-change check
    of thousands of files cheap."""
    if rows.num_rows == 0:
        return {}
    grouped = rows.group_by("path", use_threads=False).aggregate(
        [("file_hash", "min"), ("mtime_ms", "min"), ("size", "min"), ("path", "count")]
    )
    columns = [
        grouped.column(c).to_pylist()
        for c in ("path", "file_hash_min", "mtime_ms_min", "size_min", "path_count")
    ]
    return {
        path: FileState(file_hash, mtime_ms, size, count)
        for path, file_hash, mtime_ms, size, count in zip(*columns, strict=True)
    }


def superseded_in(rows: pa.Table, folders_mode: bool) -> frozenset[str]:
    """Every path some row's document supersedes inside its own boundary (folders_mode: its folder;
    documents/metadata.supersedes_boundary): rows an older version wrote are checked again here, so
    no folder's document hides another's. `rows` has `path` and `supersedes`."""
    naming = rows.filter(pc.not_equal(rows.column("supersedes"), ""))
    sources, targets = (naming.column(c).to_pylist() for c in ("path", "supersedes"))
    return frozenset(
        target
        for source, value in zip(sources, targets, strict=True)
        for target in value.split("\n")
        if target and within(supersedes_boundary(source, folders_mode), target)
    )


def aliases_in(rows: pa.Table) -> dict[str, list[str]]:
    """Each document's aliases, from its first chunk's row (`rows`: `path` and `aliases`, chunk 0)."""
    paths, aliases = (rows.column(c).to_pylist() for c in ("path", "aliases"))
    return {path: [a for a in value.split("\n") if a] for path, value in zip(paths, aliases, strict=True)}
