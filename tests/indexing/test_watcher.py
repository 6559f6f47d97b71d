"""The watcher: which events matter, the debounce, and polling when watching fails."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.indexing.watcher import DEBOUNCE_S, MAX_DELAY_S, POLL_INTERVAL_S, FolderWatcher, wants_sync
from tests.conftest import WatchProbe, wait_for


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("notes/a.md", True),
        ("A.MARKDOWN", True),
        ("page.mdx", True),
        ("renamed-folder", True),
        ("image.png", False),
        (".git/index", False),
        ("notes/.obsidian/workspace.md", False),
        (".draft.md", False),
        ("", True),
    ],
)
def test_which_events_schedule_a_sync(tmp_path: Path, relative: str, expected: bool) -> None:
    assert wants_sync(tmp_path, str(tmp_path / relative) if relative else str(tmp_path)) is expected


def test_events_outside_the_root_are_ignored(tmp_path: Path) -> None:
    assert not wants_sync(tmp_path / "docs", str(tmp_path / "elsewhere.md"))


def test_documented_timings() -> None:
    assert (DEBOUNCE_S, MAX_DELAY_S, POLL_INTERVAL_S) == (0.75, 5.0, 60.0)


def test_a_burst_of_writes_triggers_one_call(docs: Path, watch_probe: WatchProbe) -> None:
    debounce_s = 0.5
    calls: list[float] = []
    watcher = FolderWatcher(docs, lambda: calls.append(time.monotonic()), debounce_s=debounce_s)
    watcher.start()
    try:
        assert watch_probe.attached(docs)
        for i in range(5):
            (docs / f"n{i}.md").write_text(f"note {i}")
            time.sleep(0.05)  # a burst spread over 0.25 s, each write well within the debounce
        assert wait_for(lambda: len(calls) >= 1)
        # Nothing more may come: a write that had a timer of its own would fire within the debounce.
        time.sleep(2 * debounce_s)
        assert len(calls) == 1
        (docs / ".hidden.md").write_text("ignored")
        (docs / "image.png").write_bytes(b"\x89PNG")
        assert wait_for(lambda: watch_probe.saw(".hidden.md", "image.png"))  # the watch did see them
        time.sleep(2 * debounce_s)  # and no call follows them: twice the debounce after they were seen
        assert len(calls) == 1
    finally:
        watcher.stop()


def test_changes_that_never_pause_still_sync_once_the_first_is_max_delay_old(
    docs: Path, watch_probe: WatchProbe
) -> None:
    """An agent writing several times a second restarts the debounce at every write: the watcher
    calls all the same once the first waiting change is `max_delay_s` old, so a person's edit beside
    those writes is indexed while they go on."""
    calls: list[float] = []
    watcher = FolderWatcher(docs, lambda: calls.append(time.monotonic()), debounce_s=0.5, max_delay_s=1.0)
    watcher.start()
    try:
        assert watch_probe.attached(docs)
        for i in range(300):  # each change well within the debounce of the one before
            (docs / "busy.md").write_text(f"note {i}")
            time.sleep(0.1)
            if calls:
                break
        assert calls, "no sync while changes kept coming"
    finally:
        watcher.stop()


def test_an_engine_picks_up_a_new_file(
    make_engine: Callable[..., Engine], docs: Path, watch_probe: WatchProbe
) -> None:
    engine = make_engine()
    engine.sync()
    engine.start_watching()
    assert watch_probe.attached(docs)
    (docs / "fresh.md").write_text("# Fresh\nkestrel ingest pipeline")
    assert wait_for(lambda: "fresh.md" in engine.store.files())
    assert engine.search("kestrel ingest", 1)[0].path == "fresh.md"


def test_watching_a_folder_that_cannot_be_watched_falls_back_to_polling(tmp_path: Path) -> None:
    ticks = threading.Event()
    watcher = FolderWatcher(tmp_path / "missing", ticks.set, poll_interval_s=0.2)
    watcher.start()
    try:
        assert ticks.wait(10)
        assert watcher.polling
    finally:
        watcher.stop()
