"""Whether a folder changed since its index was written, read from the search snapshot alone
(docs/design.md#search-snapshot): a `ragdown index` of an unchanged folder then opens neither
LanceDB nor the model."""

from __future__ import annotations

from pathlib import Path

from ragdown.documents.chunks import CHUNKER_VERSION
from ragdown.indexing.derived import file_states
from ragdown.indexing.listing import markdown_listing
from ragdown.indexing.meta import INDEX_VERSION
from ragdown.indexing.schema import FILE_STATE_COLUMNS
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
    states = file_states(store.persisted.rows.select(FILE_STATE_COLUMNS))
    if states.keys() != listing.files.keys():
        return None
    for path, stat in listing.files.items():
        if (states[path].mtime_ms, states[path].size) != (stat.mtime_ms, stat.size):
            return None
    return len(states)
