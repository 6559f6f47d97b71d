"""`ragdown.atomic` (docs/design.md#server-files): the target holds the old bytes or the new ones, never
a part, and no temporary file is left whichever way a block ends."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ragdown.atomic import atomic_file, write_atomic


def leftovers(folder: Path, target: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != target)


def test_a_new_file_gets_its_bytes_and_mode_and_the_folder_is_made(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "meta.json"
    write_atomic(target, b'{"a": 1}\n', mode=0o600)
    assert target.read_bytes() == b'{"a": 1}\n'
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert leftovers(target.parent, "meta.json") == []


def test_a_replace_swaps_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"
    target.write_bytes(b"old" * 1000)
    inode = target.stat().st_ino
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_ino != inode  # a new file renamed over, not the old one truncated


def test_an_error_in_the_block_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"
    target.write_bytes(b"old")

    def write_half() -> None:
        with atomic_file(target) as pending:
            pending.write(b"half of the new")
            raise ValueError("checksum mismatch")

    with pytest.raises(ValueError, match="checksum"):
        write_half()
    assert target.read_bytes() == b"old"
    assert leftovers(tmp_path, "model.onnx") == []


def test_a_discarded_file_can_be_read_first_and_never_becomes_the_target(tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"
    with atomic_file(target) as pending:
        pending.write(b"candidate")
        pending.sync()
        assert pending.path.read_bytes() == b"candidate"  # what a quality check reads
        pending.discard()
    assert not target.exists()
    assert leftovers(tmp_path, "model.onnx") == []


def test_exclusive_keeps_what_is_there(tmp_path: Path) -> None:
    target = tmp_path / "internal.token"
    write_atomic(target, b"first", exclusive=True)
    with pytest.raises(FileExistsError):
        write_atomic(target, b"second", exclusive=True)
    assert target.read_bytes() == b"first"
    assert leftovers(tmp_path, "internal.token") == []


def test_exclusive_never_writes_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    target = tmp_path / "data" / "internal.token"
    target.parent.mkdir()
    target.symlink_to(outside)  # dangling: a create that followed it would make `outside`
    with pytest.raises(FileExistsError):
        write_atomic(target, b"token", exclusive=True)
    assert not outside.exists()
