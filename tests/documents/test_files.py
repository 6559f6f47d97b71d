"""The physical half of the path rule and linearizable writes (documents/files.py), and the
docs/documents.md#hashes hash
rules (documents/hashes.py): files opened one folder at a time, never through a symlink; writes that
appear whole; one writer of a file at a time across threads and processes."""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ragdown.documents import files
from ragdown.documents.files import DELETE, Root
from ragdown.documents.hashes import file_hash, hash_matches, short_hash
from ragdown.documents.paths import is_skipped_entry
from ragdown.errors import Code, NotAFileError, NotAFolderError, Refusal

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


def test_a_refusal_reads_as_its_message_and_survives_pickling() -> None:
    refusal = Refusal(409, "x was changed on disk since it was opened", Code.CHANGED)
    assert str(refusal) == refusal.message == "x was changed on disk since it was opened"
    copy = pickle.loads(pickle.dumps(refusal))
    assert (copy.status, copy.message, copy.code) == (409, refusal.message, "changed")
    assert Refusal(404, "no such document: a.md").code is None


@pytest.fixture
def root(tmp_path: Path) -> Root:
    (tmp_path / "docs" / "ops").mkdir(parents=True)
    (tmp_path / "docs" / "ops" / "pg.md").write_bytes(DATA)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_bytes(b"secret")
    return Root.at(tmp_path / "docs")


def test_write_file_replaces_keeps_the_mode_and_leaves_no_temp(root: Root) -> None:
    path = root.path / "ops" / "pg.md"
    path.chmod(0o640)
    files.write_file(root, ("ops", "pg.md"), b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(path.parent) == ["pg.md"]


def test_a_failed_rename_leaves_the_file_and_no_temp(root: Root, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="rename failed"):
        files.write_file(root, ("ops", "pg.md"), b"new")
    assert (root.path / "ops" / "pg.md").read_bytes() == DATA
    assert os.listdir(root.path / "ops") == ["pg.md"]


def test_create_file_never_overwrites_and_makes_its_folders(root: Root) -> None:
    assert files.create_file(root, ("new", "deeper", "a.md"), b"first") is True
    assert files.create_file(root, ("new", "deeper", "a.md"), b"second") is False
    assert (root.path / "new" / "deeper" / "a.md").read_bytes() == b"first"
    assert os.listdir(root.path / "new" / "deeper") == ["a.md"]


def test_create_file_with_a_mode_gets_exactly_it(root: Root) -> None:
    files.create_file(root, ("a.md",), b"x", mode=0o604)
    assert stat.S_IMODE((root.path / "a.md").stat().st_mode) == 0o604


def test_a_create_that_fails_mid_write_leaves_nothing(root: Root, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        files.create_file(root, ("ops", "a.md"), b"data")
    assert os.listdir(root.path / "ops") == ["pg.md"]


@pytest.mark.parametrize("where", ["first", "middle"])
def test_no_symlink_is_followed_at_any_level(root: Root, tmp_path: Path, where: str) -> None:
    if where == "first":
        (root.path / "link").symlink_to(tmp_path / "outside")
        parts: tuple[str, ...] = ("link", "secret.md")
    else:
        (root.path / "ops" / "link").symlink_to(tmp_path / "outside")
        parts = ("ops", "link", "secret.md")
    for call in (
        lambda: files.read_file(root, parts),
        lambda: files.lstat(root, parts),
        lambda: files.write_file(root, parts, b"overwritten"),
        lambda: files.create_file(root, (*parts[:-1], "new.md"), b"new"),
        lambda: files.update(root, parts, lambda _data: DELETE),
        lambda: files.scan(root, parts[:-1]),
    ):
        with pytest.raises(NotAFolderError, match="a folder on the path is a file or a symlink"):
            call()
    assert os.listdir(tmp_path / "outside") == ["secret.md"]
    assert (tmp_path / "outside" / "secret.md").read_bytes() == b"secret"


def test_a_root_below_the_trusted_base_is_walked_too(root: Root, tmp_path: Path) -> None:
    (root.path / "ops" / "link").symlink_to(tmp_path / "outside")
    scope = root.child("ops", "link")
    with pytest.raises(NotAFolderError):
        files.read_file(scope, ("secret.md",))
    assert files.is_dir(scope) is False
    assert files.is_dir(root.child("ops")) is True


def test_a_symlink_or_a_device_is_no_file_to_read(root: Root, tmp_path: Path) -> None:
    (root.path / "ops" / "secret.md").symlink_to(tmp_path / "outside" / "secret.md")
    (root.path / "ops" / "null.md").symlink_to("/dev/null")
    os.mkfifo(root.path / "ops" / "fifo.md")
    for name in ("secret.md", "null.md", "fifo.md", "missing.md"):
        assert files.read_file(root, ("ops", name)) is None
    with pytest.raises(NotAFileError):
        files.write_file(root, ("ops", "secret.md"), b"x")
    assert (tmp_path / "outside" / "secret.md").read_bytes() == b"secret"


def test_walk_files_lists_regular_files_only_and_skips_what_it_is_told(root: Root, tmp_path: Path) -> None:
    (root.path / "ops" / ".hidden").mkdir()
    (root.path / "ops" / ".hidden" / "x.md").write_text("x")
    (root.path / "ops" / "link").symlink_to(tmp_path / "outside")
    (root.path / "ops" / "file-link.md").symlink_to(tmp_path / "outside" / "secret.md")
    found = [parts for parts, _ in files.walk_files(root, lambda name: name.startswith("."))]
    assert found == [("ops", "pg.md")]


def test_update_refuses_and_then_writes_nothing(root: Root) -> None:
    def refuse(_data: bytes | None) -> bytes:
        raise Refusal(409, "no")

    with pytest.raises(Refusal):
        files.update(root, ("ops", "pg.md"), refuse)
    with pytest.raises(Refusal):
        files.update(root, ("new", "a.md"), refuse)
    assert (root.path / "ops" / "pg.md").read_bytes() == DATA
    assert not (root.path / "new").exists()


def test_update_creates_replaces_and_deletes(root: Root) -> None:
    made = files.update(root, ("n", "a.md"), lambda data: b"one" if data is None else data + b"+")
    assert (made.before, made.after) == (None, b"one")
    again = files.update(root, ("n", "a.md"), lambda data: b"one" if data is None else data + b"+")
    assert (again.before, again.after) == (b"one", b"one+")
    gone = files.update(root, ("n", "a.md"), lambda _data: DELETE)
    assert (gone.before, gone.after) == (b"one+", None)
    assert os.listdir(root.path / "n") == []


def test_threads_appending_through_update_lose_nothing(root: Root) -> None:
    def append(marker: bytes) -> None:
        files.update(root, ("ops", "pg.md"), lambda data: (data or b"") + marker + b"\n")

    threads = [threading.Thread(target=append, args=(f"line {i}".encode(),)) for i in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = (root.path / "ops" / "pg.md").read_bytes().splitlines()
    assert sorted(lines[1:]) == sorted(f"line {i}".encode() for i in range(40))


APPENDER = """
import sys
from ragdown.documents import files
from ragdown.documents.files import Root
root, tag, count = Root.at(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(count):
    files.update(root, ("ops", "pg.md"), lambda data: data + f"{tag} {i}\\n".encode())
"""


def test_processes_appending_through_update_lose_nothing(root: Root) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(root.path), tag, "60"])
        for tag in ("a", "b", "c")
    ]
    assert [proc.wait(timeout=120) for proc in procs] == [0, 0, 0]
    lines = (root.path / "ops" / "pg.md").read_bytes().decode().splitlines()
    assert sorted(lines[1:]) == sorted(f"{tag} {i}" for tag in "abc" for i in range(60))


HOLDER = """
import sys
from ragdown.documents import files
from ragdown.documents.files import Root
root = Root.at(sys.argv[1])
files.update(root, ("ops", "pg.md"), lambda data: data + b"waiter\\n")
"""


def _blocked_flocks() -> int:
    return sum(" -> " in line and "FLOCK" in line for line in Path("/proc/locks").read_text().splitlines())


def test_a_writer_that_waited_on_a_replaced_file_starts_again_on_the_new_one(root: Root) -> None:
    """Another process replaces the file (a new inode) while this one waits for the old one's lock:
    the waiter must see the new version, not write over it from the old."""
    with files.locked(root, ("ops", "pg.md")) as held:
        assert held.data == DATA
        assert held.parent is not None
        waiter = subprocess.Popen([sys.executable, "-c", HOLDER, str(root.path)])
        deadline = time.monotonic() + 60
        while _blocked_flocks() == 0 and waiter.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # until the waiter is parked on the old file's lock
        files._replace(held.parent, held.name, DATA + b"replaced\n", None)
    assert waiter.wait(timeout=60) == 0
    assert (root.path / "ops" / "pg.md").read_bytes() == DATA + b"replaced\nwaiter\n"


def test_stale_temporary_files_are_swept(root: Root) -> None:
    temp = root.path / "ops" / f"{files.TEMP_PREFIX}abc{files.TEMP_SUFFIX}"
    fresh = root.path / "ops" / f"{files.TEMP_PREFIX}def{files.TEMP_SUFFIX}"
    temp.write_bytes(b"half")
    fresh.write_bytes(b"in flight")
    os.utime(temp, (time.time() - 7200, time.time() - 7200))
    assert files.remove_stale_temps(root, is_skipped_entry) == 1
    assert sorted(os.listdir(root.path / "ops")) == sorted([fresh.name, "pg.md"])


def test_a_tree_deeper_than_any_path_is_walked_without_recursion_and_cut(root: Root) -> None:
    """A person (or a moved folder) can make a tree far deeper than a path may name: walking it must
    neither overflow the stack nor follow it all the way down."""
    deep = root.path.joinpath("ops", *(["d"] * 600))
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_text("# Bottom\n")
    shallow = root.path / "ops" / "d" / "top.md"
    shallow.write_text("# Top\n")
    (deep / f"{files.TEMP_PREFIX}old{files.TEMP_SUFFIX}").write_text("x")
    found = ["/".join(parts) for parts, _ in files.walk_files(root, is_skipped_entry)]
    assert "ops/d/top.md" in found
    assert "ops/pg.md" in found
    assert not any(path.endswith("bottom.md") for path in found)
    assert max(path.count("/") for path in found) < files.MAX_WALK_DEPTH
    assert files.remove_stale_temps(root, is_skipped_entry) == 0  # too deep to reach, and no crash


def test_writes_racing_a_recursive_delete_end_in_an_answer_not_a_crash(root: Root) -> None:
    """Files created in a folder while it is deleted: each write lands (maybe in a folder made anew)
    or is refused, and each delete removes everything or says to delete again."""
    errors: list[BaseException] = []

    def writer(tag: str) -> None:
        for n in range(60):
            try:
                files.update(root, ("race", "sub", f"{tag}-{n}.md"), lambda _data: b"x")
            except Refusal:
                pass
            except BaseException as error:
                errors.append(error)

    def deleter() -> None:
        for _ in range(60):
            try:
                if files.is_dir(root, ("race",)):
                    files.remove_tree(root, ("race",))
            except Refusal:
                pass
            except BaseException as error:
                errors.append(error)

    threads = [threading.Thread(target=writer, args=(t,)) for t in "abc"] + [threading.Thread(target=deleter)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
