"""§6.9 path validation for writes, deletes and downloads, and the §7.5 RAGDOWN_NOTES_DIR rule.

A path is accepted only where the indexer would walk to it: relative, inside the scope, no dot
segment or `node_modules`, and no file or symlink on the way. The indexer does not follow symlinks,
and a write through one could land outside the docs.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ragdown.documents.errors import Refusal

MARKDOWN_RE = re.compile(r"\.(md|markdown|mdx)$", re.IGNORECASE)
_DRIVE_RE = re.compile(r"^[a-z]:", re.IGNORECASE)

RELATIVE_ONLY = "path must be relative to the docs folder"
OUTSIDE = "path is outside the docs folder"
SKIPPED = "path names a folder or file the index skips"
MARKDOWN_ONLY = "only Markdown files (.md, .markdown, .mdx) can be written"
NOT_A_FOLDER = "a folder on the path is a file or a symlink"


def is_skipped_entry(name: str) -> bool:
    """A directory entry the indexer passes over."""
    return name.startswith(".") or name == "node_modules"


def is_indexed_name(name: str) -> bool:
    """One path segment the indexer walks into: not skipped, and no separator or NUL in it."""
    return not is_skipped_entry(name) and not any(c in name for c in "/\\\0")


def is_markdown(name: str) -> bool:
    return MARKDOWN_RE.search(name) is not None


def is_inside(parent: str, child: str) -> bool:
    """`child` is `parent` or below it; both absolute and normalised."""
    return child == parent or child.startswith(parent if parent.endswith("/") else parent + "/")


@dataclass(frozen=True)
class ResolvedPath:
    """The absolute path under the scope's real path, and the normalised scope-relative path."""

    full: Path
    relative: str


def resolve_path(root: Path, relative: str, *, markdown_only: bool, create: bool = False) -> ResolvedPath:
    """Validate `relative` against the scope `root` (§6.9); every refusal is a 400 `<reason>: <path>`.

    With `create`, missing folders on the way are made, each checked after it exists, so a folder
    swapped for a symlink meanwhile is still refused.
    """

    def invalid(reason: str) -> Refusal:
        return Refusal(400, f"{reason}: {relative}")

    posix = relative.replace("\\", "/")
    if not posix or posix.startswith("/") or _DRIVE_RE.match(posix):
        raise invalid(RELATIVE_ONLY)
    segments = [s for s in posixpath.normpath(posix).split("/") if s and s != "."]
    if not segments or ".." in segments:
        raise invalid(OUTSIDE)
    if not all(is_indexed_name(s) for s in segments):
        raise invalid(SKIPPED)
    if markdown_only and not is_markdown(segments[-1]):
        raise invalid(MARKDOWN_ONLY)

    real_root = os.path.realpath(root)
    current = real_root
    for segment in segments[:-1]:
        current = os.path.join(current, segment)
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            if not create:
                break  # nothing further down exists either, so nothing there can be a symlink
            # One made by someone else meanwhile is checked below like any other folder.
            with contextlib.suppress(FileExistsError):
                os.mkdir(current)
            mode = os.lstat(current).st_mode
        if not stat.S_ISDIR(mode):
            raise invalid(NOT_A_FOLDER)
    full = os.path.join(real_root, *segments)
    if not is_inside(real_root, full):
        raise invalid(OUTSIDE)
    return ResolvedPath(Path(full), "/".join(segments))


def validate_path(root: Path, relative: str, *, markdown_only: bool, create: bool = False) -> Path:
    """`resolve_path` for callers that need only the absolute path."""
    return resolve_path(root, relative, markdown_only=markdown_only, create=create).full


def notes_dir(value: str) -> str:
    """RAGDOWN_NOTES_DIR normalised (§7.5): `/`-separated, "" for the folder root.

    Raises ValueError for a path that leaves the folder or names a folder the index skips: a note
    written there would never be found.
    """
    normalised = posixpath.normpath(value.replace("\\", "/"))
    if normalised.startswith("/") or normalised == ".." or normalised.startswith("../"):
        raise ValueError(f"RAGDOWN_NOTES_DIR must be a path inside the folder: {normalised}")
    if normalised == ".":
        return ""
    if not all(is_indexed_name(segment) for segment in normalised.split("/")):
        raise ValueError(f"RAGDOWN_NOTES_DIR names a folder the index skips: {normalised}")
    return normalised
