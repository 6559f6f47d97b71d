"""Hit blocks (docs/hook.md#output) and the query log's rotation (docs/search.md#query-log)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragdown.search.hit_shapes import clip_hit, format_hit
from ragdown.search.hybrid import Hit
from ragdown.search.query_log import QueryLog

MTIME = datetime(2026, 1, 2, 23, 30, tzinfo=UTC).timestamp() * 1000


def make_hit(**fields: Any) -> Hit:
    values: dict[str, Any] = {
        "id": "ops/backups.md#0@abc",
        "path": "ops/backups.md",
        "title": "Backups",
        "heading": "Backups › Restore",
        "text": "Restore the dump.",
        "line_start": 7,
        "line_end": 7,
        "score": 0.03,
        "similarity": 0.8666,
        "sources": ["dense"],
        "mtime_ms": MTIME,
    }
    values.update(fields)
    return Hit(**values)


def test_header_line_then_text() -> None:
    block = format_hit(make_hit(tags=["ops", "db/pg"]), 0)
    assert block == (
        "ops/backups.md:7-7 — Backups › Restore [#ops #db/pg] (similarity 0.87, changed 2026-01-02)\n"
        "Restore the dump."
    )


def test_agent_provenance_and_no_tags() -> None:
    header = format_hit(make_hit(created_by="claude-code"), 0).splitlines()[0]
    assert header.endswith(
        "— Backups › Restore (similarity 0.87, changed 2026-01-02, written by an agent with claude-code)"
    )


def test_the_clip_marker_names_the_read_call_for_the_rest() -> None:
    hit = make_hit(text="abcdefghijklmnopqrstu")
    assert clip_hit(hit, 5) == (
        "abcde… [clipped: 5 of 21 characters — "
        'ragdown_read_doc {path: "ops/backups.md", start_line: 7, end_line: 7}]'
    )
    assert clip_hit(hit, 21) == hit.text
    assert clip_hit(hit, 0) == hit.text
    assert '{path: "a \\"q\\".md"' in clip_hit(make_hit(text="x" * 9, path='a "q".md'), 3)


def test_the_log_rotates_to_one_dot_1_file(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "query-log.jsonl", max_bytes=400)
    for n in range(12):
        log.read(f"notes/{n}.md", 1, n)
    current = [json.loads(line) for line in log.path.read_text(encoding="utf-8").splitlines()]
    rotated = [json.loads(line) for line in log.rotated_path.read_text(encoding="utf-8").splitlines()]
    assert log.path.stat().st_size <= 400
    assert rotated
    assert current
    numbers = [e["end"] for e in rotated + current]
    assert numbers == sorted(numbers)  # nothing reordered
    assert numbers[-1] == 11
    assert set(current[0]) == {"ts", "kind", "path", "start", "end"}
    assert not (tmp_path / "query-log.jsonl.2").exists()
    assert len(list(tmp_path.iterdir())) == 2


def test_rotation_replaces_an_older_dot_1(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "query-log.jsonl", max_bytes=200)
    log.rotated_path.write_text("old\n", encoding="utf-8")
    for n in range(6):
        log.read(f"{n}.md", 1, 1)
    assert "old" not in log.rotated_path.read_text(encoding="utf-8")


def test_the_default_limit_is_ten_megabytes(tmp_path: Path) -> None:
    assert QueryLog(tmp_path / "q.jsonl").max_bytes == 10 * 1024 * 1024
