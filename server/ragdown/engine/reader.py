"""Documents as the index knows them (docs/design.md#engine): the list, one read, counts per folder
and in all. Each list or read waits for a first sync first (`ready`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the catalog is imported at the first list or read: a one-shot search never needs it
    from ragdown.catalog import DocEntry, DocRead
    from ragdown.folders.scope import Scope
    from ragdown.indexing.active import ActiveIndex


class DocumentReader:
    """Reads of the table being written (`index.store`) and of the files under `docs_dir`."""

    def __init__(
        self, index: ActiveIndex, docs_dir: Path, *, ready: Callable[[], None], folders_mode: bool
    ) -> None:
        self.index = index
        self.docs_dir = docs_dir
        self.ready = ready
        self.folders_mode = folders_mode

    def documents(self) -> dict[str, DocEntry]:
        """Every indexed document (catalog.documents), once a new index has had its first sync: a
        list on a fresh start would otherwise say "No documents." of a folder full of them."""
        from ragdown.catalog import documents

        self.ready()
        return documents(self.index.store, self.folders_mode)

    def read(self, scope: Scope, path: str, start_line: int | None, end_line: int | None) -> DocRead:
        """`ragdown_read_doc` in `scope` (catalog.read_document), after the first sync."""
        from ragdown.catalog import read_document

        self.ready()
        return read_document(
            self.docs_dir, self.index.store, scope, path, start_line, end_line, folders_mode=self.folders_mode
        )

    def totals(self) -> tuple[int, int]:
        """Documents and chunks in the whole index."""
        files = self.index.store.files()
        return len(files), sum(state.chunks for state in files.values())

    def folder_counts(self) -> dict[str, tuple[int, int]]:
        """Documents and chunks per top-level folder, kept until the table changes: the operator asks
        for every folder's counts on each resync, and a scan of a large index is not free."""

        def scan() -> dict[str, tuple[int, int]]:
            counts: dict[str, tuple[int, int]] = {}
            for path, state in self.index.store.files().items():
                folder = path.split("/", 1)[0]
                documents, chunks = counts.get(folder, (0, 0))
                counts[folder] = (documents + 1, chunks + state.chunks)
            return counts

        self.index.store.refresh()  # a commit by another process counts too
        return self.index.store.memo("folder_counts", scan)
