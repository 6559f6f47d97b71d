"""`ragdown eval FOLDER [GOLDEN]` (docs/evaluation.md): the golden set searched, scored, shown, and
held to the bounds a CI job asks for. cli.py only wires it: it hands over how to open the engine.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown.errors import CliError
from ragdown.evaluation.compare import CompareSettings, applied, changes, read_settings
from ragdown.evaluation.golden import GoldenLine, read_golden
from ragdown.evaluation.options import BOUNDS, DEFAULT_TOP_K, GOLDEN_NAME, MAX_TOP_K
from ragdown.evaluation.report import compare_table, result_json, table
from ragdown.evaluation.run import RunResult, check_targets, run_golden

if TYPE_CHECKING:
    from ragdown.engine import Engine
    from ragdown.settings import ServerSettings


def check_arguments(args: argparse.Namespace) -> None:
    if not 1 <= args.top_k <= MAX_TOP_K:
        raise CliError(f"--top-k must be between 1 and {MAX_TOP_K}, got {args.top_k}")
    if args.hook and args.top_k != DEFAULT_TOP_K:
        raise CliError(
            "--top-k is the search's; under --hook the hook's top_k decides (--compare can set it)"
        )
    if args.json and args.json != "-" and not Path(args.json).resolve().parent.is_dir():
        raise CliError(
            f"--json {args.json}: its directory does not exist; name a file in an existing directory"
        )
    for name in BOUNDS:
        value = getattr(args, f"min_{name}")
        if value is not None and not 0 <= value <= 1:
            raise CliError(f"--min-{name} must be between 0 and 1, got {value:g}")


def golden_path(args: argparse.Namespace) -> Path:
    return Path(args.golden) if args.golden else Path(args.docs) / GOLDEN_NAME


def missed_bounds(args: argparse.Namespace, run: RunResult) -> list[str]:
    """One line per bound the run does not meet."""
    values = run.scores.named()
    lines = []
    for name, metric in BOUNDS.items():
        bound = getattr(args, f"min_{name}")
        if bound is not None and values[metric] < bound:
            lines.append(f"ragdown eval: {metric} {values[metric]:.3f} is below --min-{name} {bound:g}")
    return lines


def header(
    args: argparse.Namespace, golden: Path, lines: list[GoldenLine], engine: Engine, mode: str
) -> dict[str, Any]:
    answerable = sum(not line.unanswerable for line in lines)
    return {
        "folder": str(args.docs),
        "golden": str(golden),
        "embedder": engine.embedder.name,
        "answerable": answerable,
        "unanswerable": len(lines) - answerable,
        "mode": mode,
    }


def header_line(data: dict[str, Any], top_k: int, drafts: int) -> str:
    how = f"top_k {top_k}" if data["mode"] == "search" else "through the hook"
    draft = f", {drafts} drafts" if drafts else ""
    return (
        f"ragdown eval {data['folder']} · {data['golden']} · {data['answerable']} answerable, "
        f"{data['unanswerable']} unanswerable{draft} · {how} · embedder {data['embedder']}"
    )


def write_json(target: str, data: dict[str, Any]) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if target == "-":
        sys.stdout.write(text)
        return
    try:
        Path(target).write_text(text, encoding="utf-8")
    except OSError as e:
        raise CliError(f"cannot write --json {target} ({e.strerror}); check the path") from e


def run_eval(
    args: argparse.Namespace,
    settings: ServerSettings,
    open_engine: Callable[[ServerSettings], Engine],
    sync: Callable[[Engine], object],
) -> int:
    """Everything is checked before the model loads; the searches are never written to the query log."""
    check_arguments(args)
    golden = golden_path(args)
    lines = read_golden(golden)
    if not lines:
        raise CliError(
            f"GOLDEN: {golden} holds no questions; write one JSON object per line (docs/evaluation.md)"
        )
    compare: CompareSettings | None = read_settings(Path(args.compare), args.hook) if args.compare else None
    engine = open_engine(settings.model_copy(update={"query_log": False}))
    try:
        sync(engine)
        check_targets(lines, engine.documents().keys())
        engine.warm()
        base, compared = evaluate(engine, lines, args, compare)
    finally:
        engine.close()
    found = changes(base, compared) if compared is not None else []
    data = header(args, golden, lines, engine, base.mode)
    if args.json != "-":
        print(table(header_line(data, base.top_k, base.drafts), base))
        if compared is not None and compare is not None:
            print(compare_table(args.compare, compare.described(), base, compared, found))
    if args.json:
        write_json(args.json, result_json(data, base, compared, found))
    missed = missed_bounds(args, base)
    for line in missed:
        print(line, file=sys.stderr)
    return 1 if missed else 0


def evaluate(
    engine: Engine, lines: list[GoldenLine], args: argparse.Namespace, compare: CompareSettings | None
) -> tuple[RunResult, RunResult | None]:
    """The run as configured, then (with --compare) the same questions under the compared settings."""
    base_hook: dict[str, Any] | None = {} if args.hook else None
    base = run_golden(engine, lines, args.top_k, base_hook)
    if compare is None:
        return base, None
    given = compare.given()
    hook = given.get("hook", {}) if args.hook else None
    with applied(engine, compare):
        compared = run_golden(engine, lines, compare.top_k or args.top_k, hook, given)
    return base, compared
