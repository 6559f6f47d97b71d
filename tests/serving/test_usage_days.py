"""GET /api/query-log's per-day counts (docs/search.md#usage) over real HTTP and MCP: today's searches,
gaps and hook calls as they were made, earlier days from the log as it stands, every other day of the
window a zero."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from ragdown.search.usage import DAYS
from tests.serving.conftest import Served, hook_calls


def test_the_days_count_todays_searches_gaps_and_hook_calls(make_served: Callable[..., Served]) -> None:
    served = make_served(query_log=True)
    today = datetime.now(UTC).date()
    two_days_ago = (today - timedelta(days=2)).isoformat()
    earlier: list[dict[str, Any]] = [
        {"ts": f"{two_days_ago}T09:00:00Z", "kind": "recall", "folder": "ops", "query": "x", "hits": []},
        {"ts": f"{two_days_ago}T09:01:00Z", "kind": "context", "folder": "ops", "injected": []},
        {"ts": f"{(today - timedelta(days=DAYS)).isoformat()}T09:00:00Z", "kind": "recall", "hits": []},
    ]
    served.engine.query_log_path.parent.mkdir(parents=True, exist_ok=True)
    served.engine.query_log_path.write_text("".join(json.dumps(e) + "\n" for e in earlier), encoding="utf-8")
    with served.admin() as http:
        # A section's own words clear the hash embedder's floor; the nonsense twice finds nothing.
        for query in ("Redis evicts keys by maxmemory-policy.", "zzzz qqqq", "zzzz qqqq"):
            http.get("/api/search", params={"folder": "ops", "q": query})
    hook_calls(served.url, 0.0, 1.0, 1.0)
    with served.admin() as http:
        summary = http.get("/api/query-log").json()["summary"]
    days = {d["day"]: d for d in summary["days"]}
    assert len(summary["days"]) == DAYS
    assert summary["days"][-1]["day"] == today.isoformat()
    assert days[today.isoformat()] == {
        "day": today.isoformat(),
        "searches": 3,
        "gaps": 2,
        "hook_calls": 3,
        "hook_injected": 1,
        "hook_empty": 2,
    }
    assert days[two_days_ago] | {"day": ""} == {
        "day": "",
        "searches": 1,
        "gaps": 1,
        "hook_calls": 1,
        "hook_injected": 0,
        "hook_empty": 1,
    }
    others = [d for day, d in days.items() if day not in (today.isoformat(), two_days_ago)]
    assert len(others) == DAYS - 2
    assert all(d["searches"] == d["hook_calls"] == 0 for d in others)
    assert summary["searches"] == 5  # the one from before the window counts in the totals


def test_the_days_are_zeros_without_a_log(served: Served) -> None:
    with served.admin() as http:
        days = http.get("/api/query-log").json()["summary"]["days"]
    assert len(days) == DAYS
    assert {(d["searches"], d["gaps"], d["hook_calls"]) for d in days} == {(0, 0, 0)}
