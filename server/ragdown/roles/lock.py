"""The primary's lock (docs/design.md#processes-and-roles): the process holding `<data_dir>/primary.lock`
is the primary and binds `<data_dir>/primary.sock`; the others are readers.

An exclusive `flock` is released by the kernel however its holder dies (SIGKILL included), so a
crashed primary never leaves a lock behind, and only the holder ever removes or binds the socket.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ragdown.modes import make_private_dir

LOCK_NAME = "primary.lock"
SOCKET_NAME = "primary.sock"


class PrimaryLock:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_NAME
        self.socket_path = data_dir / SOCKET_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; True when this process is now the primary."""
        if self._fd is not None:
            return True
        make_private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        # A socket file left by a dead primary is stale: only the lock holder may remove it.
        self.socket_path.unlink(missing_ok=True)
        return True

    def release(self) -> None:
        if self._fd is not None:
            self.socket_path.unlink(missing_ok=True)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
