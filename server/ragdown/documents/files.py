"""Every file the server opens inside the docs dir, opened one directory at a time (docs/security.md),
and the one way a file is changed. Callers use this module for all of it: the walk and reads are
defined in `walk.py`, the folder operations in `tree.py`, the changes here.

A new document or folder gets the mode the umask gives (`modes.documents_umask`), even while the
index's writes hold the process's umask at 077; below a `private` root (the server's own copy of a
folder) everything new is the owner's only (docs/security.md#tenants).

Writes to one file are linearizable (`update`): a stripe lock serialises this process's threads and
flock(2) on the file serialises processes (and threads on NFS, where flock is per process); once the
lock is granted the name is checked to still be that file, so a writer that waited while another
renamed a new version into place starts again on the new version. Every new content goes to a
temporary file first and reaches its name by rename (replace) or link (create), so a reader or a
crash sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from ragdown.documents.paths import shown
from ragdown.documents.tree import (
    TEMP_PREFIX,
    TEMP_SUFFIX,
    UPDATE_ATTEMPTS,
    is_temp,
    make_dir,
    remove_empty_dir,
    remove_empty_parents,
    remove_stale_temps,
    remove_tree,
    rename,
)
from ragdown.documents.walk import (
    MAX_WALK_DEPTH,
    Entry,
    Root,
    directory,
    fsync_dir,
    is_dir,
    lstat,
    lstat_at,
    made_with,
    one_name,
    open_dirs,
    open_regular,
    read_all,
    read_file,
    scan,
    walk_files,
)
from ragdown.errors import ConflictError, NotAFileError
from ragdown.modes import documents_umask

__all__ = [
    "DELETE",
    "MAX_WALK_DEPTH",
    "TEMP_PREFIX",
    "TEMP_SUFFIX",
    "UPDATE_ATTEMPTS",
    "Change",
    "Delete",
    "Entry",
    "Held",
    "Root",
    "Updated",
    "create_file",
    "directory",
    "is_dir",
    "is_temp",
    "locked",
    "lstat",
    "make_dir",
    "move_file",
    "read_file",
    "remove_empty_dir",
    "remove_empty_parents",
    "remove_stale_temps",
    "remove_tree",
    "rename",
    "scan",
    "update",
    "walk_files",
    "write_file",
]

log = logging.getLogger(__name__)

# Errors of a link(2) the filesystem does not offer (some FUSE and SMB mounts): create in place.
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS})


class Delete:
    """What an `update` change returns to remove the file."""


DELETE: Final = Delete()
Change = Callable[[bytes | None], "bytes | Delete | None"]


def _write_new(parent: int, name: str, data: bytes, mode: int | None) -> None:
    """Create `name` exclusively with `data`, synced: the exact `mode`, or the umask's (as it is
    outside the index's writes); removed again if anything fails. FileExistsError when the name is
    taken."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    default = 0o666 & ~documents_umask() if mode is None else 0o600
    fd = os.open(name, flags, default, dir_fd=parent)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # the exact bits, whatever the umask
            else:
                made_with(fd, default)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=parent)
        raise


def _write_temp(parent: int, data: bytes, mode: int | None) -> str:
    """A complete temporary file beside the target; its name."""
    name = f"{TEMP_PREFIX}{uuid.uuid4().hex}{TEMP_SUFFIX}"
    _write_new(parent, name, data, mode)
    return name


def _replace(parent: int, name: str, data: bytes, mode: int | None) -> None:
    temp = _write_temp(parent, data, mode)
    try:
        os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=parent)
        raise
    fsync_dir(parent)


def _create(parent: int, name: str, data: bytes, mode: int | None) -> bool:
    """Create `name` holding `data` only if nothing is there (False then); it appears complete."""
    temp = _write_temp(parent, data, mode)
    try:
        os.link(temp, name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as error:
        if error.errno not in _NO_LINKS:
            raise
        return _create_in_place(parent, name, data, mode)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=parent)
    fsync_dir(parent)
    return True


def _create_in_place(parent: int, name: str, data: bytes, mode: int | None) -> bool:
    try:
        _write_new(parent, name, data, mode)
    except FileExistsError:
        return False
    fsync_dir(parent)
    return True


# Threads of this process: a fixed set of locks, a file's chosen by its parent folder and name.
_STRIPES = [threading.Lock() for _ in range(64)]


def _stripe(parent: int, name: str) -> threading.Lock:
    info = os.fstat(parent)
    return _STRIPES[hash((info.st_dev, info.st_ino, name)) % len(_STRIPES)]


def _flock(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as error:  # a filesystem without locks: the stripe lock still holds in-process
        if error.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise
        log.warning("file locks are not supported here (%s); only this process's writes are ordered", error)


@dataclass
class Held:
    """A file locked for a change: its folder's descriptor and name, and its bytes (None: no file;
    `parent` is None too when a folder on the way is missing)."""

    parent: int | None
    name: str
    data: bytes | None


@contextlib.contextmanager
def locked(root: Root, parts: Sequence[str], *, display: str = "") -> Iterator[Held]:
    """Hold the lock of `root/parts` and read it, for as long as the `with` lasts.

    Once the lock is granted the name is checked to still be the locked file: a writer that waited
    while another renamed a new version into place starts again on that version.
    """
    *dirs, name = parts
    one_name(name)
    while True:
        try:
            parent = open_dirs(root, dirs, display=display)
        except FileNotFoundError:
            yield Held(None, name, None)
            return
        try:
            with _stripe(parent, name):
                try:
                    fd = open_regular(parent, name)
                except NotAFileError:
                    raise NotAFileError(f"not a file: {shown(display or '/'.join(parts))}") from None
                if fd is None:
                    yield Held(parent, name, None)
                    return
                try:
                    _flock(fd)
                    now = lstat_at(parent, name)
                    if now is None or not os.path.samestat(now, os.fstat(fd)):
                        continue  # replaced or removed while we waited: look again
                    yield Held(parent, name, read_all(fd))
                    return
                finally:
                    os.close(fd)  # and with it the lock
        finally:
            os.close(parent)


@dataclass(frozen=True)
class Updated:
    """What an `update` found and left: None for no file."""

    before: bytes | None
    after: bytes | None


def update(
    root: Root,
    parts: Sequence[str],
    change: Change,
    *,
    mode: int | None = None,
    display: str = "",
) -> Updated:
    """Read the file, let `change` decide on what it says, and write that, as one step.

    `change(current)` sees the bytes (None: no file) while the file is locked and returns the new
    bytes, `DELETE`, or None to leave it; it may raise to refuse, and then nothing is written. It is
    called again if a file it meant to create was created by someone else first (it then sees theirs),
    so it must only compute. Missing folders are made for a new file; a new file gets `mode` (or
    `Root.file_mode`'s) and a replaced one keeps its own.
    """
    shown_as = display or "/".join(parts)
    for _attempt in range(UPDATE_ATTEMPTS):
        with locked(root, parts, display=shown_as) as held:
            new = change(held.data)
            if new is None:
                return Updated(held.data, held.data)
            try:
                if held.data is not None:
                    assert held.parent is not None
                    if isinstance(new, Delete):
                        os.unlink(held.name, dir_fd=held.parent)
                        fsync_dir(held.parent)
                        return Updated(held.data, None)
                    _replace(held.parent, held.name, new, _mode_of(held.parent, held.name))
                    return Updated(held.data, new)
                if isinstance(new, Delete):
                    return Updated(None, None)
                if held.parent is not None:
                    created = _create(held.parent, held.name, new, root.file_mode(mode))
                else:
                    *dirs, _name = parts
                    with directory(root, dirs, create=True, display=shown_as) as parent:
                        created = _create(parent, held.name, new, root.file_mode(mode))
            except FileNotFoundError:
                continue  # its folder was removed meanwhile (a recursive delete): decide again
            if created:
                return Updated(None, new)
        # Someone created it first: decide again, on their version.
    raise ConflictError(f"{shown(shown_as)} kept changing while it was written: nothing was written, retry")


def _mode_of(parent: int, name: str) -> int | None:
    info = lstat_at(parent, name)
    return stat.S_IMODE(info.st_mode) if info is not None else None


def move_file(
    root: Root,
    source: Sequence[str],
    target: Sequence[str],
    content: Callable[[bytes], bytes],
    *,
    display: str = "",
) -> bool:
    """Move a file to a new name, its bytes passed through `content` under its lock; the target is
    created exclusively (False when taken, and nothing changes) and keeps the source's mode. A
    missing source raises FileNotFoundError."""
    with locked(root, source, display=display) as held:
        if held.data is None or held.parent is None:
            raise FileNotFoundError("/".join(source))
        mode = _mode_of(held.parent, held.name)
        if not create_file(root, target, content(held.data), mode=mode, display=display):
            return False
        os.unlink(held.name, dir_fd=held.parent)
        fsync_dir(held.parent)
        return True


def write_file(root: Root, parts: Sequence[str], data: bytes, *, mode: int | None = None) -> None:
    """Replace or create `root/parts` with `data`, whatever it held (settings files)."""
    update(root, parts, lambda _current: data, mode=mode)


def create_file(
    root: Root, parts: Sequence[str], data: bytes, *, mode: int | None = None, display: str = ""
) -> bool:
    """Create `root/parts` holding `data`, making missing folders; False when the name is taken."""
    *dirs, name = parts
    with directory(root, dirs, create=True, display=display or "/".join(parts)) as parent:
        return _create(parent, one_name(name), data, root.file_mode(mode))
