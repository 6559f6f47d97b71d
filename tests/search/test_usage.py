"""The query log summed up (ragdown.search.usage, docs/search.md#usage): counts, gaps, the hook's rate,
and reads that followed a search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragdown.search.usage import FOLLOW_WINDOW, events, summarise


def search(query: str, *sims: float, folder: str = "ops", paths: tuple[str, ...] = ()) -> dict[str, Any]:
    hits = [{"path": paths[i] if i < len(paths) else f"d{i}.md", "similarity": s} for i, s in enumerate(sims)]
    return {"kind": "recall", "folder": folder, "query": query, "hits": hits}


def test_gaps_are_searches_whose_best_hit_is_under_the_floor_counted_per_query() -> None:
    log = [
        search("restore backups", 0.8),
        search("kafka lag", 0.2, 0.1),
        search("kafka lag", 0.3),
        search("nothing at all"),
        {"kind": "api", "folder": "ops", "query": "kafka lag", "hits": []},
    ]
    usage = summarise(log, min_score=0.35)
    assert usage.searches == 5
    assert [(g.query, g.count, g.best) for g in usage.gaps] == [
        ("kafka lag", 3, 0.3),
        ("nothing at all", 1, None),
    ]


def test_the_hook_rate_counts_calls_that_injected_anything() -> None:
    log: list[dict[str, Any]] = [
        {"kind": "context", "injected": [{"path": "a.md"}]},
        {"kind": "context", "injected": []},
        {"kind": "context", "injected": []},
        {"kind": "context"},
    ]
    usage = summarise(log, 0.35)
    assert (usage.hook_calls, usage.hook_injected, usage.hook_rate) == (4, 1, 0.25)
    assert summarise([], 0.35).hook_rate is None


def test_reads_count_and_those_after_a_search_that_showed_them() -> None:
    log: list[dict[str, Any]] = [
        {"kind": "read", "path": "ops/a.md"},  # before any search showed it
        search("q", 0.9, paths=("a.md",)),  # folder-relative hit paths, read paths are from the root
        {"kind": "read", "path": "ops/a.md"},
        {"kind": "read", "path": "ops/b.md"},
    ]
    log += [{"kind": "context"}] * FOLLOW_WINDOW
    log.append({"kind": "read", "path": "ops/a.md"})  # too long after the search
    usage = summarise(log, 0.35)
    assert usage.reads == 4
    assert [(r.path, r.reads, r.after_search) for r in usage.most_read] == [
        ("ops/a.md", 3, 1),
        ("ops/b.md", 1, 0),
    ]


def test_the_log_is_read_across_rotation_and_torn_lines_are_skipped(tmp_path: Path) -> None:
    old, new = tmp_path / "query-log.jsonl.1", tmp_path / "query-log.jsonl"
    old.write_text('{"kind": "recall", "query": "a", "hits": []}\n{"kind": "rec', encoding="utf-8")
    new.write_text('[1, 2]\n{"kind": "read", "path": "x.md"}\nnot json\n', encoding="utf-8")
    assert [e["kind"] for e in events([old, new, tmp_path / "missing"])] == ["recall", "read"]


def test_recent_searches_are_distinct_queries_per_folder_the_latest_first() -> None:
    log = [
        search("restore backups", 0.8),
        search("Kafka  lag", 0.2),
        search("restore backups", 0.1, folder="sales"),
        search("kafka lag", 0.4),
        search("  "),
        {"kind": "context", "folder": "ops", "query": "prompt", "injected": []},
    ]
    usage = summarise(log, min_score=0.35)
    assert [(r.query, r.folder, r.count, r.best) for r in usage.recent] == [
        ("kafka lag", "ops", 2, 0.4),
        ("restore backups", "sales", 1, 0.1),
        ("restore backups", "ops", 1, 0.8),
    ]
