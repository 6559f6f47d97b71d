"""The reads of documents every front end makes (docs/design.md#engine), the same on an `Engine` and
on a `SnapshotEngine` that answers from the search snapshot: each is handed to the `reader`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the catalog only once a document is read: a one-shot search never needs it
    from ragdown.catalog import DocEntry, DocRead
    from ragdown.engine.reader import DocumentReader
    from ragdown.folders.scope import Scope


class DocumentCalls:
    """The list, one read and the counts, by way of `reader`."""

    reader: DocumentReader

    def documents(self) -> dict[str, DocEntry]:
        return self.reader.documents()

    def read(self, scope: Scope, path: str, start_line: int | None, end_line: int | None) -> DocRead:
        return self.reader.read(scope, path, start_line, end_line)

    def totals(self) -> tuple[int, int]:
        return self.reader.totals()

    def folder_counts(self) -> dict[str, tuple[int, int]]:
        return self.reader.folder_counts()
