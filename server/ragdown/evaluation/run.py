"""One pass of a golden set through the engine (docs/evaluation.md#how-a-run-searches): each query is
asked as an agent asks it (`Engine.recall`, or under `--hook` the hook's `Engine.context`), its hits
matched against the line's targets, and the search timed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragdown.evaluation.golden import GoldenError, GoldenLine, own_heading
from ragdown.evaluation.metrics import (
    Located,
    Scores,
    first_rank,
    golden_ndcg,
    scores,
)
from ragdown.evaluation.options import DEFAULT_TOP_K as DEFAULT_TOP_K

if TYPE_CHECKING:  # the engine brings LanceDB and pyarrow; the CLI's parser imports this package
    from ragdown.engine import Engine
    from ragdown.search.hybrid import Hit

SHOWN_FIRST = 3  # hits named for a miss: what came first instead


def hit_name(path: str, heading: str) -> str:
    """`path#Heading` as a golden file names a section, or the path for a hit above any heading."""
    own = own_heading(heading)
    return f"{path}#{own}" if own else path


@dataclass(frozen=True)
class QuestionResult:
    """One golden line's search: its hits in rank order and what they score."""

    line: GoldenLine
    hits: list[Located]
    similarities: list[float]
    ms: float
    rank: int | None = None
    ndcg10: float = 0.0

    @property
    def refused(self) -> bool:
        """No hits at all: the search abstained (docs/search.md#abstention), or the hook injected nothing."""
        return not self.hits

    @property
    def outcome(self) -> str:
        """What a person compares between two runs: the rank, or refused / answered."""
        if self.line.unanswerable:
            return "refused" if self.refused else "answered"
        return f"rank {self.rank}" if self.rank is not None else "missed"

    @property
    def first(self) -> list[str]:
        """The first hits, named as targets: for a miss, what came first instead."""
        return [hit_name(path, heading) for path, heading in self.hits[:SHOWN_FIRST]]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.line.id,
            "query": self.line.query,
            "expected": [str(t) for t in self.line.expected],
            "unanswerable": self.line.unanswerable,
            "draft": self.line.draft,
            "outcome": self.outcome,
            "rank": self.rank,
            "ndcg@10": None if self.line.unanswerable else round(self.ndcg10, 4),
            "refused": self.refused,
            "ms": round(self.ms, 2),
            "hits": [
                {"path": p, "heading": h, "target": hit_name(p, h), "similarity": round(s, 4)}
                for (p, h), s in zip(self.hits, self.similarities, strict=True)
            ],
        }
        return data


@dataclass(frozen=True)
class RunResult:
    """Every question of a pass, in file order, and the set's scores."""

    results: list[QuestionResult]
    scores: Scores
    mode: str
    top_k: int
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def drafts(self) -> int:
        return sum(r.line.draft for r in self.results)


def scored(line: GoldenLine, hits: Sequence[Hit], ms: float) -> QuestionResult:
    located = [(h.path, h.heading) for h in hits]
    similarities = [h.similarity for h in hits]
    if line.unanswerable:
        return QuestionResult(line, located, similarities, ms)
    rank = first_rank(located, line.expected)
    return QuestionResult(line, located, similarities, ms, rank, golden_ndcg(located, line.expected))


def search_once(
    engine: Engine, query: str, top_k: int, hook: dict[str, Any] | None
) -> tuple[list[Hit], float]:
    """The hits an agent would get, and the milliseconds they took: `ragdown_recall`'s search, or
    (`hook` not None) what the hook injects without a session, under those hook overrides."""
    started = time.perf_counter()
    if hook is None:
        hits = engine.recall(query, top_k, kind="eval")
    else:
        hits = engine.context(query, overrides=hook).injected
    return hits, (time.perf_counter() - started) * 1000


def run_golden(
    engine: Engine,
    lines: Sequence[GoldenLine],
    top_k: int = DEFAULT_TOP_K,
    hook: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> RunResult:
    """Search every line once, in file order, and score the set."""
    results = [scored(line, *search_once(engine, line.query, top_k, hook)) for line in lines]
    answerable = [r for r in results if not r.line.unanswerable]
    totals = scores(
        [r.rank for r in answerable],
        [r.ndcg10 for r in answerable],
        [r.refused for r in results if r.line.unanswerable],
        [r.ms for r in results],
    )
    return RunResult(results, totals, "hook" if hook is not None else "search", top_k, settings or {})


def check_targets(lines: Sequence[GoldenLine], documents: Iterable[str]) -> None:
    """Refuse a target naming no document of the folder: a typo would count as a miss forever."""
    known = set(documents)
    for line in lines:
        for target in line.expected:
            if target.path not in known:
                raise GoldenError(
                    f'GOLDEN line {line.line}: "expected" target "{target}" names no document of the folder; '
                    "fix the path (relative to the folder; `ragdown search` prints hit paths)"
                )
