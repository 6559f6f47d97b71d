"""Atomic and exclusive writes, and the §5.2 hash rules."""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
from pathlib import Path

import pytest

from ragdown.documents.atomic import (
    create_exclusive,
    create_new,
    file_hash,
    hash_matches,
    short_hash,
    write_atomic,
)
from ragdown.documents.errors import Refusal

DATA = b"# Postgres\n"
FULL = hashlib.sha256(DATA).hexdigest()


def test_hash_is_sha256_hex_and_short_is_twelve() -> None:
    assert file_hash(DATA) == FULL
    assert short_hash(FULL) == FULL[:12]


@pytest.mark.parametrize(("base", "ok"), [(FULL, True), (FULL[:12], True), (FULL[:20], True)])
def test_a_base_hash_of_12_or_more_characters_matches(base: str, ok: bool) -> None:
    assert hash_matches(base, FULL) is ok


@pytest.mark.parametrize("base", [FULL[:6], FULL[:11], "", "0" * 64, FULL[:12].upper(), FULL + "0"])
def test_short_or_wrong_base_hashes_do_not_match(base: str) -> None:
    assert not hash_matches(base, FULL)


def test_write_atomic_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"old")
    path.chmod(0o640)
    write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["a.md"]


def test_write_atomic_leaves_the_file_and_no_temp_when_the_rename_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"old")

    def fail(src: object, dst: object) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="rename failed"):
        write_atomic(path, b"new")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["a.md"]


def test_create_exclusive_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    create_exclusive(path, b"first", "notes/a.md")
    with pytest.raises(Refusal) as caught:
        create_exclusive(path, b"second", "notes/a.md")
    assert (caught.value.status, str(caught.value)) == (409, "already exists: notes/a.md")
    assert path.read_bytes() == b"first"
    assert create_new(path, b"third") is False


def test_create_exclusive_removes_a_half_written_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        create_exclusive(tmp_path / "a.md", b"data")
    assert os.listdir(tmp_path) == []


def test_a_refusal_reads_as_its_message_and_survives_pickling() -> None:
    refusal = Refusal(409, "x was changed on disk since it was opened", "changed")
    assert str(refusal) == refusal.message == "x was changed on disk since it was opened"
    copy = pickle.loads(pickle.dumps(refusal))
    assert (copy.status, copy.message, copy.code) == (409, refusal.message, "changed")
    assert Refusal(404, "no such document: a.md").code is None
