"""A golden set run through the real engine (hash embedder) over a small folder: ranks, misses and
what came first, abstention, the hook's mode, and a comparison under other settings."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ragdown.engine import Engine
from ragdown.evaluation.compare import CompareSettings, applied, changes
from ragdown.evaluation.golden import GoldenError, parse_golden
from ragdown.evaluation.run import check_targets, run_golden
from ragdown.search.policy import SearchPolicy
from tests.conftest import WriteDoc, synced_engine

FOLDER = {
    "ops/cache.md": "# Cache\n\n## Redis eviction\n\nRedis evicts keys by maxmemory-policy allkeys-lru.\n\n"
    "## Sizing\n\nThe cache node has sixteen gigabytes of memory.\n",
    "ops/pg.md": "# Postgres\n\n## Restore\n\nRun pg_restore into a fresh database.\n\n"
    "## Retention\n\nDumps are kept for fourteen days.\n",
    "food.md": "# Pancakes\n\nFlour, eggs, milk and a pinch of salt.\n",
}

GOLDEN = "\n".join(
    [
        '{"id": "redis", "query": "maxmemory-policy allkeys-lru",'
        ' "expected": ["ops/cache.md#redis eviction"]}',
        '{"id": "restore", "query": "pg_restore fresh database", "expected": ["ops/pg.md#Restore"]}',
        '{"id": "wrong", "query": "pancakes flour eggs milk", "expected": ["ops/pg.md#Retention"],'
        ' "draft": true}',
        '{"id": "noise", "query": "zqxjv wvkpq", "unanswerable": true}',
        '{"id": "food", "query": "pancakes with eggs", "unanswerable": true}',
    ]
)


@pytest.fixture
def engine(make_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    return synced_engine(make_engine, write, FOLDER)


def test_a_run_ranks_scores_and_names_what_came_first(engine: Engine) -> None:
    run = run_golden(engine, parse_golden(GOLDEN))
    by_id = {r.line.id: r for r in run.results}
    assert (by_id["redis"].rank, by_id["restore"].rank) == (1, 1)
    wrong = by_id["wrong"]
    assert wrong.rank != 1
    assert wrong.first[0] == "food.md#Pancakes"  # what came first instead, named as a target
    assert len(wrong.first) == 3
    assert by_id["noise"].refused  # no word of it in the index, no close vector: the search abstains
    assert by_id["noise"].outcome == "refused"
    assert not by_id["food"].refused
    assert by_id["food"].outcome == "answered"
    assert run.drafts == 1
    assert (run.mode, run.top_k) == ("search", 10)
    totals = run.scores
    assert (totals.answerable, totals.unanswerable, totals.refused) == (3, 2, 1)
    assert totals.hit1 == pytest.approx(2 / 3)
    assert totals.mrr == pytest.approx((1 + 1 + (1 / wrong.rank if wrong.rank else 0)) / 3)
    assert totals.p95_ms >= totals.p50_ms > 0
    assert [r.line.id for r in run.results] == ["redis", "restore", "wrong", "noise", "food"]
    shown = wrong.to_json()
    assert shown["outcome"] == (f"rank {wrong.rank}" if wrong.rank else "missed")
    assert shown["hits"][0]["target"] == "food.md#Pancakes"


def test_top_k_bounds_what_is_ranked(engine: Engine) -> None:
    run = run_golden(engine, parse_golden(GOLDEN), top_k=1)
    assert all(len(r.hits) <= 1 for r in run.results)
    assert {r.line.id: r.outcome for r in run.results}["wrong"] == "missed"


def test_the_hook_mode_scores_what_the_hook_injects(engine: Engine) -> None:
    lines = parse_golden(GOLDEN)
    run = run_golden(engine, lines, hook={})
    assert run.mode == "hook"
    assert all(len(r.hits) <= 4 for r in run.results)  # the hook's default top_k
    closed = run_golden(engine, lines, hook={"top_k": 0})
    assert all(r.refused for r in closed.results)  # top_k 0 injects nothing


def test_compare_applies_settings_only_inside_the_block(engine: Engine) -> None:
    lines = parse_golden(GOLDEN)
    base = run_golden(engine, lines)
    before = engine.searcher.policy
    with applied(engine, CompareSettings(max_per_document=1, abstain=False, text_limit=5)):
        assert engine.searcher.policy == SearchPolicy(max_per_document=1, follow_links=0, abstain=False)
        assert engine.searcher.settings.text_limit == 5
        compared = run_golden(engine, lines, top_k=1)
    assert engine.searcher.policy == before
    assert engine.searcher.settings.text_limit == 2000
    found = {c.id: c for c in changes(base, compared)}
    assert found["noise"].base == "refused"
    assert found["noise"].compared == "answered"
    assert found["noise"].better is False
    assert found["wrong"].compared == "missed"
    assert found["wrong"].better is False
    assert "redis" not in found


def test_a_target_naming_no_document_is_refused(engine: Engine) -> None:
    lines = parse_golden(
        '// a comment\n{"id": "x", "query": "q", "expected": ["ops/cache.md", "ops/redis.md#X"]}'
    )
    with pytest.raises(
        GoldenError, match=r'^GOLDEN line 2: "expected" target "ops/redis.md#X" names no document'
    ):
        check_targets(lines, engine.documents().keys())
    check_targets(parse_golden(GOLDEN), engine.documents().keys())
