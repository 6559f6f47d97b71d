"""Issue 26 item 2: one folder's agent cannot stall another folder (docs/security.md#tenants).

Through the real server: team A writes documents made to make parsers backtrack (a heading brace
followed by 200,000 spaces, `[a](` and `[` repeated) while its other calls hold every slot it may
take; team B's recall is admitted and answers meanwhile, and team A's documents are indexed once
its turn comes. No timing is asserted: what is compared is who was admitted while whom waited.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from ragdown.serving.admission import Admission
from ragdown.settings import ServerSettings
from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served, call_tool, serve

SIZE = 200_000
PATHOLOGICAL = {
    "brace.md": "# x {" + " " * SIZE + "y\n",
    "links.md": "# Links\n\n" + "[a](" * (SIZE // 4) + "\n",
    "brackets.md": "# Brackets\n\n" + "[" * SIZE + "\n",
}
HANG_GUARD_S = 120  # not a measure: the old parsers took hours on these, this only ends the test


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def make_teams(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """A server over two MCP folders, team A's and team B's, with the given admission settings."""
    docs = tmp_path / "docs"
    for team in ("teama", "teamb"):
        (docs / team).mkdir(parents=True)
        (docs / team / ".ragdown.json").write_text(json.dumps({"title": team, "mcp": True}))
        (docs / team / "note.md").write_text(f"# Note\n\nThe {team} note about restores.\n")
    (docs / "teama" / "index.md").write_text("# Index\n\nSee [[brace]], [[links]] and [[brackets]].\n")
    (docs / "teamb" / "restore.md").write_text("# Restore\n\nHow we restore the database after an outage.\n")
    started: list[Iterator[Served]] = []

    def make(*, max_concurrent: int, max_queue: int) -> Served:
        settings = ServerSettings(
            token=TOKEN,
            admin_token=ADMIN_TOKEN,
            watch=False,
            max_concurrent=max_concurrent,
            max_queue=max_queue,
        )
        started.append(serve(docs, tmp_path / "data", settings))
        return next(started[-1])

    yield make
    for generator in started:
        next(generator, None)


class HeldSlots:
    """`count` calls of `folder` holding admission slots (a folder's slow calls) until released."""

    def __init__(self, admission: Admission, folder: str, count: int) -> None:
        self.release = threading.Event()
        entered = threading.Barrier(count + 1)

        def hold() -> None:
            with admission.slot(folder):
                entered.wait(30)
                self.release.wait(HANG_GUARD_S)

        self.threads = [threading.Thread(target=hold) for _ in range(count)]
        for thread in self.threads:
            thread.start()
        entered.wait(30)

    def done(self) -> None:
        self.release.set()
        for thread in self.threads:
            thread.join(30)


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        await anyio.sleep(0.02)


@pytest.mark.anyio
async def test_another_folders_recall_answers_while_one_folder_writes_pathological_documents(
    make_teams: Callable[..., Served],
) -> None:
    served = make_teams(max_concurrent=4, max_queue=32)
    admission = served.app.mcp.admission
    team_a, team_b = served.url + "/mcp/teama", served.url + "/mcp/teamb"
    held = HeldSlots(admission, "teama", admission.per_folder)  # team A's slow calls: all it may run
    try:
        assert admission.running("teama") == admission.per_folder < admission.active
        with anyio.fail_after(HANG_GUARD_S):
            writes = [
                asyncio.create_task(call_tool(team_a, TOKEN, "ragdown_write", {"path": name, "text": text}))
                for name, text in PATHOLOGICAL.items()
            ]
            await until(lambda: admission.queued == len(writes), "team A's writes waiting for a slot")

            answer = await call_tool(team_b, TOKEN, "ragdown_recall", {"query": "restore the database"})

            assert "restore.md" in answer  # team B was answered...
            assert admission.queued == len(writes)  # ...while all of team A's writes still waited,
            assert not any(write.done() for write in writes)  # none of them run, none refused
            assert admission.running("teama") == admission.per_folder
    finally:
        held.done()
    with anyio.fail_after(HANG_GUARD_S):
        written = await asyncio.gather(*writes)
    assert all(text.startswith("created") for text in written), written
    # Indexed, and the views that parse the whole folder answer too.
    listed = await call_tool(team_a, TOKEN, "ragdown_list", {})
    assert all(name in listed for name in PATHOLOGICAL), listed
    with anyio.fail_after(HANG_GUARD_S):
        backlinks = await call_tool(team_a, TOKEN, "ragdown_backlinks", {"path": "links.md"})
    assert "index.md" in backlinks
    with served.admin() as admin:
        shown = admin.get("/api/doc", params={"path": "teama/brace.md"})
    assert shown.status_code == 200, shown.text


@pytest.mark.anyio
async def test_one_folders_calls_cannot_fill_the_waiting_line(make_teams: Callable[..., Served]) -> None:
    """One slot, a line of four: team A's calls take at most half the line; the next is refused
    while team B's call still gets in line, and is answered once the slot frees."""
    served = make_teams(max_concurrent=1, max_queue=4)
    admission = served.app.mcp.admission
    team_a, team_b = served.url + "/mcp/teama", served.url + "/mcp/teamb"
    recall = {"query": "note about restores"}
    with anyio.fail_after(HANG_GUARD_S):
        held = HeldSlots(admission, "teama", 1)
        try:
            queued_a = [
                asyncio.create_task(call_tool(team_a, TOKEN, "ragdown_recall", recall)) for _ in range(2)
            ]
            await until(lambda: admission.queued == 2, "team A's two calls in line")
            refused = await call_tool(team_a, TOKEN, "ragdown_recall", recall)
            queued_b = asyncio.create_task(call_tool(team_b, TOKEN, "ragdown_recall", recall))
            await until(lambda: admission.queued == 3, "team B's call in line")
        finally:
            held.done()
        answers = await asyncio.gather(*queued_a, queued_b)
    assert "overloaded" in refused
    assert all("note.md" in answer for answer in answers), answers
    assert "teamb note" in answers[-1]
