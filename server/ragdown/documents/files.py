"""Every file the server opens inside the docs dir, opened one directory at a time (docs/security.md).

This is the physical half of the path rule (the lexical half is `paths.check_path`). Each directory
on the way is opened relative to the one before with `O_NOFOLLOW | O_DIRECTORY`, so a symlink at any
level — even one swapped in a moment ago — ends the walk instead of leading out of the folder; the
last name is then read, created, renamed or removed relative to its parent's descriptor. Only the
`Root.base` (the docs dir, resolved once at start) is trusted as a path.

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
import shutil
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ragdown.documents.paths import MAX_DEPTH, NOT_A_FOLDER, shown
from ragdown.errors import ConflictError, NotAFileError, NotAFolderError
from ragdown.modes import PRIVATE_DIR, PRIVATE_FILE, PRIVATE_UMASK, documents_umask

log = logging.getLogger(__name__)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# Temporary files: a dot name, so neither the indexer nor the watcher ever looks at one.
TEMP_PREFIX = ".ragdown-"
TEMP_SUFFIX = ".tmp"
# How often a change starts again when the file or its folder changed hands under it.
UPDATE_ATTEMPTS = 20
# How deep a walk of the tree goes: a scope and a path inside it, each at most MAX_DEPTH names.
MAX_WALK_DEPTH = 2 * MAX_DEPTH + 2
# Errors of a link(2) the filesystem does not offer (some FUSE and SMB mounts): create in place.
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS})


@dataclass(frozen=True)
class Root:
    """Where a caller's paths start: a trusted directory and the parts below it (a folder, a subfolder
    scope), which are walked like any other path. `private`: what is created below it is 0600/0700."""

    base: Path
    parts: tuple[str, ...] = ()
    private: bool = False

    @classmethod
    def at(cls, path: Path | str | Root) -> Root:
        """A root at `path`, trusted as it resolves now (the CLI's folder, a test's tmp dir)."""
        return path if isinstance(path, Root) else cls(Path(os.path.realpath(path)))

    def child(self, *parts: str) -> Root:
        return Root(self.base, (*self.parts, *parts), self.private)

    def file_mode(self, mode: int | None) -> int | None:
        """The exact mode a file created below gets: `mode`, 0600 below a private root, else None
        (what the umask gives, `_write_new`)."""
        return PRIVATE_FILE if mode is None and self.private else mode

    def dir_mode(self) -> int:
        """The mode a folder created below gets."""
        return PRIVATE_DIR if self.private else 0o777 & ~documents_umask()

    @property
    def path(self) -> Path:
        return self.base.joinpath(*self.parts)


class Delete:
    """What an `update` change returns to remove the file."""


DELETE: Final = Delete()
Change = Callable[[bytes | None], "bytes | Delete | None"]


def _one_name(name: str) -> str:
    # Callers pass parts that passed check_path or are constants; this guards against a slip.
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"not a single name: {name!r}")
    return name


def _made_with(fd: int, wanted: int) -> None:
    """Give a file or folder just made the permission bits `wanted` when the umask left it the
    owner's only (another thread's index write held it at 077); its other bits (setgid) stay."""
    current = stat.S_IMODE(os.fstat(fd).st_mode)
    if current & 0o777 != wanted and current & 0o777 == wanted & ~PRIVATE_UMASK:
        with contextlib.suppress(OSError):  # a filesystem with fixed modes
            os.fchmod(fd, (current & ~0o777) | wanted)


def _make_dir(parent: int, name: str, mode: int) -> bool:
    """Make the folder `name` with `mode`; False when the name is taken."""
    try:
        os.mkdir(name, mode, dir_fd=parent)
    except FileExistsError:
        return False
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:  # swapped or removed at once: whoever opens it next finds out
        return True
    try:
        _made_with(fd, mode)
    finally:
        os.close(fd)
    return True


def _not_a_folder(display: str) -> NotAFolderError:
    return NotAFolderError(f"{NOT_A_FOLDER}: {shown(display)}")


def _open_dirs(root: Root, parts: Sequence[str], *, create: bool = False, display: str = "") -> int:
    """A descriptor of `root/parts`, every directory opened from the one before without following a
    symlink; with `create`, missing ones are made. FileNotFoundError when one is missing."""
    fd = os.open(root.base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in (*root.parts, *parts):
            try:
                following = os.open(_one_name(name), _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                _make_dir(fd, name, root.dir_mode())  # or made by someone else meanwhile: fine
                following = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _not_a_folder(display or "/".join(parts)) from None
                raise
            os.close(fd)
            fd = following
        return fd
    except BaseException:
        os.close(fd)
        raise


@contextlib.contextmanager
def directory(
    root: Root, parts: Sequence[str] = (), *, create: bool = False, display: str = ""
) -> Iterator[int]:
    """`_open_dirs` as a context: the descriptor is closed on the way out."""
    fd = _open_dirs(root, parts, create=create, display=display)
    try:
        yield fd
    finally:
        os.close(fd)


def _lstat_at(parent: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def lstat(root: Root, parts: Sequence[str], *, display: str = "") -> os.stat_result | None:
    """The entry itself (a symlink is reported as one), or None when it or a folder above is missing."""
    *dirs, name = parts
    try:
        with directory(root, dirs, display=display) as parent:
            return _lstat_at(parent, _one_name(name))
    except FileNotFoundError:
        return None


def is_dir(root: Root, parts: Sequence[str] = ()) -> bool:
    """Whether `root/parts` is a real directory reached without a symlink."""
    try:
        with directory(root, parts):
            return True
    except (FileNotFoundError, NotAFolderError):
        return False


def _open_regular(parent: int, name: str) -> int | None:
    """A descriptor of the regular file `name`, or None when there is none; a device or FIFO is never
    opened (stat first), and a file replaced between the stat and the open is looked at again."""
    for _attempt in range(100):
        before = _lstat_at(parent, name)
        if before is None:
            return None
        if not stat.S_ISREG(before.st_mode):
            raise NotAFileError("not a file")
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            continue  # removed meanwhile
        except OSError as error:
            if error.errno == errno.ELOOP:
                continue  # swapped for a symlink meanwhile: the next stat says so
            raise
        if os.path.samestat(before, os.fstat(fd)):
            return fd
        os.close(fd)  # replaced by a rename meanwhile
    raise NotAFileError("not a file")  # it keeps changing under us: not something to write


def _read_all(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def read_file(root: Root, parts: Sequence[str], *, display: str = "") -> bytes | None:
    """The bytes of the regular file `root/parts`; None when it is missing or not a regular file."""
    *dirs, name = parts
    try:
        with directory(root, dirs, display=display) as parent:
            fd = _open_regular(parent, _one_name(name))
    except (FileNotFoundError, NotAFileError):
        return None
    if fd is None:
        return None
    try:
        return _read_all(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Entry:
    name: str
    is_dir: bool
    is_file: bool
    stat: os.stat_result | None


def scan(root: Root, parts: Sequence[str] = ()) -> list[Entry]:
    """The entries of a directory, none followed: a symlink is neither a folder nor a file here."""
    with directory(root, parts) as fd:
        found = []
        for entry in os.scandir(fd):
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            found.append(Entry(entry.name, stat.S_ISDIR(info.st_mode), stat.S_ISREG(info.st_mode), info))
        return sorted(found, key=lambda e: e.name)


def walk_files(
    root: Root, skip: Callable[[str], bool], *, parts: Sequence[str] = ()
) -> Iterator[tuple[tuple[str, ...], os.stat_result]]:
    """Every regular file below `root/parts` (its parts below root, and its stat), never through a
    symlink, passing over the names `skip` says to; depth first, names in order. A folder that
    vanishes or turns into a symlink while being walked is left out, and so is anything deeper than
    any path a client can name (MAX_WALK_DEPTH): the walk keeps its own stack, so no tree is too
    deep for it."""
    stack: list[tuple[tuple[str, ...], Iterator[Entry]]] = []

    def enter(prefix: tuple[str, ...]) -> None:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError, NotAFolderError, PermissionError):
            stack.append((prefix, iter(scan(root, prefix))))

    enter(tuple(parts))
    while stack:
        prefix, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
        elif skip(entry.name):
            continue
        elif entry.is_dir:
            if len(root.parts) + len(prefix) < MAX_WALK_DEPTH:
                enter((*prefix, entry.name))
            else:
                log.warning("not walking below %s: deeper than any path names", "/".join(prefix))
        elif entry.is_file and entry.stat is not None:
            yield (*prefix, entry.name), entry.stat


def _fsync_dir(fd: int) -> None:
    # So the rename itself survives a crash; not every filesystem can sync a directory.
    with contextlib.suppress(OSError):
        os.fsync(fd)


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
                _made_with(fd, default)
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
    _fsync_dir(parent)


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
    _fsync_dir(parent)
    return True


def _create_in_place(parent: int, name: str, data: bytes, mode: int | None) -> bool:
    try:
        _write_new(parent, name, data, mode)
    except FileExistsError:
        return False
    _fsync_dir(parent)
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
    _one_name(name)
    while True:
        try:
            parent = _open_dirs(root, dirs, display=display)
        except FileNotFoundError:
            yield Held(None, name, None)
            return
        try:
            with _stripe(parent, name):
                try:
                    fd = _open_regular(parent, name)
                except NotAFileError:
                    raise NotAFileError(f"not a file: {shown(display or '/'.join(parts))}") from None
                if fd is None:
                    yield Held(parent, name, None)
                    return
                try:
                    _flock(fd)
                    now = _lstat_at(parent, name)
                    if now is None or not os.path.samestat(now, os.fstat(fd)):
                        continue  # replaced or removed while we waited: look again
                    yield Held(parent, name, _read_all(fd))
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
                        _fsync_dir(held.parent)
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
    info = _lstat_at(parent, name)
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
        _fsync_dir(held.parent)
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
        return _create(parent, _one_name(name), data, root.file_mode(mode))


def make_dir(root: Root, parts: Sequence[str]) -> bool:
    """Make the directory `root/parts` (its parent must exist); False when the name is taken."""
    *dirs, name = parts
    with directory(root, dirs) as parent:
        if not _make_dir(parent, _one_name(name), root.dir_mode()):
            return False
        _fsync_dir(parent)
        return True


def remove_tree(root: Root, parts: Sequence[str]) -> None:
    """Remove the directory `root/parts` and everything in it, following no symlink inside; a file
    written into it meanwhile goes too (a few tries), else a 409 says what is left."""
    *dirs, name = parts
    with directory(root, dirs) as parent:
        info = _lstat_at(parent, _one_name(name))
        if info is None or not stat.S_ISDIR(info.st_mode):
            raise NotAFolderError(f"{NOT_A_FOLDER}: {shown('/'.join(parts))}")
        for _attempt in range(UPDATE_ATTEMPTS):
            try:
                shutil.rmtree(name, dir_fd=parent)
                break
            except OSError as error:  # a file written or removed in it meanwhile
                if error.errno not in (errno.ENOTEMPTY, errno.ENOENT):
                    raise
                if _lstat_at(parent, name) is None:
                    break
        else:
            raise ConflictError(
                f"{shown('/'.join(parts))} was written to while it was deleted: delete it again"
            )
        _fsync_dir(parent)


def remove_empty_dir(root: Root, parts: Sequence[str]) -> None:
    *dirs, name = parts
    with directory(root, dirs) as parent:
        os.rmdir(_one_name(name), dir_fd=parent)
        _fsync_dir(parent)


def rename(root: Root, source: Sequence[str], target: Sequence[str], *, display: str = "") -> None:
    """Rename `source` to `target` (both below `root`), making the target's missing folders."""
    *source_dirs, source_name = source
    *target_dirs, target_name = target
    with (
        directory(root, source_dirs, display=display) as source_parent,
        directory(root, target_dirs, create=True, display=display) as target_parent,
    ):
        os.rename(
            _one_name(source_name),
            _one_name(target_name),
            src_dir_fd=source_parent,
            dst_dir_fd=target_parent,
        )
        _fsync_dir(target_parent)
        _fsync_dir(source_parent)


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
