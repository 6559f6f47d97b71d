"""What `ragdown eval` shows: a table for a person (stdout) and the whole result as JSON (`--json`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragdown.evaluation.compare import Change
from ragdown.evaluation.metrics import Scores
from ragdown.evaluation.run import QuestionResult, RunResult


def scores_json(scores: Scores) -> dict[str, Any]:
    return {
        **{name: round(value, 4) for name, value in scores.named().items()},
        "answerable": scores.answerable,
        "unanswerable": scores.unanswerable,
        "refused": scores.refused,
        "answered_anyway": scores.answered_anyway,
        "abstention": None if scores.abstention is None else round(scores.abstention, 4),
        "latency_ms": {"p50": round(scores.p50_ms, 2), "p95": round(scores.p95_ms, 2)},
    }


def run_json(run: RunResult) -> dict[str, Any]:
    return {
        "mode": run.mode,
        "top_k": run.top_k,
        "settings": run.settings,
        "metrics": scores_json(run.scores),
        "questions": [r.to_json() for r in run.results],
    }


def result_json(
    header: dict[str, Any], base: RunResult, compared: RunResult | None, found: list[Change]
) -> dict[str, Any]:
    data: dict[str, Any] = {**header, "drafts": base.drafts, **run_json(base)}
    if compared is not None:
        data["compare"] = {**run_json(compared), "changed": [c.to_json() for c in found]}
    return data


def _count(scores: Scores, share: float) -> str:
    return f"{round(share * scores.answerable)}/{scores.answerable}"


def abstention_line(scores: Scores) -> str:
    if not scores.unanswerable:
        return "no unanswerable questions"
    return f"{scores.refused}/{scores.unanswerable} refused, {scores.answered_anyway} answered anyway"


def scores_lines(scores: Scores) -> list[str]:
    return [
        f"  hit@1       {scores.hit1:.3f}   {_count(scores, scores.hit1)}",
        f"  hit@5       {scores.hit5:.3f}   {_count(scores, scores.hit5)}",
        f"  MRR         {scores.mrr:.3f}",
        f"  nDCG@10     {scores.ndcg10:.3f}",
        f"  abstention  {abstention_line(scores)}",
        f"  latency     p50 {scores.p50_ms:.0f} ms · p95 {scores.p95_ms:.0f} ms",
    ]


def _quoted(text: str, width: int = 60) -> str:
    one = " ".join(text.split())
    return f'"{one}"' if len(one) <= width else f'"{one[: width - 1]}…"'


def miss_lines(results: Sequence[QuestionResult], top_k: int) -> list[str]:
    """Each answerable question not answered first, and each unanswerable one answered anyway, with
    the hits that came first instead."""
    lines: list[str] = []
    for r in results:
        if r.line.unanswerable and not r.refused:
            where = "unanswerable, answered anyway"
        elif not r.line.unanswerable and r.rank != 1:
            where = f"at rank {r.rank}" if r.rank is not None else f"not in the top {top_k}"
            if r.refused:
                where += " (no hits)"
        else:
            continue
        expected = ", ".join(str(t) for t in r.line.expected)
        lines.append(
            f"  {r.line.id}: {_quoted(r.line.query)} {where}" + (f"; expected {expected}" if expected else "")
        )
        if r.hits:
            lines.append(f"      first: {' · '.join(r.first)}")
    return lines


def table(header: str, run: RunResult) -> str:
    lines = [header, "", *scores_lines(run.scores)]
    misses = miss_lines(run.results, run.top_k)
    if misses:
        lines += ["", "Misses (what came first instead):", *misses]
    return "\n".join(lines)


def _delta(a: float, b: float) -> str:
    return f"{a:.3f} → {b:.3f} ({b - a:+.3f})"


def compare_table(source: str, named: str, base: RunResult, compared: RunResult, found: list[Change]) -> str:
    """Per metric base → compared (delta), then the questions whose outcome changed."""
    a, b = base.scores, compared.scores
    lines = ["", f"Compared with {source} ({named}):", ""]
    lines += [f"  {name:<11} {_delta(a.named()[name], b.named()[name])}" for name in a.named()]
    if a.unanswerable:
        lines.append(f"  abstention  {a.refused}/{a.unanswerable} → {b.refused}/{b.unanswerable} refused")
    lines.append(
        f"  latency     p50 {a.p50_ms:.0f} → {b.p50_ms:.0f} ms · p95 {a.p95_ms:.0f} → {b.p95_ms:.0f} ms"
    )
    if not found:
        lines += ["", "No question changed outcome."]
        return "\n".join(lines)
    lines += ["", "Changed:"]
    marks = {True: "better", False: "worse", None: "changed"}
    lines += [f"  {c.id}: {c.base} → {c.compared} ({marks[c.better]})" for c in found]
    return "\n".join(lines)
