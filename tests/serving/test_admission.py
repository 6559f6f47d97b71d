"""Bounded work: a burst beyond the slots and the waiting line gets "overloaded", never an unbounded wait."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from ragdown.errors import RETRY_AFTER_S, RETRY_META, OverloadedError
from ragdown.search.hybrid import Hit
from ragdown.serving.admission import Admission
from ragdown.serving.tools import capped
from tests.serving.conftest import TOKEN, Served, text_of


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
    while admission.queued < 1:  # the second call is now waiting in line
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
    make_served: Callable[..., Served], monkeypatch: pytest.MonkeyPatch
) -> None:
    served: Served = make_served(max_concurrent=1, max_queue=1)
    engine = served.engine
    admission = served.app.mcp.admission
    original = engine.recall
    gate = threading.Event()
    running: list[None] = []  # one entry per call that got a slot

    def slow_recall(*args: Any, **kwargs: Any) -> list[Hit]:
        running.append(None)
        gate.wait(5)
        return original(*args, **kwargs)

    monkeypatch.setattr(engine, "recall", slow_recall)
    results: list[CallToolResult] = []

    async def call() -> None:
        async with served.mcp() as client:
            results.append(await client.call_tool("ragdown_recall", {"query": "redis"}))

    async with anyio.create_task_group() as group:
        for _ in range(6):
            group.start_soon(call)
        # Every call has reached admission: running (held by the gate), waiting in line, or refused.
        deadline = time.monotonic() + 30
        while len(running) + admission.queued + len(results) < 6:
            assert time.monotonic() < deadline, (
                f"{len(running)} ran, {admission.queued} wait, {len(results)} done"
            )
            await anyio.sleep(0.02)
        gate.set()
    texts = [text_of(r) for r in results]
    overloaded = [t for t in texts if "overloaded" in t]
    answered = [t for t in texts if t.startswith("[1] ")]
    assert len(overloaded) >= 3
    assert len(answered) >= 1
    assert len(overloaded) + len(answered) == 6


TOOLS_CALL = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "ragdown_recall", "arguments": {"query": "redis"}},
}


@pytest.mark.anyio
async def test_an_overloaded_answer_carries_a_retry_hint_and_the_retry_after_it_succeeds(
    make_served: Callable[..., Served],
) -> None:
    """The hint reaches an MCP client in words and in the result's `_meta`, and its HTTP response
    carries `Retry-After`; once the busy slot is free, the same call made after the hinted wait answers."""
    served: Served = make_served(max_concurrent=1, max_queue=0)
    headers: dict[str, list[str | None]] = {"tools/call": []}

    async def keep(response: httpx2.Response) -> None:
        if json.loads(response.request.content or b"{}").get("method") == "tools/call":
            headers["tools/call"].append(response.headers.get("retry-after"))

    async with (
        httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30, event_hooks={"response": [keep]}
        ) as http,
        Client(streamable_http_client(served.url + "/mcp/ops", http_client=http)) as client,
    ):
        with served.app.mcp.admission.slot():  # a call is running: the one slot is taken, none may wait
            refused = await client.call_tool("ragdown_recall", {"query": "redis"})
        assert refused.is_error
        assert "overloaded" in text_of(refused)
        assert "retry in 1 s" in text_of(refused)
        assert refused.meta is not None
        assert refused.meta[RETRY_META] == RETRY_AFTER_S
        assert headers["tools/call"] == [str(RETRY_AFTER_S)]

        await anyio.sleep(refused.meta[RETRY_META])  # as the hint says
        retried = await client.call_tool("ragdown_recall", {"query": "redis"})
        assert not retried.is_error
        assert text_of(retried).startswith("[1] ")
        assert "Redis" in text_of(retried)
        assert RETRY_META not in (retried.meta or {})
        assert headers["tools/call"] == [str(RETRY_AFTER_S), None]  # the hint was that call's alone


def test_a_plain_json_rpc_client_of_the_handshake_era_gets_the_hint_in_the_body_and_header(
    served_one_slot: Served,
) -> None:
    """Clients that speak the 2025 handshake versions take the SDK's other transport path; the hint
    reaches them the same way."""
    served = served_one_slot
    post = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    with served.http() as http:
        with served.app.mcp.admission.slot():
            refused = http.post("/mcp/ops", json=TOOLS_CALL, headers=post)
        answered = http.post("/mcp/ops", json=TOOLS_CALL, headers=post)
    assert refused.status_code == 200  # a tool's refusal is a result, not a transport error
    assert refused.headers["retry-after"] == str(RETRY_AFTER_S)
    result = refused.json()["result"]
    assert result["isError"] is True
    assert result["_meta"] == {RETRY_META: RETRY_AFTER_S}
    assert "retry in 1 s" in result["content"][0]["text"]
    assert "retry-after" not in answered.headers
    assert answered.json()["result"]["content"][0]["text"].startswith("[1] ")


@pytest.fixture
def served_one_slot(make_served: Callable[..., Served]) -> Served:
    return make_served(max_concurrent=1, max_queue=0)


@pytest.mark.anyio
async def test_calls_waiting_in_line_hold_no_worker_thread(make_served: Callable[..., Served]) -> None:
    """More calls wait than there are worker threads for the server's plain `def` routes and tools
    (AnyIO's default limiter): they wait on the event loop, so /healthz still answers while they
    wait, and once the busy slot frees every one of them is answered."""
    threads = int(anyio.to_thread.current_default_thread_limiter().total_tokens)
    waiting = threads + 8
    # One folder may take half the line (its share: serving/admission.py), so the line is twice as long.
    served: Served = make_served(max_concurrent=1, max_queue=2 * waiting)
    admission = served.app.mcp.admission
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    async with httpx2.AsyncClient(base_url=served.url, headers=headers, timeout=60) as http:
        with admission.slot():  # a call is running: everyone else waits in line
            calls = [asyncio.create_task(http.post("/mcp/ops", json=TOOLS_CALL)) for _ in range(waiting)]
            deadline = time.monotonic() + 30
            while admission.queued < waiting:
                assert time.monotonic() < deadline, f"only {admission.queued} of {waiting} calls got in line"
                await anyio.sleep(0.05)
            health = await http.get("/healthz", timeout=10)
            assert health.status_code == 200
            assert not any(call.done() for call in calls)  # still waiting, none refused
        answers = await asyncio.gather(*calls)
    texts = [a.json()["result"]["content"][0]["text"] for a in answers]
    assert all(t.startswith("[1] ") for t in texts), texts[:3]


# --- fairness between folders (docs/security.md#tenants) --------------------------------------------------


class Holder:
    """A call of `folder` on a thread of its own: waits for a slot, records when it got one, holds
    it until released."""

    def __init__(self, admission: Admission, folder: str, order: list[str]) -> None:
        self.folder = folder
        self.admitted = threading.Event()
        self.release = threading.Event()
        self.refused: OverloadedError | None = None

        def run() -> None:
            try:
                with admission.slot(folder):
                    order.append(folder)
                    self.admitted.set()
                    self.release.wait(60)
            except OverloadedError as error:
                self.refused = error
                self.admitted.set()

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def done(self) -> None:
        self.release.set()
        self.thread.join(30)


def queued_until(admission: Admission, count: int) -> None:
    deadline = time.monotonic() + 30
    while admission.queued < count:
        assert time.monotonic() < deadline, f"only {admission.queued} of {count} calls got in line"
        time.sleep(0.01)


def test_one_folder_cannot_take_every_slot() -> None:
    """Four slots: folder a's fourth call waits although a slot is free; folder b's call takes it."""
    admission = Admission(active=4, waiting=32, wait_s=60)
    order: list[str] = []
    first = [Holder(admission, "a", order) for _ in range(3)]
    for holder in first:
        assert holder.admitted.wait(30)
    fourth = Holder(admission, "a", order)
    queued_until(admission, 1)
    other = Holder(admission, "b", order)
    assert other.admitted.wait(30)
    assert other.refused is None
    assert order == ["a", "a", "a", "b"]  # b ran while a's fourth call waited
    assert admission.queued == 1
    assert not fourth.admitted.is_set()
    first[0].done()
    assert fourth.admitted.wait(30)
    for holder in [*first, fourth, other]:
        holder.done()
    assert order == ["a", "a", "a", "b", "a"]


def test_a_freed_slot_goes_to_the_folder_running_fewest_calls() -> None:
    """Three slots, a and b running; a's calls queued first, then b's, then c's. Each freed slot goes
    to the earliest waiter among the folders running fewest calls, not simply to the first in line."""
    admission = Admission(active=3, waiting=32, wait_s=60)
    order: list[str] = []
    running = [Holder(admission, folder, order) for folder in ("a", "a", "b")]
    for holder in running:
        assert holder.admitted.wait(30)
    waiting = []
    for folder in ("a", "a", "b", "c"):
        waiting.append(Holder(admission, folder, order))
        queued_until(admission, len(waiting))
    running[2].done()  # b leaves: a runs two (its cap), b and c none: b's waiter was first of them
    assert waiting[2].admitted.wait(30)
    running[0].done()  # an a leaves: a runs one, b one, c none: c's turn
    assert waiting[3].admitted.wait(30)
    running[1].done()  # a runs none now: its first waiter
    assert waiting[0].admitted.wait(30)
    assert order == ["a", "a", "b", "b", "c", "a"]
    for holder in [*running, *waiting]:
        holder.done()
    assert order == ["a", "a", "b", "b", "c", "a", "a"]


def test_one_folder_takes_at_most_half_the_line() -> None:
    admission = Admission(active=1, waiting=4, wait_s=60)
    order: list[str] = []
    holder = Holder(admission, "a", order)
    assert holder.admitted.wait(30)
    in_line = [Holder(admission, "a", order) for _ in range(2)]
    queued_until(admission, 2)
    refused = Holder(admission, "a", order)
    assert refused.admitted.wait(30)
    assert refused.refused is not None
    assert "overloaded" in str(refused.refused)
    other = Holder(admission, "b", order)
    queued_until(admission, 3)  # b still gets in line
    for waiter in [holder, *in_line, other]:
        waiter.done()
    assert sorted(order) == ["a", "a", "a", "b"]
    assert admission.queued == 0
    assert admission.running("a") == admission.running("b") == 0


def test_a_docs_dir_served_as_one_folder_keeps_every_slot_and_the_whole_line() -> None:
    """Calls of "" (stdio, or `serve` outside folders mode) have no other tenant to leave room for."""
    admission = Admission(active=2, waiting=2, wait_s=60)
    order: list[str] = []
    running = [Holder(admission, "", order) for _ in range(2)]
    for holder in running:
        assert holder.admitted.wait(30)
    waiting = [Holder(admission, "", order) for _ in range(2)]
    queued_until(admission, 2)  # the whole line, not half of it
    for holder in [*running, *waiting]:
        holder.done()
    assert order == ["", "", "", ""]
    assert all(holder.refused is None for holder in [*running, *waiting])
