"""The query log counted per UTC day (ragdown.search.usage, docs/search.md#usage): a fixed window of
days up to today, days with nothing as zeros, gaps and empty hook calls per day, events outside the
window or without a usable time left out of the days but not of the totals."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

from ragdown.search.query_log import QueryLog
from ragdown.search.usage import DAYS, events, summarise

TODAY = date(2026, 3, 2)  # the window crosses the end of February


def search(day: str, *sims: float, kind: str = "recall", query: str = "q") -> dict[str, Any]:
    hits = [{"path": f"d{i}.md", "similarity": s} for i, s in enumerate(sims)]
    return {"ts": f"{day}T12:00:00Z", "kind": kind, "folder": "ops", "query": query, "hits": hits}


def hook(day: str, injected: bool) -> dict[str, Any]:
    return {"ts": f"{day}T23:59:59Z", "kind": "context", "injected": [{"path": "a.md"}] if injected else []}


def counts(log: list[dict[str, Any]], **options: Any) -> dict[str, tuple[int, ...]]:
    """The days with anything counted: (searches, gaps, hook calls, injected, empty)."""
    usage = summarise(log, 0.35, TODAY, **options)
    return {
        d.day: (d.searches, d.gaps, d.hook_calls, d.hook_injected, d.hook_empty)
        for d in usage.days
        if d.searches or d.hook_calls
    }


def test_the_window_is_every_day_up_to_today_oldest_first_with_zeros_where_nothing_happened() -> None:
    usage = summarise([], 0.35, TODAY)
    assert len(usage.days) == DAYS == 28
    assert (usage.days[0].day, usage.days[-1].day) == ("2026-02-03", "2026-03-02")
    assert "2026-02-28" in [d.day for d in usage.days]
    assert all(
        (d.searches, d.gaps, d.hook_calls, d.hook_injected, d.hook_empty) == (0, 0, 0, 0, 0)
        for d in usage.days
    )


def test_searches_and_their_gaps_are_counted_on_their_day() -> None:
    log = [
        search("2026-02-27", 0.9),
        search("2026-02-27", 0.1),  # under the floor: a gap
        search("2026-02-27"),  # nothing found: a gap
        search("2026-03-02", 0.5, kind="api"),
        search("2026-03-02", 0.2, kind="search"),
        {"ts": "2026-03-02T00:00:00Z", "kind": "read", "path": "ops/a.md"},  # a read is no search
    ]
    assert counts(log) == {"2026-02-27": (3, 2, 0, 0, 0), "2026-03-02": (2, 1, 0, 0, 0)}


def test_hook_calls_count_those_that_injected_and_those_that_injected_nothing() -> None:
    log = [
        hook("2026-02-10", True),
        hook("2026-02-10", False),
        hook("2026-02-10", False),
        hook("2026-03-01", True),
    ]
    log.append({"ts": "2026-03-01T08:00:00Z", "kind": "context"})  # no `injected` at all: nothing injected
    assert counts(log) == {"2026-02-10": (0, 0, 3, 1, 2), "2026-03-01": (0, 0, 2, 1, 1)}


def test_events_outside_the_window_or_without_a_time_count_in_the_totals_only() -> None:
    log = [
        search("2026-02-02", 0.1),  # the day before the window
        search("2026-03-03", 0.1),  # tomorrow (a clock ahead)
        {"kind": "recall", "query": "no ts", "hits": []},
        {"ts": 20260302, "kind": "recall", "query": "a number", "hits": []},
        {"ts": "yesterday", "kind": "context", "injected": []},
        search("2026-02-03", 0.9),  # the window's first day
    ]
    usage = summarise(log, 0.35, TODAY)
    assert (usage.searches, usage.hook_calls) == (5, 1)
    assert counts(log) == {"2026-02-03": (1, 0, 0, 0, 0)}


def test_a_shorter_window_ends_today_too() -> None:
    log = [search("2026-02-28"), search("2026-03-02", 0.9)]
    usage = summarise(log, 0.35, TODAY, window=3)
    assert [(d.day, d.searches, d.gaps) for d in usage.days] == [
        ("2026-02-28", 1, 1),
        ("2026-03-01", 0, 0),
        ("2026-03-02", 1, 0),
    ]


def test_the_days_are_read_from_the_log_files_across_rotation(tmp_path: Path) -> None:
    """What QueryLog writes, rotated, counted per day; a torn line and a query holding U+2028 (a line
    separator to str.splitlines, not to the log) cost nothing."""
    log = QueryLog(tmp_path / "query-log.jsonl")
    lines = [search("2026-03-01", 0.9), search("2026-03-01", query="a\u2028b"), hook("2026-03-02", False)]
    log.rotated_path.write_text(json.dumps(lines[0]) + "\n" + '{"kind": "rec', encoding="utf-8")
    log.path.write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in lines[1:]), encoding="utf-8"
    )
    usage = summarise(events([log.rotated_path, log.path]), 0.35, TODAY)
    assert counts([*events([log.rotated_path, log.path])]) == {
        "2026-03-01": (2, 1, 0, 0, 0),
        "2026-03-02": (0, 0, 1, 0, 1),
    }
    assert [g.query for g in usage.gaps] == ["a\u2028b"]


def test_a_large_log_is_read_once_into_a_fixed_number_of_days(tmp_path: Path) -> None:
    """Ten thousand events over a year: only the window's days are kept, each counted exactly."""
    path = tmp_path / "query-log.jsonl"
    with path.open("w", encoding="utf-8") as file:
        for n in range(10_000):
            day = date.fromordinal(TODAY.toordinal() - n % 365).isoformat()
            file.write(json.dumps(search(day, 0.1 if n % 2 else 0.9)) + "\n")
    usage = summarise(events([path]), 0.35, TODAY)
    assert usage.searches == 10_000
    assert len(usage.days) == DAYS
    # Day k back from today holds the events n with n % 365 == k: 28 for k < 145, 27 after.
    assert all(d.searches == 28 for d in usage.days)
    assert sum(d.gaps for d in usage.days) == sum(1 for n in range(10_000) if n % 365 < DAYS and n % 2)
