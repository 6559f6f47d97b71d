"""Folders made, renamed and removed inside the docs dir, and the temporary files a killed writer left
swept, all through the walk that never follows a symlink (ragdown.documents.walk).
`ragdown.documents.files` is how callers reach them."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import time
from collections.abc import Callable, Sequence

from ragdown.documents.paths import NOT_A_FOLDER, shown
from ragdown.documents.walk import Root, directory, fsync_dir, lstat_at, make_dir_at, one_name, walk_files
from ragdown.errors import ConflictError, NotAFolderError

# Temporary files: a dot name, so neither the indexer nor the watcher ever looks at one.
TEMP_PREFIX = ".ragdown-"
TEMP_SUFFIX = ".tmp"
# How often a change starts again when the file or its folder changed hands under it.
UPDATE_ATTEMPTS = 20


def make_dir(root: Root, parts: Sequence[str]) -> bool:
    """Make the directory `root/parts` (its parent must exist); False when the name is taken."""
    *dirs, name = parts
    with directory(root, dirs) as parent:
        if not make_dir_at(parent, one_name(name), root.dir_mode()):
            return False
        fsync_dir(parent)
        return True


def remove_tree(root: Root, parts: Sequence[str]) -> None:
    """Remove the directory `root/parts` and everything in it, following no symlink inside; a file
    written into it meanwhile goes too (a few tries), else a 409 says what is left."""
    *dirs, name = parts
    with directory(root, dirs) as parent:
        info = lstat_at(parent, one_name(name))
        if info is None or not stat.S_ISDIR(info.st_mode):
            raise NotAFolderError(f"{NOT_A_FOLDER}: {shown('/'.join(parts))}")
        for _attempt in range(UPDATE_ATTEMPTS):
            try:
                shutil.rmtree(name, dir_fd=parent)
                break
            except OSError as error:  # a file written or removed in it meanwhile
                if error.errno not in (errno.ENOTEMPTY, errno.ENOENT):
                    raise
                if lstat_at(parent, name) is None:
                    break
        else:
            raise ConflictError(
                f"{shown('/'.join(parts))} was written to while it was deleted: delete it again"
            )
        fsync_dir(parent)


def remove_empty_dir(root: Root, parts: Sequence[str]) -> None:
    *dirs, name = parts
    with directory(root, dirs) as parent:
        os.rmdir(one_name(name), dir_fd=parent)
        fsync_dir(parent)


def remove_empty_parents(root: Root, dirs: Sequence[str]) -> None:
    """Remove `root/dirs` and then each folder above it, up to `root` and never `root` itself, while
    each is empty: what a delete left behind (docs/web.md#screens). The first that holds anything
    (a document, an attachment, a dot file) or is gone stops it."""
    for end in range(len(dirs), 0, -1):
        try:
            remove_empty_dir(root, dirs[:end])
        except NotAFolderError:  # a symlink or a file took a name on the way meanwhile
            return
        except OSError as error:  # not empty, gone, or not a folder: leave it and what is above
            if error.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT, errno.ENOTDIR):
                return
            raise


def rename(root: Root, source: Sequence[str], target: Sequence[str], *, display: str = "") -> None:
    """Rename `source` to `target` (both below `root`), making the target's missing folders."""
    *source_dirs, source_name = source
    *target_dirs, target_name = target
    with (
        directory(root, source_dirs, display=display) as source_parent,
        directory(root, target_dirs, create=True, display=display) as target_parent,
    ):
        os.rename(
            one_name(source_name),
            one_name(target_name),
            src_dir_fd=source_parent,
            dst_dir_fd=target_parent,
        )
        fsync_dir(target_parent)
        fsync_dir(source_parent)


def is_temp(name: str) -> bool:
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def remove_stale_temps(root: Root, skip: Callable[[str], bool], older_than_s: float = 3600.0) -> int:
    """Remove the temporary files a killed writer left (they are never indexed, only clutter)."""
    removed = 0
    cutoff = time.time() - older_than_s
    for parts, info in walk_files(root, lambda name: skip(name) and not is_temp(name)):
        if is_temp(parts[-1]) and info.st_mtime < cutoff:
            with contextlib.suppress(FileNotFoundError), directory(root, parts[:-1]) as parent:
                os.unlink(parts[-1], dir_fd=parent)
                removed += 1
    return removed
