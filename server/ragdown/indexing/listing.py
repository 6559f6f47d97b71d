"""Which files of a folder are indexed: Markdown, outside dot-folders and node_modules, never via symlinks."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ragdown.documents.paths import is_markdown, is_skipped_entry


@dataclass(frozen=True)
class FileStat:
    mtime_ms: float
    size: float


def list_markdown_files(root: Path, *, folders_only: bool = False) -> dict[str, FileStat]:
    """Root-relative `/` paths of every indexable file, with the stat the sync compares.

    `folders_only`: the root holds folders (`serve`); Markdown loose at its top level belongs to no
    folder and is listed by the web API but never indexed."""
    found: dict[str, FileStat] = {}
    pending: list[tuple[str, str]] = [(str(root), "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for entry in entries:
            if is_skipped_entry(entry.name) or entry.is_symlink():
                continue
            relative = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                pending.append((entry.path, relative + "/"))
            elif folders_only and not prefix:
                continue
            elif is_markdown(entry.name) and entry.is_file(follow_symlinks=False):
                try:
                    stat = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                found[relative] = FileStat(stat.st_mtime_ns / 1e6, float(stat.st_size))
    return found
