"""The walk down a path inside the docs dir, one directory at a time and never through a symlink, and
what is read at its end (docs/security.md). `ragdown.documents.files` is how callers reach it.

This is the physical half of the path rule (the lexical half is `paths.check_path`). Each directory
on the way is opened relative to the one before with `O_NOFOLLOW | O_DIRECTORY`, so a symlink at any
level — even one swapped in a moment ago — ends the walk instead of leading out of the folder; the
last name is then read, created, renamed or removed relative to its parent's descriptor. Only the
`Root.base` (the docs dir, resolved once at start) is trusted as a path.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragdown.documents.paths import MAX_DEPTH, NOT_A_FOLDER, shown
from ragdown.errors import NotAFileError, NotAFolderError
from ragdown.modes import PRIVATE_DIR, PRIVATE_FILE, PRIVATE_UMASK, documents_umask

log = logging.getLogger(__name__)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# How deep a walk of the tree goes: a scope and a path inside it, each at most MAX_DEPTH names.
MAX_WALK_DEPTH = 2 * MAX_DEPTH + 2


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
        (what the umask gives, `files._write_new`)."""
        return PRIVATE_FILE if mode is None and self.private else mode

    def dir_mode(self) -> int:
        """The mode a folder created below gets."""
        return PRIVATE_DIR if self.private else 0o777 & ~documents_umask()

    @property
    def path(self) -> Path:
        return self.base.joinpath(*self.parts)


def one_name(name: str) -> str:
    # Callers pass parts that passed check_path or are constants; this guards against a slip.
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"not a single name: {name!r}")
    return name


def made_with(fd: int, wanted: int) -> None:
    """Give a file or folder just made the permission bits `wanted` when the umask left it the
    owner's only (another thread's index write held it at 077); its other bits (setgid) stay."""
    current = stat.S_IMODE(os.fstat(fd).st_mode)
    if current & 0o777 != wanted and current & 0o777 == wanted & ~PRIVATE_UMASK:
        with contextlib.suppress(OSError):  # a filesystem with fixed modes
            os.fchmod(fd, (current & ~0o777) | wanted)


def make_dir_at(parent: int, name: str, mode: int) -> bool:
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
        made_with(fd, mode)
    finally:
        os.close(fd)
    return True


def _not_a_folder(display: str) -> NotAFolderError:
    return NotAFolderError(f"{NOT_A_FOLDER}: {shown(display)}")


def open_dirs(root: Root, parts: Sequence[str], *, create: bool = False, display: str = "") -> int:
    """A descriptor of `root/parts`, every directory opened from the one before without following a
    symlink; with `create`, missing ones are made. FileNotFoundError when one is missing."""
    fd = os.open(root.base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in (*root.parts, *parts):
            try:
                following = os.open(one_name(name), _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                make_dir_at(fd, name, root.dir_mode())  # or made by someone else meanwhile: fine
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
    """`open_dirs` as a context: the descriptor is closed on the way out."""
    fd = open_dirs(root, parts, create=create, display=display)
    try:
        yield fd
    finally:
        os.close(fd)


def lstat_at(parent: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def lstat(root: Root, parts: Sequence[str], *, display: str = "") -> os.stat_result | None:
    """The entry itself (a symlink is reported as one), or None when it or a folder above is missing."""
    *dirs, name = parts
    try:
        with directory(root, dirs, display=display) as parent:
            return lstat_at(parent, one_name(name))
    except FileNotFoundError:
        return None


def is_dir(root: Root, parts: Sequence[str] = ()) -> bool:
    """Whether `root/parts` is a real directory reached without a symlink."""
    try:
        with directory(root, parts):
            return True
    except (FileNotFoundError, NotAFolderError):
        return False


def open_regular(parent: int, name: str) -> int | None:
    """A descriptor of the regular file `name`, or None when there is none; a device or FIFO is never
    opened (stat first), and a file replaced between the stat and the open is looked at again."""
    for _attempt in range(100):
        before = lstat_at(parent, name)
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


def read_all(fd: int) -> bytes:
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
            fd = open_regular(parent, one_name(name))
    except (FileNotFoundError, NotAFileError):
        return None
    if fd is None:
        return None
    try:
        return read_all(fd)
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


def fsync_dir(fd: int) -> None:
    """Sync a directory, so a rename or removal in it survives a crash; not every filesystem can."""
    with contextlib.suppress(OSError):
        os.fsync(fd)
