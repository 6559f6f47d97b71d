"""Which files of a folder are indexed: Markdown, outside dot-folders and node_modules, never via symlinks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import is_markdown, is_skipped_entry


@dataclass(frozen=True)
class FileStat:
    mtime_ms: float
    size: float


def list_markdown_files(root: Path, *, folders_only: bool = False) -> dict[str, FileStat]:
    """Root-relative `/` paths of every indexable file, with the stat the sync compares.

    The walk opens each folder from the one above without following a symlink (documents/files.py),
    so a folder swapped for a symlink mid-walk is left out rather than followed.
    `folders_only`: the root holds folders (`serve`); Markdown loose at its top level belongs to no
    folder and is listed by the web API but never indexed."""
    found: dict[str, FileStat] = {}
    for parts, info in files.walk_files(Root(root), is_skipped_entry):
        if (folders_only and len(parts) == 1) or not is_markdown(parts[-1]):
            continue
        found["/".join(parts)] = FileStat(info.st_mtime_ns / 1e6, float(info.st_size))
    return found
