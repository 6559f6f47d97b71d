"""The folder's files beside an index on object storage, so a reader needs no docs volume
(docs/design.md#readers-without-the-folder).

The primary keeps a LanceDB table `files` (under `<index root>/folder`) holding every Markdown file
it indexes and the settings files readers obey (each folder's `.ragdown.json`, the root's
`.ragdown-server.json`): path, bytes and SHA-256. A reader started with no docs dir restores that
table into a private copy under its data dir, and follows it as it changes; everything it reads
(`ragdown_read_doc`, folder settings, hook settings) comes from that copy. Writes still go to the
primary, which writes the real folder.

Every path from the table passes the same path rule as a tool's argument before anything is
written, and the copy is written through `documents/files` (no symlink followed, atomic replace).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from ragdown.bounds import FOLDER_CONFIG, SERVER_CONFIG
from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.hashes import file_hash
from ragdown.documents.paths import check_path, is_skipped_entry, is_utf8
from ragdown.errors import IndexNotReadyError, RagdownError
from ragdown.indexing import store
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.listing import list_markdown_files
from ragdown.indexing.store import sql_in
from ragdown.modes import make_private_dir

log = logging.getLogger(__name__)

COPY_DIR = "folder"
TABLE = "files"
SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("data", pa.large_binary(), nullable=False),
        pa.field("hash", pa.string(), nullable=False),
    ]
)
_PATHS_PER_QUERY = 256


def files_for_readers(docs_dir: Path) -> dict[str, bytes]:
    """Every file a reader needs, by `/` path: the Markdown files and the settings files (none whose
    path is not UTF-8: the table cannot hold it, and the index has no row for it)."""
    root = Root(docs_dir)
    wanted: list[tuple[str, ...]] = [tuple(path.split("/")) for path in list_markdown_files(docs_dir)]
    wanted += [(SERVER_CONFIG,), (FOLDER_CONFIG,)]
    for entry in files.scan(root):
        if entry.is_dir and not is_skipped_entry(entry.name) and is_utf8(entry.name):
            wanted.append((entry.name, FOLDER_CONFIG))
    found: dict[str, bytes] = {}
    for parts in wanted:
        data = files.read_file(root, parts)
        if data is not None:
            found["/".join(parts)] = data
    return found


class FolderCopy:
    """The `files` table of an index on object storage."""

    def __init__(self, location: IndexLocation) -> None:
        assert location.remote, "only an index on object storage keeps a copy of the folder"
        self.location = location
        self._table: Any = None
        self._restored: dict[str, str] = {}  # path -> hash of what the reader's copy holds
        self._restored_version: int | None = None
        self._lock = threading.Lock()

    def _open(self, create: bool) -> Any:
        if self._table is None:
            db = store.connect(self.location, COPY_DIR)
            if TABLE in db.list_tables().tables:
                self._table = db.open_table(TABLE)
            elif create:
                self._table = db.create_table(TABLE, schema=SCHEMA, exist_ok=True)
        return self._table

    def _hashes(self, table: Any) -> dict[str, str]:
        rows = table.search().select(["path", "hash"]).limit(None).to_arrow()
        return dict(zip(rows.column("path").to_pylist(), rows.column("hash").to_pylist(), strict=True))

    # --- the primary ---------------------------------------------------------------------------

    def publish(self, docs_dir: Path) -> int:
        """Bring the table to the folder as it is now; the number of files added, changed or removed."""
        with self._lock:
            table = self._open(create=True)
            held = self._hashes(table)
            now = files_for_readers(docs_dir)
            changed = {p: d for p, d in now.items() if held.get(p) != file_hash(d)}
            gone = sorted(set(held) - set(now))
            stale = sorted(set(changed) & set(held)) + gone
            for start in range(0, len(stale), _PATHS_PER_QUERY):
                table.delete(sql_in("path", stale[start : start + _PATHS_PER_QUERY]))
            if changed:
                paths = sorted(changed)
                table.add(
                    pa.table(
                        {
                            "path": paths,
                            "data": [changed[p] for p in paths],
                            "hash": [file_hash(changed[p]) for p in paths],
                        },
                        schema=SCHEMA,
                    )
                )
            if changed or gone:
                table.optimize(cleanup_older_than=store.KEEP_VERSIONS_FOR)
            return len(changed) + len(gone)

    # --- a reader ------------------------------------------------------------------------------

    def exists(self) -> bool:
        return self._open(create=False) is not None

    def restore(self, target: Path) -> int:
        """Make `target` hold what the table holds (only what changed since the last call is
        written); the number of files written or removed."""
        with self._lock:
            table = self._open(create=False)
            if table is None:
                return 0
            version = int(table.version)
            if version == self._restored_version:
                return 0
            make_private_dir(target)
            root = Root(target, private=True)  # every folder's text, in the data dir: owner-only
            held = self._hashes(table)
            wanted = sorted(p for p, h in held.items() if self._restored.get(p) != h)
            written = 0
            for start in range(0, len(wanted), _PATHS_PER_QUERY):
                batch = wanted[start : start + _PATHS_PER_QUERY]
                rows = table.search().where(sql_in("path", batch)).select(["path", "data"]).limit(None)
                for row in rows.to_arrow().to_pylist():
                    written += self._write(root, row["path"], row["data"])
                    self._restored[row["path"]] = held[row["path"]]
            for path in sorted(set(self._restored) - set(held)):
                self._remove(root, path)
                del self._restored[path]
                written += 1
            self._restored_version = version
            return written

    def _write(self, root: Root, path: str, data: bytes) -> int:
        try:
            parts = copied_parts(path)
        except RagdownError as error:  # never written: the primary would not have copied it
            log.warning("the index names a file the path rule refuses; not copied: %s", error)
            return 0
        with files.directory(root, parts[:-1], create=True):
            pass
        files.write_file(root, parts, data)
        return 1

    def _remove(self, root: Root, path: str) -> None:
        try:
            parts = copied_parts(path)
            with contextlib.suppress(FileNotFoundError), files.directory(root, parts[:-1]) as parent:
                os.unlink(parts[-1], dir_fd=parent)
        except (RagdownError, OSError) as error:
            log.info("could not remove %s from the copy of the folder: %s", path, error)


def copied_parts(path: str) -> tuple[str, ...]:
    """The path rule for a copied file: a tool's rule, except that a settings file's own dot-name
    is allowed as the last name (`.ragdown-server.json` at the root, `<folder>/.ragdown.json`)."""
    *above, name = path.split("/")
    if name == SERVER_CONFIG and not above:
        return (name,)
    if name == FOLDER_CONFIG:
        return (*check_path("/".join(above), markdown_only=False).parts, name) if above else (name,)
    return check_path(path, markdown_only=True).parts


COPY_NAME = "folder"  # the reader's copy: <data_dir>/folder


def restore_for_reader(
    location: IndexLocation, data_dir: Path, stop: threading.Event, wait_s: float = 300.0
) -> Path:
    """A reader with no docs dir: wait for the primary's copy of the folder, restore it under
    `data_dir`, and keep following it (a daemon thread, every refresh bound, until `stop`)."""
    copy = FolderCopy(location)
    target = data_dir / COPY_NAME
    deadline = time.monotonic() + wait_s
    while not copy.exists():
        if time.monotonic() > deadline:
            raise IndexNotReadyError(
                f"no copy of the folder at {location} yet; start the primary server first"
            )
        if stop.wait(0.5):
            break
    copy.restore(target)

    def follow() -> None:
        while not stop.wait(location.refresh.total_seconds()):
            try:
                copy.restore(target)
            except Exception as error:  # the next round tries again; reads meanwhile see the last copy
                log.warning("could not follow the copy of the folder: %s", error)

    threading.Thread(target=follow, name="ragdown-folder-copy", daemon=True).start()
    return target
