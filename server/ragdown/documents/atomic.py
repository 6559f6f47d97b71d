"""Writing files so a reader sees the old contents or the new, never half; and the content hash (§5.2)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import uuid
from pathlib import Path

from ragdown.documents.errors import Refusal

SHORT_HASH_CHARS = 12


def file_hash(data: bytes) -> str:
    """SHA-256 hex of a file's bytes: what a read returns and a base_hash is checked against."""
    return hashlib.sha256(data).hexdigest()


def short_hash(full_hash: str) -> str:
    """The hash as tools show it."""
    return full_hash[:SHORT_HASH_CHARS]


def hash_matches(base_hash: str, full_hash: str) -> bool:
    """Whether `base_hash` names the version `full_hash` is of: the short form or the whole hash.

    Fewer than 12 characters never match: a short prefix could name another version by chance.
    """
    return len(base_hash) >= SHORT_HASH_CHARS and full_hash.startswith(base_hash)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def _fsync_dir(directory: Path) -> None:
    # So the rename itself survives a crash; not every filesystem lets a directory be opened.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write beside `path` and rename over it, keeping an existing file's permission bits.

    The temp file's dot name keeps the indexer and the watcher off it; it is removed on failure.
    """
    path = Path(path)
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    temp = path.parent / f".{uuid.uuid4().hex}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # the umask narrowed the mode given to open
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    _fsync_dir(path.parent)


def create_new(path: Path, data: bytes, mode: int | None = None) -> bool:
    """Create `path` with `data` only if nothing is there; False when something already is.

    With `mode`, the file gets exactly those permission bits (a move keeping a document's), and is
    owner-only until then; without, the umask's. A file that fails mid-write is removed again, so
    no half-written document is left behind.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else 0o600)
    except FileExistsError:
        return False
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # exact bits, whatever the umask
            _write_all(fd, data)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        raise
    _fsync_dir(path.parent)
    return True


def create_exclusive(
    path: Path, data: bytes, display_path: str | None = None, mode: int | None = None
) -> None:
    """`create_new`, refused with 409 `already exists: <p>` when the name is taken, even by a racer."""
    if not create_new(path, data, mode):
        raise Refusal(409, f"already exists: {display_path or path}")
