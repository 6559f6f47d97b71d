"""The index, opened read-only: there, built with the embedder the settings name, and holding every
file as it is on disk (docs/doctor.md#index)."""

from __future__ import annotations

from dataclasses import dataclass

from ragdown.bounds import DEFAULT_EMBEDDER
from ragdown.doctor.report import Check, fail, first_few, ok, warn
from ragdown.doctor.scan import Scan
from ragdown.doctor.target import Target
from ragdown.errors import RagdownError
from ragdown.indexing.index_location import index_location
from ragdown.indexing.meta import IndexMeta, current_meta, rebuild_reason
from ragdown.indexing.schema import FileState
from ragdown.indexing.store import ChunkStore
from ragdown.indexing.sync import NOT_UTF8

INDEX = "index"
EMBEDDER = "index embedder"
FILES = "indexed files"


def how_to_index(target: Target) -> str:
    if target.folders_mode:
        return "start `ragdown serve`, which indexes every folder"
    return f"run `ragdown index {target.docs_dir}`"


@dataclass(frozen=True)
class IndexState:
    """What was read of the index: its meta, what it holds per file and the table's version (None
    each when there is no index to read), and the line saying so."""

    check: Check
    meta: IndexMeta | None = None
    held: dict[str, FileState] | None = None
    version: int | None = None


def read_index(target: Target) -> IndexState:
    """meta.json and, through a read-only table, what the index holds per file."""
    location = index_location(target.data_dir, target.settings)
    try:
        meta = location.read_meta(fresh=True)
        if meta is None:
            return IndexState(fail(INDEX, f"no index at {location}", how_to_index(target)))
        store = ChunkStore(target.data_dir, meta, writable=False, location=location)
        held = store.files()
        version = int(store.table.version)
    except RagdownError as error:
        found = fail(INDEX, f"the index at {location} cannot be opened: {error}", how_to_index(target))
        return IndexState(found)
    chunks = sum(state.chunks for state in held.values())
    table = f"table {meta.lance_dir} version {version}"
    return IndexState(
        ok(INDEX, f"{location}: {len(held)} files, {chunks} sections, {table}"), meta, held, version
    )


def check_embedder(target: Target, meta: IndexMeta | None) -> Check:
    wanted = target.settings.embedder
    if meta is None:
        return ok(EMBEDDER, f"no index yet; it will be built with {wanted or DEFAULT_EMBEDDER}")
    built = meta.source or meta.embedder
    if wanted and wanted.strip() not in (meta.source, meta.embedder):
        return warn(
            EMBEDDER,
            f"the index was built with {built}, and RAGDOWN_EMBEDDER (or Settings) names {wanted}",
            f"{how_to_index(target)} to rebuild it with {wanted}, or set the embedder back to {built}",
        )
    reason = rebuild_reason(
        meta, current_meta(meta.embedder, meta.dim, source=meta.source, max_chars=meta.max_chars)
    )
    if reason:
        return warn(EMBEDDER, f"the index needs a rebuild: {reason}", how_to_index(target))
    return ok(EMBEDDER, f"built with {built}, as the settings say")


def check_files(target: Target, scan: Scan, held: dict[str, FileState] | None) -> Check:
    """Failed files (fail): names that are not UTF-8, files that cannot be read, and the running
    server's last sync failures. Stale ones (warn): new, changed or removed since the last sync."""
    failed = [f"{path} ({NOT_UTF8})" for path in scan.not_utf8]
    failed += [f"{path} ({why})" for path, why in scan.unreadable]
    if target.last_sync is not None:
        failed += [f"{entry.path} ({entry.error})" for entry in target.last_sync.failed]
    if failed:
        return fail(
            FILES,
            f"{len(failed)} file(s) cannot be indexed: {first_few(sorted(set(failed)))}",
            "fix what each says; the index keeps its last good copy of each meanwhile",
        )
    if held is None:
        return ok(FILES, "no index to compare the files with")
    stale = []
    for path, doc in sorted(scan.docs.items()):
        state = held.get(path)
        if state is None:
            stale.append(f"{path} (new since the last sync)")
        elif state.hash != doc.hash:
            stale.append(f"{path} (changed since the last sync)")
    stale += [f"{path} (gone from disk, still indexed)" for path in sorted(set(held) - set(scan.docs))]
    if stale:
        return warn(
            FILES,
            f"{len(stale)} file(s) differ from the index: {first_few(stale)}",
            f"{how_to_index(target)} (a running server with watch on catches up by itself)",
        )
    return ok(FILES, f"all {len(scan.docs)} files are indexed as they are on disk")
