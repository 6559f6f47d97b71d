"""Which files of a folder are indexed: Markdown, outside dot-folders and node_modules, never via symlinks."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import is_markdown, is_skipped_entry, is_utf8
from ragdown.errors import NotAFolderError


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
        if not _indexed_name(parts, folders_only):
            continue
        path = "/".join(parts)
        if is_utf8(path):
            found.files[path] = _file_stat(info)
        else:
            found.not_utf8.append(path)
    return found


def _indexed_name(parts: list[str] | tuple[str, ...], folders_only: bool) -> bool:
    """A Markdown file, inside a folder when the root holds folders (`markdown_listing`)."""
    return not (folders_only and len(parts) == 1) and is_markdown(parts[-1])


def _file_stat(info: os.stat_result) -> FileStat:
    return FileStat(info.st_mtime_ns / 1e6, float(info.st_size))


def list_markdown_files(root: Path, *, folders_only: bool = False) -> dict[str, FileStat]:
    """The files to index (`markdown_listing`), leaving out those whose path is not UTF-8."""
    return markdown_listing(root, folders_only=folders_only).files


def listing_of(root: Path, paths: list[str], *, folders_only: bool = False) -> Listing | None:
    """What `markdown_listing` would list of `paths` alone (root-relative files a write just
    changed), each looked at without following a symlink; a path that is gone, a symlink or not
    indexable is left out. None when one of them is a folder now: the caller walks the whole folder.
    """
    found = Listing()
    for path in paths:
        parts = path.split("/")
        try:
            info = files.lstat(Root(root), parts)
        except NotAFolderError:  # a folder above it is a symlink (or a file): the walk never enters it
            continue
        except OSError:  # cannot be looked at alone: the walk decides
            return None
        if info is not None and stat.S_ISDIR(info.st_mode):
            return None  # a folder moved or made: whatever it holds is to be listed
        if info is None or not stat.S_ISREG(info.st_mode) or not is_utf8(path):
            continue
        if _indexed_name(parts, folders_only) and not any(is_skipped_entry(part) for part in parts):
            found.files[path] = _file_stat(info)
    return found
