"""`ragdown doctor` on the index: there, built with the embedder the settings name, and every file in
it as on disk, with the failed and stale ones named and why (docs/doctor.md)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.doctor.conftest import Server


def test_no_index_fails_and_says_how_to_build_one(server: Server) -> None:
    shutil.rmtree(server.data)
    found = server.doctor()
    assert found.code == 1
    assert found.lines["index"] == (
        f"fail  index: no index at {server.data}; start `ragdown serve`, which indexes every folder"
    )
    folder = server.doctor(str(server.docs / "ops"))
    assert folder.lines["index"].endswith(f"run `ragdown index {server.docs / 'ops'}`")


def test_an_index_built_with_another_embedder_warns(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_EMBEDDER", "openai:text-embedding-3-small")
    found = server.doctor()
    assert found.code == 0
    assert found.lines["index embedder"] == (
        "warn  index embedder: the index was built with hash, and RAGDOWN_EMBEDDER (or Settings) names "
        "openai:text-embedding-3-small; start `ragdown serve`, which indexes every folder to rebuild it with "
        "openai:text-embedding-3-small, or set the embedder back to hash"
    )


def test_files_new_changed_or_gone_since_the_sync_are_named(server: Server) -> None:
    server.write("ops/new.md", "# New\n")
    server.write("ops/failover.md", "# Failover\nPromote the replica, then repoint the app.\n")
    (server.docs / "notes" / "ideas.md").unlink()
    server.write("ops/backups.md", (server.docs / "ops" / "backups.md").read_text())  # touched, same text
    found = server.doctor()
    assert found.code == 0
    assert found.lines["indexed files"] == (
        "warn  indexed files: 3 file(s) differ from the index: "
        "ops/failover.md (changed since the last sync), ops/new.md (new since the last sync), "
        "notes/ideas.md (gone from disk, still indexed); start "
        "`ragdown serve`, which indexes every folder (a running server with watch on catches up by itself)"
    )


def test_a_file_the_index_cannot_hold_fails_with_why(server: Server) -> None:
    with open(os.fsencode(server.docs / "ops") + b"/caf\xe9.md", "w", encoding="utf-8") as handle:
        handle.write("# Caf\n")
    found = server.doctor()
    assert found.code == 1
    assert found.lines["indexed files"] == (
        "fail  indexed files: 1 file(s) cannot be indexed: ops/caf\\xe9.md (the file name is not UTF-8; "
        "rename it); fix what each says; the index keeps its last good copy of each meanwhile"
    )


def test_one_folder_is_checked_like_ragdown_index_folder(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGDOWN_DATA_DIR")
    from tests.conftest import run_cli

    assert run_cli("index", str(server.docs / "ops"), "--embedder", "hash").returncode == 0
    found = server.doctor(str(server.docs / "ops"))
    assert found.lines["indexed files"] == "ok    indexed files: all 2 files are indexed as they are on disk"
    assert found.lines["loose Markdown"] == "ok    loose Markdown: one folder: nothing can be loose"
