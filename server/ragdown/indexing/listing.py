"""Which files of a folder are indexed: Markdown, outside dot-folders and node_modules, never via symlinks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import is_markdown, is_skipped_entry, is_utf8


@dataclass(frozen=True)
class FileStat:
    mtime_ms: float
    size: float


@dataclass(frozen=True)
class Listing:
    """What a walk of the folder found: the files to index by `/` path, and the Markdown files whose
    path is not UTF-8 (as found on disk, surrogate-escaped), which no index row can hold: the sync
    reports each as failed, and nothing else ever sees them (docs/security.md#tenants)."""

    files: dict[str, FileStat] = field(default_factory=dict)
    not_utf8: list[str] = field(default_factory=list)


def markdown_listing(root: Path, *, folders_only: bool = False) -> Listing:
    """Root-relative `/` paths of every indexable file, with the stat the sync compares.

    The walk opens each folder from the one above without following a symlink (documents/files.py),
    so a folder swapped for a symlink mid-walk is left out rather than followed.
    `folders_only`: the root holds folders (`serve`); Markdown loose at its top level belongs to no
    folder and is listed by the web API but never indexed."""
    found = Listing()
    for parts, info in files.walk_files(Root(root), is_skipped_entry):
        if (folders_only and len(parts) == 1) or not is_markdown(parts[-1]):
            continue
        path = "/".join(parts)
        if is_utf8(path):
            found.files[path] = FileStat(info.st_mtime_ns / 1e6, float(info.st_size))
        else:
            found.not_utf8.append(path)
    return found


def list_markdown_files(root: Path, *, folders_only: bool = False) -> dict[str, FileStat]:
    """The files to index (`markdown_listing`), leaving out those whose path is not UTF-8."""
    return markdown_listing(root, folders_only=folders_only).files
