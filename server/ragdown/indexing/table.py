"""Which `chunks` table is current and where it lives (docs/design.md#meta-and-rebuilds): opened under
the meta it was built with, rebuilt in a directory beside when that meta no longer matches, switched
to by `publish`, and the directories of rebuilds that never switched removed."""

from __future__ import annotations

import logging
import threading
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from ragdown.errors import IndexNotReadyError
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.lance_session import connect
from ragdown.indexing.meta import IndexMeta, rebuild_reason
from ragdown.indexing.schema import TABLE, chunk_schema
from ragdown.modes import make_private_dir, private_files

log = logging.getLogger(__name__)

LANCE_DIR = "lance"
# The rebuild reason of a full re-index: asked for, so it is logged at info, never as a warning.
FULL_REBUILD_ASKED = "a full rebuild was asked for"


class ChunkTable:
    """One `chunks` table under `<data_dir>/lance`, described by `<data_dir>/meta.json`.

    A writable table that finds one built under another meta builds the new one in a directory
    beside it (`building`; the reason is kept in `rebuilt_because`) and `publish()` switches to it
    by rewriting meta.json, so the old index serves until the new one is complete. A read-only table
    opens whatever meta.json names and refuses an index it cannot search.
    """

    def __init__(
        self,
        data_dir: Path,
        meta: IndexMeta,
        *,
        writable: bool,
        fresh: bool,
        location: IndexLocation | None,
        keep_versions_for: timedelta,
    ) -> None:
        """`fresh`: build a new index beside the current one even though it matches (a full rebuild).
        `location`: where the index lives (default: `data_dir` itself). `keep_versions_for`: how long
        a replaced directory or version stays for searches still using it."""
        self.data_dir = data_dir
        self.location = location or IndexLocation(data_dir)
        self.meta = meta
        self.writable = writable
        self.rebuilt_because: str | None = None
        self.keep_versions_for = keep_versions_for
        self.building = False
        self.previous: IndexMeta | None = None
        if writable and not self.location.remote:
            make_private_dir(self.location.data_dir)
        recorded = self.location.read_meta(fresh=True)
        self.lance_dir = recorded.lance_dir if recorded else LANCE_DIR
        self.meta = meta.model_copy(update={"lance_dir": self.lance_dir})
        self.db = self._connect()
        self.table = self._open_table(recorded, fresh=fresh and writable)
        if writable:
            self._remove_leftovers(recorded)

    def _connect(self) -> Any:
        return connect(self.location, self.lance_dir)

    def _open_table(self, recorded: IndexMeta | None, *, fresh: bool = False) -> Any:
        exists = TABLE in self.db.list_tables().tables
        reason = rebuild_reason(recorded, self.meta) if exists else None
        if exists and fresh and reason is None:
            reason = FULL_REBUILD_ASKED
        if not self.writable:
            if not exists:
                raise IndexNotReadyError("the index does not exist yet; start the primary server first")
            if reason:
                raise IndexNotReadyError(
                    f"the index needs a rebuild ({reason}); start the primary server first"
                )
            return self.db.open_table(TABLE)
        if exists and reason is None:
            return self.db.open_table(TABLE)
        if exists:
            # One warning for a rebuild nobody asked for (another model, chunker or layout); none
            # for a full re-index, which the user asked for (docs/design.md#meta-and-rebuilds).
            level = logging.INFO if reason == FULL_REBUILD_ASKED else logging.WARNING
            log.log(level, "rebuilding the index beside the current one: %s", reason)
            self.rebuilt_because = reason
            self.previous = recorded
            self.building = True
            self.lance_dir = f"{LANCE_DIR}-{uuid.uuid4().hex[:8]}"
            self.meta = self.meta.model_copy(update={"lance_dir": self.lance_dir})
            self.db = self._connect()
        from lancedb.index import FTS

        with private_files():  # every folder's text: LanceDB writes it with the process's umask
            table = self.db.create_table(TABLE, schema=chunk_schema(self.meta.dim), exist_ok=False)
            table.create_index("search_text", config=FTS())
        if not self.building:
            self.location.write_meta(self.meta)
        return table

    def publish(self) -> None:
        """Switch to the index built beside the old one: readers follow at their next search; the
        old directory is removed once no search can still be using it."""
        if not self.building:
            return
        old = self.previous.lance_dir if self.previous else None
        self.location.write_meta(self.meta)
        self.building = False
        self.previous = None
        log.info("switched to the rebuilt index (%s)", self.lance_dir)  # its start was the warning
        if old and old != self.lance_dir:
            timer = threading.Timer(self.keep_versions_for.total_seconds(), self._remove_dir, args=(old,))
            timer.daemon = True
            timer.start()

    def _remove_dir(self, name: str) -> None:
        try:
            self.location.remove_dir(name)
        except Exception as error:  # left for the next start's clean-up
            log.warning("could not remove the old index %s: %s", name, error)

    def _remove_leftovers(self, recorded: IndexMeta | None) -> None:
        """Directories of rebuilds that never switched (a crash mid-build) are removed at start."""
        keep = {self.lance_dir, recorded.lance_dir if recorded else LANCE_DIR}
        for name in self.location.table_dirs():
            if name.startswith(f"{LANCE_DIR}-") and name not in keep:
                self._remove_dir(name)
