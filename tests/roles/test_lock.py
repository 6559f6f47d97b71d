"""The primary's lock (`ragdown.roles.lock`): one holder per data dir, within a process or across
processes; the kernel lets go however the holder dies; and only the holder removes the socket, so a
dead primary's socket is cleared by the next one and never by a reader."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragdown.roles.lock import LOCK_NAME, SOCKET_NAME, PrimaryLock

HOLD = """
import sys
from pathlib import Path
from ragdown.roles.lock import PrimaryLock
lock = PrimaryLock(Path(sys.argv[1]))
print("held" if lock.try_acquire() else "refused", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A data dir with a path short enough to bind a unix socket in (108 bytes at most)."""
    with tempfile.TemporaryDirectory(prefix="rd-lock-") as folder:
        yield Path(folder)


def leave_a_socket(path: Path) -> None:
    """A unix socket file as a dead primary leaves it: bound, then never unlinked."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
    assert stat.S_ISSOCK(path.lstat().st_mode)


def test_the_first_taker_holds_it_and_a_second_does_not(tmp_path: Path) -> None:
    data = tmp_path / "data" / "nested"  # made as needed
    first, second = PrimaryLock(data), PrimaryLock(data)
    assert (first.held, second.held) == (False, False)
    assert first.try_acquire()
    assert first.try_acquire()  # asking again while holding it changes nothing
    assert not second.try_acquire()
    assert (first.held, second.held) == (True, False)
    assert stat.S_IMODE((data / LOCK_NAME).stat().st_mode) == 0o600
    first.release()
    assert not first.held
    assert second.try_acquire()
    second.release()


def test_release_is_safe_to_repeat_and_lets_the_same_lock_take_it_again(tmp_path: Path) -> None:
    lock = PrimaryLock(tmp_path)
    lock.release()  # never held: nothing to do
    assert lock.try_acquire()
    lock.release()
    lock.release()
    assert lock.try_acquire()
    assert not PrimaryLock(tmp_path).try_acquire()
    lock.release()


def test_a_dead_primarys_socket_is_removed_by_the_next_holder(short_dir: Path) -> None:
    leave_a_socket(short_dir / SOCKET_NAME)
    lock = PrimaryLock(short_dir)
    assert lock.try_acquire()
    assert not (short_dir / SOCKET_NAME).exists()
    lock.release()


def test_only_the_holder_ever_removes_the_socket(short_dir: Path) -> None:
    primary = PrimaryLock(short_dir)
    assert primary.try_acquire()
    leave_a_socket(short_dir / SOCKET_NAME)  # the primary binds it once it holds the lock
    reader = PrimaryLock(short_dir)
    assert not reader.try_acquire()
    reader.release()
    assert stat.S_ISSOCK((short_dir / SOCKET_NAME).lstat().st_mode)  # the primary's is left alone
    primary.release()
    assert not (short_dir / SOCKET_NAME).exists()  # the holder clears its own on the way out


def test_a_primary_in_another_process_holds_it_until_it_is_killed(tmp_path: Path) -> None:
    """flock is the kernel's: a SIGKILLed primary leaves no lock behind for anyone to clear."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        reader = PrimaryLock(tmp_path)
        assert not reader.try_acquire()
        holder.kill()
        holder.wait(timeout=30)
        assert reader.try_acquire()
        reader.release()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=30)
        for stream in (holder.stdin, holder.stdout):
            if stream is not None:
                stream.close()


def test_another_process_is_refused_while_this_one_holds_it(tmp_path: Path) -> None:
    lock = PrimaryLock(tmp_path)
    assert lock.try_acquire()
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        other = subprocess.run(
            [sys.executable, "-c", HOLD, str(tmp_path)],
            input="",
            capture_output=True,
            env=env,
            text=True,
            timeout=60,
            check=True,
        )
        assert other.stdout.strip() == "refused"
    finally:
        lock.release()
