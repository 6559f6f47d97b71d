"""Whether a folder changed since its index was written, read from the search snapshot alone
(docs/design.md#search-snapshot): a `ragdown index` of an unchanged folder then opens neither
LanceDB nor the model."""

from __future__ import annotations

from pathlib import Path

from ragdown.documents.chunks import CHUNKER_VERSION
from ragdown.indexing.listing import markdown_listing
from ragdown.indexing.meta import INDEX_VERSION
from ragdown.indexing.snapshot.store import current_snapshot


def unchanged_files(docs_dir: Path, data_dir: Path, embedder: str | None) -> int | None:
    """How many files the index holds when every file on disk is indexed with the size and time the
    index recorded, none is gone, and the index was built by `embedder` (None: whichever) with this
    release's chunker and table layout; None whenever a sync has anything to look at (or no current
    snapshot says)."""
    store = current_snapshot(data_dir)
    if store is None or (embedder is not None and embedder != (store.meta.source or store.meta.embedder)):
        return None
    # A release with another chunker or table layout rebuilds the index, so that is a change too:
    # without this an upgrade's `ragdown index` would report every file unchanged.
    if (store.meta.chunker_version, store.meta.index_version) != (CHUNKER_VERSION, INDEX_VERSION):
        return None
    listing = markdown_listing(docs_dir)
    if listing.not_utf8:  # reported by every sync
        return None
    # Every row of a file records its time and size, so any row stands for the file. Read as plain
    # lists, not grouped in Arrow: a stdio session compares at every start, and a grouping loaded
    # Arrow's query engine and the hash column's pages (~12 MB more held in the session).
    rows = store.persisted.rows
    times, sizes = rows.column("mtime_ms").to_pylist(), rows.column("size").to_pylist()
    indexed = dict(zip(rows.column("path").to_pylist(), zip(times, sizes, strict=True), strict=True))
    if indexed.keys() != listing.files.keys():
        return None
    for path, stat in listing.files.items():
        if indexed[path] != (stat.mtime_ms, stat.size):
            return None
    return len(indexed)
