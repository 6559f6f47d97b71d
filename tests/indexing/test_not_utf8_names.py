"""A Markdown file whose name is not UTF-8 (docs/security.md#tenants): one failed entry of the sync
report, never a sync that fails, over real LanceDB and real files named with raw bytes."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.indexing import watcher as watcher_module
from ragdown.indexing.listing import list_markdown_files, markdown_listing
from ragdown.indexing.sync import NOT_UTF8, SyncReport
from ragdown.indexing.watcher import FolderWatcher
from tests.conftest import WatchProbe, WriteDoc, wait_for


def write_bytes_path(docs: Path, relative: bytes, text: str) -> bytes:
    path = os.fsencode(docs) + b"/" + relative
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as file:
        file.write(text.encode("utf-8"))
    return path


def failed(report: SyncReport | None) -> set[tuple[str, str]]:
    assert report is not None
    return {(f.path, f.error) for f in report.failed}


def test_the_listing_sets_names_that_are_not_utf8_apart(docs: Path, write: WriteDoc) -> None:
    write("a/good.md", "# Good\n")
    write_bytes_path(docs, b"a/bad\xffname.md", "# Bad\n")
    write_bytes_path(docs, b"a/sub\xfe/inner.md", "# Inner\n")
    write_bytes_path(docs, b"a/picture\xff.png", "not Markdown: never listed")
    listing = markdown_listing(docs)
    assert list(listing.files) == ["a/good.md"]
    assert sorted(listing.not_utf8) == ["a/bad\udcffname.md", "a/sub\udcfe/inner.md"]
    assert list(list_markdown_files(docs)) == ["a/good.md"]


def test_a_bad_name_is_one_failed_entry_and_everything_else_indexes(
    docs: Path, write: WriteDoc, make_engine: Callable[..., Engine]
) -> None:
    write("a/good.md", "# Good\n\nThe quokka runbook.\n")
    write("b/plan.md", "# Plan\n\nThe platypus checklist.\n")
    bad = write_bytes_path(docs, b"a/bad\xffname.md", "# Bad\n\nThe wombat secret.\n")
    write_bytes_path(docs, b"b\xfc/x.md", "# X\n\nThe wombat folder.\n")
    engine = make_engine()
    report = engine.sync()
    assert failed(report) == {("a/bad\\xffname.md", NOT_UTF8), ("b\\xfc/x.md", NOT_UTF8)}
    assert (report.added, report.chunks) == (2, 2)
    assert set(engine.documents()) == {"a/good.md", "b/plan.md"}
    assert engine.search("quokka runbook", 1)[0].path == "a/good.md"
    assert engine.search("platypus checklist", 1)[0].path == "b/plan.md"
    assert all("wombat" not in hit.text for hit in engine.search("wombat", 5))
    report.model_dump_json()  # every report can be sent as JSON

    # Each later sync says so again; once renamed, the file indexes like any other.
    write("b/new.md", "# New\n\nThe numbat release.\n")
    again = engine.sync()
    assert failed(again) == failed(report)
    assert again.added == 1
    os.rename(bad, os.fsencode(docs) + b"/a/renamed.md")
    renamed = engine.sync()
    assert failed(renamed) == {("b\\xfc/x.md", NOT_UTF8)}
    assert engine.search("wombat secret", 1)[0].path == "a/renamed.md"


def test_the_watcher_syncs_past_a_bad_name(
    docs: Path, write: WriteDoc, make_engine: Callable[..., Engine]
) -> None:
    write("a/good.md", "# Good\n\nThe quokka runbook.\n")
    engine = make_engine(watch=True)
    engine.start()
    assert wait_for(lambda: "a/good.md" in engine.documents(), timeout=30)
    write_bytes_path(docs, b"a/bad\xffname.md", "# Bad\n")
    write("b/plan.md", "# Plan\n\nThe platypus checklist.\n")
    assert wait_for(lambda: "b/plan.md" in engine.documents(), timeout=30)
    assert failed(engine.last_sync) == {("a/bad\\xffname.md", NOT_UTF8)}


def test_a_watch_that_held_watches_again_at_once_after_a_bad_name(
    docs: Path, monkeypatch: pytest.MonkeyPatch, watch_probe: WatchProbe
) -> None:
    """watchfiles fails on an event naming a file that is not UTF-8: the watch starts again rather
    than leave every folder to a sync a minute."""
    monkeypatch.setattr(watcher_module, "WATCH_HELD_S", 0.0)  # every watch so far counts as held
    calls: list[float] = []
    watcher = FolderWatcher(docs, lambda: calls.append(time.monotonic()), debounce_s=0.1)
    watcher.start()
    try:
        assert watch_probe.attached(docs)
        write_bytes_path(docs, b"bad\xffname.md", "# Bad\n")
        assert wait_for(lambda: len(calls) >= 1)  # the sync after the failure
        assert watch_probe.attached(docs)  # the new watch
        seen = len(calls)
        (docs / "good.md").write_text("# Good\n", encoding="utf-8")
        assert wait_for(lambda: len(calls) > seen)
        assert not watcher.polling
    finally:
        watcher.stop()
