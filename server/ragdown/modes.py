"""File modes (docs/security.md#tenants): what the server keeps for itself is its owner's only, and
documents keep the modes the umask gives them.

The data dir holds every folder's text (the index, the query log, a reader's copy of the folder), so
it is made 0700 and what the server writes there 0600 or 0700, whatever the umask. LanceDB writes
its files from Rust with the process's umask: `private_files()` sets the umask to 077 around those
writes. The umask belongs to the whole process, so a document created by another thread meanwhile
would get it too: `documents/files.py` therefore gives each new document and folder the mode the
umask outside those writes gives (`documents_umask()`), set explicitly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700

_lock = threading.Lock()
_depth = 0  # private_files() blocks running now, in any thread
_outside = 0o022  # the umask those blocks replaced


def _read_umask() -> int:
    """The process's umask, read without changing it (Linux 4.7+); else by setting it back at once."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    old = os.umask(PRIVATE_UMASK)  # for an instant only stricter, never looser
    os.umask(old)
    return old


def documents_umask() -> int:
    """The umask documents are created with: the process's, as it is outside `private_files()`."""
    with _lock:
        return _outside if _depth else _read_umask()


@contextlib.contextmanager
def private_files() -> Iterator[None]:
    """Everything this process creates meanwhile (LanceDB's files from Rust included) is its owner's
    only: the umask is 077 while any thread is inside such a block."""
    global _depth, _outside
    with _lock:
        if _depth == 0:
            _outside = os.umask(PRIVATE_UMASK)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                os.umask(_outside)


def make_private_dir(path: Path) -> None:
    """Make the directory `path` (and any missing parent) if missing; the one made is 0700."""
    if path.is_dir():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):  # made by another process meanwhile
        os.mkdir(path, PRIVATE_DIR)


def tighten(path: Path) -> None:
    """Take group and other bits off `path` when this user owns it (a symlink is left alone); a
    read-only mount or another user's file is logged and left as it is."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid():
            return
        if stat.S_IMODE(info.st_mode) & PRIVATE_UMASK:
            os.chmod(path, stat.S_IMODE(info.st_mode) & ~PRIVATE_UMASK)
    except FileNotFoundError:
        return
    except OSError as error:
        log.warning("could not make %s owner-only: %s", path, error)


def tighten_tree(path: Path) -> None:
    """`tighten` `path` and everything below it, following no symlink."""
    tighten(path)
    if not path.is_dir() or path.is_symlink():
        return
    for directory, dirs, names in os.walk(path, followlinks=False):
        for name in (*dirs, *names):
            tighten(Path(directory, name))
