"""`ragdown stdio`'s engine that loads in the background (serving/deferred.py): the process answers the
handshake at once, and a call made meanwhile waits for the load (tests/serving/test_mcp_stdio.py runs
the real process; these are the waiting and the failing on their own)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from ragdown.engine import Engine
from ragdown.serving.deferred import DeferredEngine


def test_a_call_waits_for_the_load_then_reaches_the_engine(
    make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine()
    started, release = threading.Event(), threading.Event()

    def load(_snapshot: object) -> Engine:
        started.set()
        assert release.wait(30)
        return engine

    deferred = DeferredEngine(load)  # returns while the load runs
    assert started.wait(30)
    found: list[object] = []
    caller = threading.Thread(target=lambda: found.append(deferred.search))
    caller.start()
    caller.join(0.2)  # a call made now does not return before the load has
    assert caller.is_alive()
    release.set()
    caller.join(30)
    assert found == [engine.search]
    closed: list[bool] = []
    monkeypatch.setattr(engine, "close", lambda: closed.append(True))
    deferred.close()
    assert closed == [True]


def test_a_load_that_fails_fails_every_call_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    def load(_snapshot: object) -> Engine:
        raise RuntimeError("no such embedder: nope")

    deferred = DeferredEngine(load)
    with pytest.raises(RuntimeError, match="no such embedder"):
        deferred.search  # noqa: B018 - the attribute is the call
    with pytest.raises(RuntimeError, match="no such embedder"):
        deferred.documents  # noqa: B018
    # logged before the calls were failed
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [
        "the index could not be opened: no such embedder: nope"
    ]
    deferred.close()  # nothing was opened: nothing to close, and no error


def test_a_readers_engine_answers_what_its_snapshot_has_and_opens_the_index_for_the_rest(
    make_engine: Callable[..., Engine],
) -> None:
    """`answers=None` (serving/node.py's reader): every name the early engine has is its answer for
    as long as it stays; the first name it lacks opens the index, which answers from then on."""
    engine = make_engine()

    class Early:
        syncing = False

        def totals(self) -> tuple[int, int]:
            return (7, 70)

    loads: list[object] = []
    stop_calls: list[bool] = []

    def load(snapshot: object) -> Engine:
        loads.append(snapshot)
        return engine

    early = Early()
    deferred: DeferredEngine[Any] = DeferredEngine(
        load, lambda: early, lambda _wake: lambda: stop_calls.append(True), answers=None
    )
    assert deferred.totals() == (7, 70)
    assert deferred.syncing is False
    assert loads == []  # nothing asked for the index yet
    assert deferred.store is engine.store  # a name the snapshot lacks: the index opens for it
    assert loads == [early]
    assert stop_calls == [True]
    assert deferred.totals() == engine.totals()  # the index answers from now on
    deferred.close()
