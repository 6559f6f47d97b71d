"""The data dir is its owner's only, whatever the umask; documents keep the umask's modes
(docs/security.md#tenants), over real LanceDB and real files."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.engine import Engine
from ragdown.folders.scope import Scope
from ragdown.modes import documents_umask, private_files
from ragdown.scoped_changes import Place
from ragdown.scoped_changes import write as write_document
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc

pytestmark = pytest.mark.usefixtures("permissive_umask")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def open_to_others(root: Path) -> list[str]:
    """Entries under `root` (itself included) with any group or other permission bit."""
    return [
        f"{path.relative_to(root.parent)} {oct(mode(path))}"
        for path in [root, *root.rglob("*")]
        if not path.is_symlink() and mode(path) & 0o077
    ]


def test_sync_search_write_and_query_log_leave_nothing_open_to_others(
    docs: Path, data_dir: Path, write: WriteDoc, make_engine: Callable[..., Engine]
) -> None:
    write("ops/plan.md", "# Plan\n\nThe quokka migration plan.\n")
    engine = make_engine(settings=ServerSettings(query_log=True, watch=False))
    engine.sync()
    assert engine.recall("quokka migration", 3)[0].path == "ops/plan.md"
    place = Place(engine, Scope("ops"))
    write_document(
        place,
        "new/notes.md",
        "# Notes\n\nThe numbat.\n",
        base_hash=None,
        append=False,
        heading=None,
        session_id=None,
    )
    assert engine.recall("numbat", 3)[0].path == "ops/new/notes.md"
    assert (data_dir / "query-log.jsonl").exists()
    assert open_to_others(data_dir) == []
    assert (mode(docs / "ops" / "new"), mode(docs / "ops" / "new" / "notes.md")) == (0o755, 0o644)


def test_a_data_dir_an_older_release_left_open_is_closed_at_start(
    data_dir: Path, write: WriteDoc, make_engine: Callable[..., Engine]
) -> None:
    write("ops/plan.md", "# Plan\n\nThe quokka migration plan.\n")
    make_engine().sync()
    for path in [data_dir, *data_dir.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    engine = make_engine()
    assert open_to_others(data_dir) == []
    assert engine.search("quokka migration", 1)[0].path == "ops/plan.md"


def test_documents_made_while_the_index_writes_keep_the_umasks_modes(docs: Path) -> None:
    """The umask is the process's: while another thread's index write holds it at 077, a new
    document and its new folder are made as the umask outside says."""
    assert documents_umask() == 0o022
    holding, release = threading.Event(), threading.Event()

    def index_write() -> None:
        with private_files():
            holding.set()
            release.wait(10)

    writer = threading.Thread(target=index_write)
    writer.start()
    try:
        assert holding.wait(10)
        assert documents_umask() == 0o022
        files.create_file(Root.at(docs), ("made", "deeper", "a.md"), b"# A\n")
        files.write_file(Root.at(docs), ("made", "b.md"), b"# B\n")
        assert files.make_dir(Root.at(docs), ("folder",))
        (docs / "probe").touch()  # anything else made meanwhile is private
    finally:
        release.set()
        writer.join()
    assert mode(docs / "probe") == 0o600
    assert [mode(docs / p) for p in ("made", "made/deeper", "made/deeper/a.md", "made/b.md", "folder")] == [
        0o755,
        0o755,
        0o644,
        0o644,
        0o755,
    ]
    assert os.umask(0o022) == 0o022  # the block gave the umask back


def test_a_private_root_makes_owner_only_files_and_folders(tmp_path: Path) -> None:
    root = Root(tmp_path, private=True)
    files.write_file(root, ("sub", "x.md"), b"x")
    with files.directory(root.child("a"), ("b",), create=True):
        pass
    assert [mode(tmp_path / p) for p in ("sub", "sub/x.md", "a", "a/b")] == [0o700, 0o600, 0o700, 0o700]
