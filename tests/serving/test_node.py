"""A `ragdown serve` process's role on its data dir (serving/node.py), the parts that need no second
process: which role it takes, and a reader's forwarded writes. The roles between real processes
(takeover, a reader's writes, its index on object storage) are tests/serving/test_roles.py's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragdown.engine import Engine
from ragdown.roles.client import PrimaryClient
from ragdown.serving.auth import CALLER
from ragdown.serving.node import Forwarder, Node
from ragdown.settings import ServerSettings


@pytest.fixture
def nodes(docs: Path, data_dir: Path) -> Iterator[Callable[[str], Node]]:
    made: list[Node] = []

    def make(role: str) -> Node:
        made.append(Node(docs, data_dir, ServerSettings.model_validate({"role": role, "watch": False})))
        return made[-1]

    yield make
    for node in made:
        node.close()


def test_the_role_is_the_settings_or_in_auto_mode_whoever_holds_the_lock(
    nodes: Callable[[str], Node],
) -> None:
    assert nodes("primary").is_primary()
    assert not nodes("reader").is_primary()
    first, second = nodes("auto"), nodes("auto")
    assert first.is_primary()
    assert not second.is_primary()  # one data dir, one primary
    first.close()
    assert second.is_primary()  # the lock came free: the next try takes it


def test_a_reader_sends_writes_to_the_primary_and_looks_at_the_index_after_one_succeeds(
    make_engine: Callable[..., Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine()
    looked: list[bool] = []
    monkeypatch.setattr(engine, "see_latest", lambda: looked.append(True))
    client = PrimaryClient("http://127.0.0.1:9", lambda: None)  # never called: `tool` stands in
    sent: list[tuple[Any, ...]] = []
    answers = iter([("wrote ops/a.md", False), ("refused: changed on disk", True)])

    def tool(*args: Any) -> tuple[str, bool]:
        sent.append(args)
        return next(answers)

    monkeypatch.setattr(client, "tool", tool)
    forward = Forwarder(client, engine)
    stamp = CALLER.set("agent token")
    try:
        assert forward("ragdown_write", "ops", "", {"path": "a.md"}) == ("wrote ops/a.md", False)
        assert looked == [True]  # its next search sees the write, not the index of a second ago
        assert forward("ragdown_edit", "ops", "sub", {"path": "a.md"}) == (
            "refused: changed on disk",
            True,
        )
        assert looked == [True]  # a refusal changed nothing to look at
    finally:
        CALLER.reset(stamp)
        client.close()
    assert sent == [
        ("ragdown_write", "ops", "", {"path": "a.md"}, "agent token"),  # stamped with who asked
        ("ragdown_edit", "ops", "sub", {"path": "a.md"}, "agent token"),
    ]
