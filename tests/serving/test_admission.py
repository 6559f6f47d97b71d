"""Bounded work: a burst beyond the slots and the waiting line gets "overloaded", never an unbounded wait."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from ragdown.serving.admission import Admission, OverloadedError
from ragdown.serving.tools import capped
from tests.serving.conftest import Served


def test_calls_beyond_the_slots_and_the_line_are_refused_at_once() -> None:
    """The third call is refused while the first still holds its slot: had it joined the line, it
    would still be blocked (the hold and the wait both outlast this test's checks)."""
    admission = Admission(active=1, waiting=1, wait_s=120)
    release = threading.Event()
    entered = threading.Event()

    def hold() -> None:
        with admission.slot():
            entered.set()
            release.wait(120)

    def wait_in_line() -> None:
        with admission.slot():
            pass

    holder = threading.Thread(target=hold)
    holder.start()
    assert entered.wait(30)
    waiter = threading.Thread(target=wait_in_line)
    waiter.start()
    deadline = time.monotonic() + 30
    while admission._queued < 1:  # the second call is now waiting in line
        assert time.monotonic() < deadline, "the second call never queued"
        time.sleep(0.01)
    refused: list[BaseException] = []

    def third() -> None:
        try:
            with admission.slot():
                pass
        except OverloadedError as error:
            refused.append(error)

    caller = threading.Thread(target=third)
    caller.start()
    caller.join(timeout=30)
    assert not caller.is_alive()  # answered while the slot is still held: refused, not queued
    assert holder.is_alive()
    assert len(refused) == 1
    assert "overloaded" in str(refused[0])
    release.set()
    holder.join()
    waiter.join()


def test_a_wait_longer_than_allowed_gives_up_as_overloaded() -> None:
    admission = Admission(active=1, waiting=5, wait_s=0.2)
    with admission.slot(), pytest.raises(OverloadedError), admission.slot():
        pass
    with admission.slot():  # the slot is free again afterwards
        pass


def test_a_result_over_the_byte_cap_is_cut_at_a_line_with_a_note() -> None:
    text = "\n".join(f"line {n}" for n in range(1000))
    cut = capped(text, limit=100)
    assert len(cut.split("\n… [cut:")[0].encode()) <= 100
    assert cut.split("\n… [cut:")[0].endswith("line 12")  # line 13 did not fit whole
    assert "start_line/end_line" in cut
    assert capped("short", limit=100) == "short"


@pytest.mark.anyio
async def test_a_burst_beyond_the_queue_gets_overloaded_answers_and_the_rest_succeed(
    make_served: object,
) -> None:
    served: Served = make_served(max_concurrent=1, max_queue=1)  # type: ignore[operator]
    engine = served.engine
    original = engine.recall
    gate = threading.Event()

    def slow_recall(*args: object, **kwargs: object) -> object:
        gate.wait(5)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    engine.recall = slow_recall  # type: ignore[method-assign]
    results: list[object] = []

    async def call() -> None:
        async with served.mcp() as client:
            results.append(await client.call_tool("ragdown_recall", {"query": "redis"}))

    async with anyio.create_task_group() as group:
        for _ in range(6):
            group.start_soon(call)
        await anyio.sleep(1.5)
        gate.set()
    texts = ["".join(getattr(c, "text", "") for c in r.content) for r in results]  # type: ignore[attr-defined]
    overloaded = [t for t in texts if "overloaded" in t]
    answered = [t for t in texts if t.startswith("[1] ")]
    assert len(overloaded) >= 3
    assert len(answered) >= 1
    assert len(overloaded) + len(answered) == 6
