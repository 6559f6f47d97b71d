"""`ragdown index`, `search` and `eval`: one folder and its index."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown.errors import CliError
from ragdown.evaluation.options import HELP as EVAL_HELP
from ragdown.evaluation.options import add_draft_arguments, add_eval_arguments
from ragdown.search.hit_shapes import cli_hit_json
from ragdown.settings import ServerSettings

if TYPE_CHECKING:  # the engine brings LanceDB and pyarrow: only the commands that index load it
    from ragdown.engine import Engine
    from ragdown.engine.snapshot_engine import SnapshotEngine
    from ragdown.indexing.embedders import Embedder
    from ragdown.indexing.sync import SyncReport

REPORT_KEYS = ("added", "updated", "removed", "unchanged", "chunks", "reused", "ms", "failed")
MAX_TOP_K = 100


def report_json(report: SyncReport) -> dict[str, Any]:
    data = report.model_dump()
    return {key: data[key] for key in REPORT_KEYS}


def folder_args(args: argparse.Namespace, settings: ServerSettings) -> tuple[Path, Path, str | None]:
    """The docs dir, the data dir and the embedder asked for, each checked."""
    from ragdown.folders.dir_checks import check_data_dir, check_docs_dir, default_data_dir
    from ragdown.indexing.embedders.registry import check_embedder_name

    docs = check_docs_dir(Path(args.docs))
    data_dir = Path(args.data_dir) if args.data_dir else settings.data_dir or default_data_dir(docs)
    check_data_dir(data_dir, docs, data_dir_setting(args, settings))
    wanted = args.embedder or settings.embedder
    check_embedder_name(wanted, "--embedder" if args.embedder else "RAGDOWN_EMBEDDER")
    return docs, data_dir, wanted


def open_engine(
    args: argparse.Namespace,
    settings: ServerSettings,
    loaded: tuple[Embedder, str] | None = None,
    checked: tuple[Path, Path, str | None] | None = None,
) -> Engine:
    """The folder's engine; `checked`: what `folder_args` returned already, so nothing is checked twice."""
    from ragdown.engine import Engine, index_location
    from ragdown.indexing.active import recorded_embedder

    docs, data_dir, wanted = checked or folder_args(args, settings)
    before = recorded_embedder(index_location(data_dir, settings))
    engine = Engine.open(docs, data_dir, wanted, threads=settings.threads, settings=settings, loaded=loaded)
    if engine.rebuilt_because:
        reason = engine.rebuilt_because
        if before and wanted and before != wanted:
            reason = f"the index was built with {before}, not {wanted}"
        print(f"ragdown: {reason}; rebuilding the index", file=sys.stderr)
    return engine


def data_dir_setting(args: argparse.Namespace, settings: ServerSettings) -> str:
    """Where the data dir came from, for a refusal to name."""
    if args.data_dir:
        return "--data-dir"
    return settings.data_dir_source()


def sync_with_progress(engine: Engine, full: bool = False) -> SyncReport:
    from ragdown.serving.banner import ProgressBar

    bar = ProgressBar()
    try:
        return engine.sync(full=full, progress=bar)
    finally:
        bar.finish()


def command_index(args: argparse.Namespace, settings: ServerSettings) -> int:
    checked = None
    if not args.full and settings.index_uri is None:
        from ragdown.indexing.snapshot.unchanged import unchanged_files

        checked = folder_args(args, settings)
        unchanged = unchanged_files(*checked)
        if unchanged is not None:  # nothing to sync: the index and its snapshot stand as they are
            print(json.dumps(dict.fromkeys(REPORT_KEYS, 0) | {"unchanged": unchanged, "failed": []}))
            return 0
    engine = open_engine(args, settings, checked=checked)
    try:
        report = sync_with_progress(engine, full=args.full)
    finally:
        engine.close()
    print(json.dumps(report_json(report), ensure_ascii=False))
    return 0


def read_queries(source: str) -> list[tuple[Any, str]]:
    """`{"id", "query"}` JSON lines, all checked before the model loads; blank lines are skipped."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"cannot read the queries file {source}: {error}") from None
    queries: list[tuple[Any, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            raise CliError(
                f"{source} line {number} is not JSON ({error.msg}); write one object per line"
            ) from None
        if not isinstance(entry, dict) or "id" not in entry or not isinstance(entry.get("query"), str):
            raise CliError(f'{source} line {number} must be an object with "id" and a string "query"')
        if not entry["query"].strip():
            raise CliError(f"{source} line {number} has an empty query")
        queries.append((entry["id"], entry["query"]))
    return queries


def command_search(args: argparse.Namespace, settings: ServerSettings) -> int:
    if not 1 <= args.top_k <= MAX_TOP_K:
        raise CliError(f"--top-k must be between 1 and {MAX_TOP_K}, got {args.top_k}")
    if args.query is None and args.queries is None:
        raise CliError('no query: pass either a QUERY or --queries FILE (JSON lines of {"id", "query"})')
    if args.query is not None and args.queries is not None:
        raise CliError('pass either a QUERY or --queries FILE (JSON lines of {"id", "query"}), not both')
    if args.query is not None and not args.query.strip():
        raise CliError("the query is empty; pass the words to search for")
    batch = read_queries(args.queries) if args.queries is not None else None
    engine = open_for_search(args, settings)
    from ragdown.engine.snapshot_engine import SnapshotEngine
    from ragdown.search.filters import SearchFilters

    # Answered from the snapshot, nothing is written and nothing runs on: the process may end at once.
    args.exit_at_once = isinstance(engine, SnapshotEngine)

    filters = SearchFilters(path_prefix=args.path_prefix or "", tag=args.tag or "")
    try:
        if batch is None:
            hits = engine.recall(args.query, args.top_k, filters, kind="cli")
            print(json.dumps({"hits": [cli_hit_json(h) for h in hits]}, ensure_ascii=False))
            return 0
        for query_id, query in batch:
            hits = engine.recall(query, args.top_k, filters, kind="cli")
            line = json.dumps({"id": query_id, "hits": [cli_hit_json(h) for h in hits]}, ensure_ascii=False)
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
    finally:
        engine.close()
    return 0


def open_for_search(args: argparse.Namespace, settings: ServerSettings) -> Engine | SnapshotEngine:
    """The search snapshot when it answers for the index as it is (docs/design.md#search-snapshot),
    else the index itself, indexed first when empty. The model loads on a thread of its own from the
    start, beside the imports of the search and the snapshot's mapping (docs/design.md#start-up)."""
    from ragdown.indexing.embedder_loading import load_beside

    checked = folder_args(args, settings)
    docs, data_dir, wanted = checked
    loading = load_beside(data_dir, wanted, settings)
    from ragdown.engine.snapshot_engine import SnapshotEngine

    snapshot = SnapshotEngine.open(docs, data_dir, loading, "", settings)
    if snapshot is not None:
        return snapshot
    engine = open_engine(args, settings, loaded=loading.result(), checked=checked)
    if engine.is_empty():
        sync_with_progress(engine)
    return engine


def command_eval(args: argparse.Namespace, settings: ServerSettings) -> int:
    from ragdown.evaluation.command import run_eval
    from ragdown.evaluation.draft_command import refuse_draft_options, run_draft

    if args.draft_from_log:
        return run_draft(args, settings, lambda: open_engine(args, settings), sync_with_progress)
    refuse_draft_options(args)
    return run_eval(args, settings, lambda chosen: open_engine(args, chosen), sync_with_progress)


def add_folder_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`index`, `search` and `eval`: one folder and its index."""

    def folder_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("docs", metavar="DOCS", help="the folder of Markdown files")
        sub.add_argument("--data-dir", help="where the index lives (default: ~/.cache/ragdown/<hash>)")
        sub.add_argument(
            "--embedder", help="minilm (default), granite-small, bge-small, openai:<model>, hash"
        )
        return sub

    index = folder_command("index", "Sync DOCS into its index and print the sync report as JSON.")
    index.add_argument("--full", action="store_true", help="rebuild from every file, reusing stored vectors")
    index.set_defaults(run=command_index)

    search = folder_command(
        "search", "Search DOCS (indexing it first if it has no index) and print hits as JSON."
    )
    search.add_argument("query", metavar="QUERY", nargs="?", help="the words to search for")
    search.add_argument(
        "--queries",
        metavar="FILE",
        help='JSON lines of {"id", "query"} (- for stdin): one {"id", "hits"} line each, one model load',
    )
    search.add_argument("--top-k", type=int, default=10, help=f"hits to return, 1-{MAX_TOP_K} (default 10)")
    search.add_argument("--path-prefix", help="only documents under this folder (like ops/db)")
    search.add_argument("--tag", help="only documents with this tag or a tag nested under it")
    search.set_defaults(run=command_search)
    add_eval_arguments(evaluate := folder_command("eval", EVAL_HELP))
    add_draft_arguments(evaluate)
    evaluate.set_defaults(run=command_eval)
