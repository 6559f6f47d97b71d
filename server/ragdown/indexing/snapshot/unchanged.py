"""Whether a folder changed since its index was written, read from the search snapshot alone
(docs/design.md#search-snapshot): a `ragdown index` of an unchanged folder then opens neither
LanceDB nor the model."""

from __future__ import annotations

from pathlib import Path

from ragdown.indexing.listing import markdown_listing
from ragdown.indexing.snapshot.store import current_snapshot


def unchanged_files(docs_dir: Path, data_dir: Path, embedder: str | None) -> int | None:
    """How many files the index holds when every file on disk is indexed with the size and time the
    index recorded, none is gone, and the index was built by `embedder` (None: whichever); None
    whenever a sync has anything to look at (or no current snapshot says)."""
    store = current_snapshot(data_dir)
    if store is None or (embedder is not None and embedder != (store.meta.source or store.meta.embedder)):
        return None
    listing = markdown_listing(docs_dir)
    if listing.not_utf8:  # reported by every sync
        return None
    rows = store.persisted.rows.select(["path", "mtime_ms", "size"])
    known = rows.group_by("path", use_threads=False).aggregate([("mtime_ms", "min"), ("size", "min")])
    states: dict[str, tuple[float, float]] = {
        path: (mtime, size)
        for path, mtime, size in zip(*(known.column(c).to_pylist() for c in _STATE), strict=True)
    }
    if states.keys() != listing.files.keys():
        return None
    for path, stat in listing.files.items():
        if states[path] != (stat.mtime_ms, stat.size):
            return None
    return len(states)


_STATE = ("path", "mtime_ms_min", "size_min")
