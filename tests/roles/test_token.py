"""The data dir's own internal token (`ragdown.roles.token`): made once by a primary, owner-only,
kept across restarts and read by readers; never written through a planted symlink; and racing
makers end with one token on disk."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
from pathlib import Path

from ragdown.roles.token import TOKEN_FILE, local_token


def test_a_reader_finds_none_and_makes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert local_token(data, create=False) is None
    assert not data.exists()


def test_a_primary_makes_an_owner_only_random_token_once(tmp_path: Path) -> None:
    data = tmp_path / "data" / "nested"
    made = local_token(data, create=True)
    assert made is not None
    assert re.fullmatch(r"[0-9a-f]{64}", made)
    path = data / TOKEN_FILE
    assert path.read_text(encoding="ascii") == made
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert local_token(data, create=True) == made  # kept across restarts
    assert local_token(data, create=False) == made  # and what readers send
    assert local_token(tmp_path / "other", create=True) != made


def test_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        local_token(tmp_path, create=True)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / TOKEN_FILE).stat().st_mode) == 0o600


def test_a_token_set_by_hand_is_read_without_its_whitespace(tmp_path: Path) -> None:
    (tmp_path / TOKEN_FILE).write_text("  shared-by-hand\n", encoding="ascii")
    assert local_token(tmp_path, create=False) == "shared-by-hand"
    assert local_token(tmp_path, create=True) == "shared-by-hand"
    assert (tmp_path / TOKEN_FILE).read_text(encoding="ascii") == "  shared-by-hand\n"


def test_an_empty_file_is_no_token_for_a_reader(tmp_path: Path) -> None:
    """An empty file (left by an older release killed mid-write) is no token; a reader asks again later."""
    (tmp_path / TOKEN_FILE).touch()
    assert local_token(tmp_path, create=False) is None


def test_an_empty_file_does_not_leave_a_primary_without_a_token(tmp_path: Path) -> None:
    (tmp_path / TOKEN_FILE).touch()
    assert local_token(tmp_path, create=True)


def test_a_planted_symlink_is_never_written_through(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    target = tmp_path / "elsewhere" / "stolen"
    target.parent.mkdir()
    (data / TOKEN_FILE).symlink_to(target)  # dangling: reading finds no token, creating must not follow
    with contextlib.suppress(OSError):
        local_token(data, create=True)
    assert not target.exists()


def test_racing_makers_leave_one_token_that_every_answer_matches(tmp_path: Path) -> None:
    """Threads stand in for primaries starting at once: an exclusive link lets exactly one token in,
    and no one ever answers with a token other than the one on disk. A reader that comes before the
    winner's link finds no token, never an empty one."""
    makers, readers = 8, 4
    data = tmp_path / "data"
    start = threading.Barrier(makers + readers)
    answers: list[tuple[str, str | None]] = []

    def run(create: bool) -> None:
        start.wait()
        answers.append(("maker" if create else "reader", local_token(data, create=create)))

    threads = [threading.Thread(target=run, args=(i < makers,)) for i in range(makers + readers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    on_disk = (data / TOKEN_FILE).read_text(encoding="ascii")
    assert re.fullmatch(r"[0-9a-f]{64}", on_disk)
    assert {token for _, token in answers} <= {on_disk, None}
    assert [token for kind, token in answers if kind == "maker"] == [on_disk] * makers
    assert local_token(data, create=False) == on_disk
