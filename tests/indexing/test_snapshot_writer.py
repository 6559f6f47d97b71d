"""The primary's snapshot writer (docs/design.md#search-snapshot): one write at a time, each starting
at least `every_s` after the one before, requests made meanwhile collapsed into one write."""

from __future__ import annotations

import threading
from concurrent.futures import TimeoutError as FutureTimeout

import pytest

from ragdown.indexing.snapshot.writer import SnapshotWriter


def test_requests_spread_out_still_collapse_into_one_write_per_interval() -> None:
    """Commits that come one by one, each after the last write finished, must not each write a
    snapshot: that was a full snapshot per write under a steady trickle of small writes."""
    written: list[int] = []
    writer = SnapshotWriter(lambda: written.append(1), every_s=600)
    writer.request().result(timeout=30)  # the first write starts at once
    assert written == [1]
    later = [writer.request() for _ in range(5)]
    with pytest.raises(FutureTimeout):
        later[0].result(timeout=0.3)  # waits for its interval, not started
    assert written == [1]
    assert all(future is later[0] for future in later)  # one write for all five
    writer.wait()  # a closing engine does not wait out the interval
    assert written == [1, 1]


def test_requests_during_a_write_make_exactly_one_more() -> None:
    started, release = threading.Event(), threading.Event()
    written: list[int] = []

    def persist() -> None:
        written.append(1)
        started.set()
        release.wait(30)

    writer = SnapshotWriter(persist, every_s=0.0)
    first = writer.request()
    assert started.wait(30)
    again = [writer.request() for _ in range(4)]
    release.set()
    first.result(timeout=30)
    for future in again:
        future.result(timeout=30)
    assert written == [1, 1]


def test_a_failed_write_is_logged_and_the_next_request_writes_again(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def persist() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")

    writer = SnapshotWriter(persist, every_s=0.0)
    writer.request().result(timeout=30)
    assert "could not write the search snapshot" in caplog.text
    writer.request().result(timeout=30)
    assert calls == [1, 1]
