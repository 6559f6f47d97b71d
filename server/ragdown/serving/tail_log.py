"""`ragdown tail-log`: the query log on stdout, the way `tail -F` follows it (a Kubernetes sidecar
runs it so the log reaches the cluster's log collector).

`QueryLog` rotates by renaming the file to `<name>.1` and starting a new one. The follower keeps the
old file open, so the lines written just before a rotation are read through that handle before the
new file is started; a line is printed only once its newline has been read.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import BinaryIO, TextIO

log = logging.getLogger(__name__)

CHUNK = 1 << 20


def _identity(handle: BinaryIO) -> tuple[int, int]:
    stat = os.fstat(handle.fileno())
    return stat.st_dev, stat.st_ino


def _open(path: Path) -> BinaryIO | None:
    try:
        return open(path, "rb", buffering=0)  # kept open across polls
    except FileNotFoundError:
        return None


class Follower:
    """One poll at a time, so the rotation logic can be driven step by step (`follow` loops over it)."""

    def __init__(self, path: Path, out: TextIO, *, from_start: bool = True) -> None:
        self.path = path
        self.rotated = path.with_name(path.name + ".1")
        self.out = out
        self._from_start = from_start
        self._current: BinaryIO | None = None
        # The `.1` file as it was when the current file was opened. Holding it open pins its inode,
        # so a file created later cannot reuse the number and be mistaken for it.
        self._prior: BinaryIO | None = None
        self._pending = b""
        self._skip_to_newline = False

    def poll(self) -> None:
        """Print every complete line that is readable now, following a rotation if one happened."""
        lines: list[bytes] = []
        try:
            self._poll(lines)
        finally:
            if lines:
                self.out.write(b"".join(lines).decode("utf-8", errors="replace"))
                self.out.flush()

    def close(self) -> None:
        for handle in (self._current, self._prior):
            if handle is not None:
                handle.close()
        self._current = self._prior = None

    def _poll(self, lines: list[bytes]) -> None:
        if self._current is None and not self._open_first():
            return
        assert self._current is not None
        self._drain(self._current, lines)
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return  # between the rename and the new file, or deleted: keep the old handle, wait
        if (stat.st_dev, stat.st_ino) == _identity(self._current):
            if stat.st_size < self._current.tell():  # truncated in place: its old content is gone
                self._current.seek(0)
                self._drop_pending("truncated")
            return
        self._switch(lines)

    def _open_first(self) -> bool:
        self._current = _open(self.path)
        # Only a file that exists when following starts is skipped; one that appears later is new.
        at_end, self._from_start = not self._from_start, True
        if self._current is None:
            return False
        self._prior = _open(self.rotated)
        if at_end:
            size = self._current.seek(0, os.SEEK_END)
            if size:
                # Starting at the end of a line that is still being written would print its tail.
                self._current.seek(size - 1)
                self._skip_to_newline = self._current.read(1) != b"\n"
        return True

    def _switch(self, lines: list[bytes]) -> None:
        """The path names another file now: finish the old one, then start the new one from its start."""
        assert self._current is not None
        new = _open(self.path)
        if new is None:
            return  # gone again; the next poll looks once more
        # Lines appended to the old file up to the moment the new one existed are read here.
        self._drain(self._current, lines)
        self._drop_pending("rotated")
        rotated = _open(self.rotated)
        if rotated is not None:
            # Two rotations between polls: the file in the middle is `.1` now, neither the old
            # file, the new one nor the `.1` seen before. (A third rotation would have deleted it.)
            seen = {_identity(self._current), _identity(new)}
            if self._prior is not None:
                seen.add(_identity(self._prior))
            if _identity(rotated) not in seen:
                self._drain(rotated, lines)
                self._drop_pending("rotated")
        self.close()
        self._current, self._prior = new, rotated
        self._drain(new, lines)

    def _drain(self, handle: BinaryIO, lines: list[bytes]) -> None:
        while chunk := handle.read(CHUNK):
            data = self._pending + chunk
            if self._skip_to_newline:
                newline = data.find(b"\n")
                if newline < 0:
                    self._pending = b""
                    continue
                data = data[newline + 1 :]
                self._skip_to_newline = False
            end = data.rfind(b"\n") + 1
            if end:
                lines.append(data[:end])
            self._pending = data[end:]

    def _drop_pending(self, why: str) -> None:
        # Only a crashed or failed write leaves half a line (QueryLog writes each line at once);
        # nothing will complete it, and printing it would hand the collector broken JSON.
        if self._pending:
            log.warning("dropped %d bytes of an unfinished line (file %s)", len(self._pending), why)
        self._pending = b""
        self._skip_to_newline = False


def follow(
    path: Path, out: TextIO, *, stop: threading.Event, poll_s: float = 0.2, from_start: bool = True
) -> None:
    """Print every complete line of `path` to `out` until `stop` is set, across rotations, deletion and
    a file that does not exist yet. `from_start=False` skips what the file holds when it is first opened."""
    follower = Follower(path, out, from_start=from_start)
    try:
        while not stop.is_set():
            follower.poll()
            stop.wait(poll_s)
        follower.poll()  # what was written before the stop still goes out
    finally:
        follower.close()


def main(path: Path) -> int:
    """Follow `path` onto stdout until SIGTERM or SIGINT; 0 on a clean stop."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # Event.set takes a lock the interrupted main thread may hold inside Event.wait, so it is
        # set from another thread rather than from the handler itself.
        threading.Thread(target=stop.set, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if isinstance(sys.stdout, io.TextIOWrapper):
        # The lines are UTF-8 JSON (non-ASCII kept); pass them through whatever the locale says.
        sys.stdout.reconfigure(encoding="utf-8", errors="replace")
    follow(path, sys.stdout, stop=stop)
    return 0
