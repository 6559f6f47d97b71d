"""Whole-or-nothing writes of the server's own files: the index's meta, the int8 model and its record,
hub downloads and the internal token (docs/design.md#server-files).

Every one goes the same way: a temporary file beside the target, flushed and synced, given its mode,
then renamed over the target (or, `exclusive`, linked to it so an existing file is never replaced),
and the directory synced so the rename survives a crash. Anything that fails before that leaves the
target as it was and no temporary file behind. Documents take their own path (`documents/files.py`):
they are reached through directory descriptors without following symlinks and are locked per file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


class StagedFile:
    """The temporary file of one `atomic_file` block: write to it, read it back at `path`, or
    `discard()` it so the block ends without touching the target."""

    def __init__(self, path: Path, handle: BinaryIO) -> None:
        self.path = path
        self._handle = handle
        self.discarded = False

    def write(self, data: bytes) -> None:
        self._handle.write(data)

    def sync(self) -> None:
        """Flush what was written to disk (before reading the file back at `path`)."""
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def discard(self) -> None:
        self.discarded = True


def sync_dir(directory: Path) -> None:
    # So a rename survives a crash; not every filesystem can sync a directory.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_file(path: Path, *, mode: int = 0o644, exclusive: bool = False) -> Iterator[StagedFile]:
    """A temporary file that becomes `path` when the block ends without an error or a discard.

    With `exclusive` an existing `path` is kept and FileExistsError raised. The parent directory is
    made if missing.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            pending = StagedFile(temp, handle)
            yield pending
            if pending.discarded:
                return
            pending.sync()
        os.chmod(temp, mode)
        if exclusive:
            os.link(temp, path, follow_symlinks=False)
        else:
            os.replace(temp, path)
        sync_dir(path.parent)
    finally:
        temp.unlink(missing_ok=True)


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644, exclusive: bool = False) -> None:
    """Make `path` hold `data`, whole or not at all (see `atomic_file`)."""
    with atomic_file(path, mode=mode, exclusive=exclusive) as pending:
        pending.write(data)
