"""The golden routes (docs/tools.md#golden-routes) over real HTTP: a query's hits with the targets a
mark writes, marks kept in `<folder>/.ragdown-golden.jsonl` as lines `ragdown eval` reads, and the
refusals: a bad body, a target outside the folder, a broken file, a read-only server, a reader."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.evaluation.golden import GOLDEN_NAME, Target, read_golden
from tests.conftest import run_cli
from tests.serving.conftest import Served


def test_marks_grow_the_folders_golden_file(make_served: Callable[..., Served], tmp_path: Path) -> None:
    served = make_served(query_log=True)
    golden = served.docs / "ops" / GOLDEN_NAME
    with served.admin() as http:
        assert http.get("/api/golden", params={"folder": "ops"}).json() == {
            "folder": "ops",
            "file": f"ops/{GOLDEN_NAME}",
            "exists": False,
            "lines": [],
        }
        hits = http.get("/api/golden/hits", params={"folder": "ops", "q": "redis eviction"}).json()["hits"]
        assert hits[0]["target"] == "cache.md#Redis eviction"
        assert {h["path"].split("/")[0] for h in hits} == {"ops"}
        # Looking at the hits is not asking again: nothing was logged.
        assert http.get("/api/query-log").json()["summary"]["searches"] == 0

        right = http.post(
            "/api/golden", json={"folder": "ops", "query": "Redis eviction", "target": hits[0]["target"]}
        )
        assert right.status_code == 200, right.text
        assert right.json()["line"]["expected"] == ["cache.md#Redis eviction"]
        again = {"folder": "ops", "query": "redis   EVICTION", "target": "backups.md#Restore"}
        assert http.post("/api/golden", json=again).json()["line"]["expected"] == [
            "cache.md#Redis eviction",
            "backups.md#Restore",
        ]
        none = http.post(
            "/api/golden", json={"folder": "ops", "query": "the lunch menu", "unanswerable": True}
        )
        assert none.json()["line"]["unanswerable"] is True
        listed = http.get("/api/golden", params={"folder": "ops"}).json()
    lines = read_golden(golden)
    assert [(line.id, line.query, line.draft) for line in lines] == [
        ("redis-eviction", "Redis eviction", False),
        ("the-lunch-menu", "the lunch menu", False),
    ]
    assert lines[0].expected == (Target("cache.md", "Redis eviction"), Target("backups.md", "Restore"))
    assert lines[1].unanswerable
    assert [line["id"] for line in listed["lines"]] == ["redis-eviction", "the-lunch-menu"]
    # `ragdown eval ops` scores the folder's own file as the marks left it.
    env = {**os.environ, "RAGDOWN_EMBEDDER": "hash"}
    scored = run_cli("eval", str(served.docs / "ops"), "--data-dir", str(tmp_path / "eval"), env=env)
    assert scored.returncode == 0, scored.stderr
    assert "1 answerable, 1 unanswerable" in scored.stdout


def test_a_mark_confirms_a_draft_and_keeps_the_other_lines_as_written(served: Served) -> None:
    golden = served.docs / "ops" / GOLDEN_NAME
    draft = (
        '{"id": "r", "query": "restore", "expected": ["cache.md"], "candidates": ["backups.md#Restore"], '
        '"draft": true, "note": "proposal", "source": "query log 2026-12-01"}'
    )
    golden.write_text(f'// our questions\n\n{draft}\n{{"id": "k", "query": "keys", "unanswerable": true}}\n')
    with served.admin() as http:
        done = http.post(
            "/api/golden", json={"folder": "ops", "query": "Restore", "target": "backups.md#Restore"}
        )
    assert done.status_code == 200, done.text
    text = golden.read_text()
    assert text.startswith("// our questions\n\n")
    assert text.endswith('{"id": "k", "query": "keys", "unanswerable": true}\n')
    line = read_golden(golden)[0]
    assert line.expected == (Target("backups.md", "Restore"),)
    assert line.candidates == (Target("backups.md", "Restore"),)
    assert not line.draft
    assert line.note is None


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"folder": "ops", "query": "q"}, 400, 'send either "target"'),
        ({"folder": "ops", "query": "q", "target": "cache.md", "unanswerable": True}, 400, "not both"),
        ({"folder": "ops", "query": "q", "target": "../private/diary.md"}, 400, "not a path inside"),
        ({"folder": "ops", "query": "q", "target": "notes.txt"}, 400, "not a Markdown file"),
        ({"folder": "ops", "query": "q", "target": "gone.md"}, 404, "no document ops/gone.md"),
        ({"folder": "nope", "query": "q", "unanswerable": True}, 404, "no such folder"),
        ({"folder": "ops", "query": "x" * 4001, "unanswerable": True}, 400, "query"),
        ({"folder": "ops", "query": "   ", "unanswerable": True}, 400, "query is empty"),
        ({"folder": "ops", "query": "q", "unanswerable": True, "weight": 1}, 400, "weight"),
    ],
)
def test_bad_marks_are_refused_and_write_nothing(
    served: Served, body: dict[str, object], status: int, words: str
) -> None:
    with served.admin() as http:
        refused = http.post("/api/golden", json=body)
    assert refused.status_code == status
    assert words in refused.json()["error"]
    assert not (served.docs / "ops" / GOLDEN_NAME).exists()


def test_a_broken_golden_file_is_shown_and_not_written_over(served: Served) -> None:
    golden = served.docs / "ops" / GOLDEN_NAME
    golden.write_text('{"id": "x", "query": "q"}\n')
    with served.admin() as http:
        shown = http.get("/api/golden", params={"folder": "ops"}).json()
        refused = http.post("/api/golden", json={"folder": "ops", "query": "q", "unanswerable": True})
    assert shown["error"].startswith('GOLDEN line 1: "expected" is empty')
    assert refused.status_code == 409
    assert "fix the file first" in refused.json()["error"]
    assert golden.read_text() == '{"id": "x", "query": "q"}\n'


def test_read_only_servers_and_readers_refuse_marks(
    make_served: Callable[..., Served], monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {"folder": "ops", "query": "q", "unanswerable": True}
    read_only = make_served(read_only=True)
    with read_only.admin() as http:
        assert http.post("/api/golden", json=body).status_code == 403
        assert http.get("/api/golden", params={"folder": "ops"}).status_code == 200
    with read_only.http() as http:  # the agents' token
        assert http.post("/api/golden", json=body).status_code == 403
    reader = make_served()
    monkeypatch.setattr(reader.app.mcp, "forward", object())  # what a reader's routes hold
    with reader.admin() as http:
        refused = http.post("/api/golden", json=body)
    assert refused.status_code == 409
    assert refused.json()["code"] == "reader"
    assert not (reader.docs / "ops" / GOLDEN_NAME).exists()
