"""The `ragdown` command: `index` and `search` a folder (the server commands come with the server)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from ragdown import __version__
from ragdown.bounds import is_remote
from ragdown.errors import CliError, RagdownError
from ragdown.evaluation.command import HELP as EVAL_HELP
from ragdown.evaluation.command import add_eval_arguments, run_eval
from ragdown.evaluation.draft_command import add_draft_arguments, refuse_draft_options, run_draft
from ragdown.search.hit_shapes import cli_hit_json
from ragdown.serving.log_format import configure_logging
from ragdown.settings import ServerSettings, check_lance_threads, settings_refusal

if TYPE_CHECKING:  # the engine brings LanceDB and pyarrow: only the commands that index load it
    from ragdown.engine import Engine
    from ragdown.indexing.sync import SyncReport

REPORT_KEYS = ("added", "updated", "removed", "unchanged", "chunks", "reused", "ms", "failed")
MAX_TOP_K = 100


def report_json(report: SyncReport) -> dict[str, Any]:
    data = report.model_dump()
    return {key: data[key] for key in REPORT_KEYS}


def open_engine(args: argparse.Namespace, settings: ServerSettings) -> Engine:
    from ragdown.engine import Engine, index_location
    from ragdown.folders.dir_checks import check_data_dir, check_docs_dir, default_data_dir
    from ragdown.indexing.active import recorded_embedder
    from ragdown.indexing.embedders.registry import check_embedder_name

    docs = check_docs_dir(Path(args.docs))
    data_dir = Path(args.data_dir) if args.data_dir else settings.data_dir or default_data_dir(docs)
    check_data_dir(data_dir, docs, data_dir_setting(args, settings))
    wanted = args.embedder or settings.embedder
    check_embedder_name(wanted, "--embedder" if args.embedder else "RAGDOWN_EMBEDDER")
    before = recorded_embedder(index_location(data_dir, settings))
    engine = Engine.open(docs, data_dir, wanted, threads=settings.threads, settings=settings)
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
    engine = open_engine(args, settings)
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
    from ragdown.search.filters import SearchFilters

    filters = SearchFilters(path_prefix=args.path_prefix or "", tag=args.tag or "")
    engine = open_engine(args, settings)
    try:
        if engine.is_empty():
            sync_with_progress(engine)
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


def command_eval(args: argparse.Namespace, settings: ServerSettings) -> int:
    if args.draft_from_log:
        return run_draft(args, settings, lambda: open_engine(args, settings), sync_with_progress)
    refuse_draft_options(args)
    return run_eval(args, settings, lambda chosen: open_engine(args, chosen), sync_with_progress)


def command_serve(args: argparse.Namespace, settings: ServerSettings) -> int:
    """The HTTP server over the folders of RAGDOWN_DOCS_DIR (serving/launch.py, once the command line
    is checked here)."""
    from ragdown.serving.launch import serve
    from ragdown.serving.start_checks import check_serve_settings

    if args.examples:
        settings = serve_examples(settings)
    copy_of_folder = settings.docs_dir is None and settings.role == "reader" and is_remote(settings.index_uri)
    if settings.docs_dir is None and not copy_of_folder:
        raise CliError(
            "RAGDOWN_DOCS_DIR is not set; point it at the directory that holds your folders "
            "(or pass --examples to try the bundled ones)"
        )
    if not settings.token and not settings.admin_token and not settings.secure_local_net:
        raise CliError(
            "set RAGDOWN_TOKEN to the bearer token clients must send "
            "(or SECURE_LOCAL_NET=true on a network you trust)"
        )
    check_serve_settings(settings)
    stop_copy = threading.Event()
    if copy_of_folder:
        # A reader with no docs volume reads the folder from beside the index
        # (docs/design.md#readers-without-the-folder).
        from ragdown.engine import index_location
        from ragdown.indexing.folder_copy import restore_for_reader

        own = settings.data_dir
        if own is None:
            raise CliError(
                "a reader without RAGDOWN_DOCS_DIR needs RAGDOWN_DATA_DIR for its copy of the folder"
            )
        docs = restore_for_reader(index_location(own, settings), own, stop_copy)
        settings = settings.model_copy(update={"docs_dir": docs})
    return serve(settings, stop_copy)


def serve_examples(settings: ServerSettings) -> ServerSettings:
    """`serve --examples`: the settings with the docs dir on the examples' own copy (made on the first
    run), so the quick start never writes into the clone (docs/design.md#where-state-lives)."""
    from ragdown.serving.examples import examples_copy

    if settings.docs_dir is not None:
        raise CliError(
            "--examples serves its own copy of the examples, and RAGDOWN_DOCS_DIR names "
            f"{settings.docs_dir}: unset one of them"
        )
    docs, made = examples_copy(settings.cache())
    said = "copied the bundled examples to" if made else "serving the copy of the examples at"
    print(f"ragdown: {said} {docs} (what is written there stays out of the clone)", file=sys.stderr)
    return settings.model_copy(update={"docs_dir": docs})


def command_tail_log(args: argparse.Namespace, settings: ServerSettings) -> int:
    """Follow the query log to stdout across rotation (what the cluster's sidecar runs)."""
    from ragdown.search.query_log import LOG_NAME
    from ragdown.serving.tail_log import main as follow_log

    if args.file:
        path, named = Path(args.file), f"--file {args.file}"
    elif settings.query_log_file is not None:
        path, named = settings.query_log_file, f"RAGDOWN_QUERY_LOG_FILE {settings.query_log_file}"
    elif settings.data_dir is not None:
        path = settings.data_dir / LOG_NAME
        named = f"the query log {path} (in RAGDOWN_DATA_DIR)"
    else:
        raise CliError("pass --file FILE or set RAGDOWN_DATA_DIR (the log is <data dir>/query-log.jsonl)")
    # A sidecar starts before its server has logged anything and says --wait; a person who names
    # a file that is not there is told so rather than left watching nothing.
    if os.path.isdir(path):
        raise CliError(f"{named} is a directory; pass the query log file (query-log.jsonl)")
    if not args.wait and not os.path.exists(path):
        raise CliError(
            f"{named} does not exist; the server writes it with RAGDOWN_QUERY_LOG=true "
            "(--wait follows it once it appears)"
        )
    return follow_log(path)


def command_stdio(args: argparse.Namespace, settings: ServerSettings) -> int:
    """One folder over stdio (stdout carries the protocol; logs go to stderr)."""
    import anyio

    from ragdown.folders.dir_checks import check_data_dir, check_docs_dir, default_data_dir
    from ragdown.folders.registry import read_folder
    from ragdown.folders.scope import Scope
    from ragdown.indexing.embedders.registry import check_embedder_name
    from ragdown.serving.deferred import DeferredEngine
    from ragdown.serving.start_checks import check_disabled_tools
    from ragdown.serving.tools import Endpoint, build_server

    folder = args.docs or settings.docs_dir
    if folder is None:
        raise CliError("pass the folder to serve (ragdown stdio DOCS) or set RAGDOWN_DOCS_DIR")
    docs = check_docs_dir(Path(folder))
    data_dir = Path(args.data_dir) if args.data_dir else settings.data_dir or default_data_dir(docs)
    check_data_dir(data_dir, docs, data_dir_setting(args, settings))
    check_disabled_tools(settings)
    embedder = args.embedder or settings.embedder
    check_embedder_name(embedder, "--embedder" if args.embedder else "RAGDOWN_EMBEDDER")

    def load() -> Engine:
        from ragdown.engine import Engine

        engine = Engine.open(docs, data_dir, embedder, threads=settings.threads, settings=settings)
        engine.start()
        engine.warm()
        return engine

    # The transport connects before the model loads; calls made meanwhile wait for it.
    engine = DeferredEngine(load)
    named = read_folder(docs.parent, docs.name)
    endpoint = Endpoint(
        engine=cast("Engine", engine),
        scope=Scope(),
        name=f"ragdown-{docs.name}",
        title=named.title if named else docs.name,
        read_only=settings.read_only,
        disabled=settings.disabled_tool_names(),
        local=True,
    )
    try:
        anyio.run(build_server(endpoint).run_stdio_async)
    finally:
        engine.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragdown", description="Markdown folders for AI agents.")
    parser.add_argument("--version", action="version", version=f"ragdown {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the index does")
    commands = parser.add_subparsers(dest="command", required=True)
    add_folder_commands(commands)
    add_server_commands(commands)
    return parser


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


def add_server_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`serve`, `stdio`, and what runs beside a server: `tail-log` and `token`."""
    serve = commands.add_parser(
        "serve",
        help="Serve the folders of RAGDOWN_DOCS_DIR over HTTP (MCP at /mcp/<folder>).",
        description="Serve the folders of RAGDOWN_DOCS_DIR: MCP at /mcp/<folder>, status at /api/status. "
        "Needs RAGDOWN_TOKEN (or SECURE_LOCAL_NET=true); PORT sets the port (3000).",
    )
    serve.add_argument(
        "--examples",
        action="store_true",
        help="serve a copy of the repository's examples/, made in ~/.cache/ragdown/examples on the first run "
        "(instead of RAGDOWN_DOCS_DIR)",
    )
    serve.set_defaults(run=command_serve)

    stdio = commands.add_parser("stdio", help="Serve one folder over MCP stdio (for a local agent).")
    stdio.add_argument("docs", metavar="DOCS", nargs="?", help="the folder (default: RAGDOWN_DOCS_DIR)")
    stdio.add_argument("--data-dir", help="where the index lives (default: ~/.cache/ragdown/<hash>)")
    stdio.add_argument("--embedder", help="minilm (default), granite-small, bge-small, openai:<model>, hash")
    stdio.set_defaults(run=command_stdio)

    tail = commands.add_parser(
        "tail-log", help="Follow the query log to stdout, across rotation (for a log-shipping sidecar)."
    )
    tail.add_argument("--file", help="the log file (default: <RAGDOWN_DATA_DIR>/query-log.jsonl)")
    tail.add_argument(
        "--wait", action="store_true", help="wait for a log file that does not exist yet (a sidecar's case)"
    )
    tail.set_defaults(run=command_tail_log)

    token = commands.add_parser(
        "token",
        help="Make an agent token for one folder: prints the token, and the entry its .ragdown.json "
        "`tokens` list (or PATCH /api/folders/<folder>) takes.",
    )
    token.add_argument("name", help="what the token is for (letters, digits, _ . -), e.g. team-a-claude")
    token.set_defaults(run=command_token)


def command_token(args: argparse.Namespace, settings: ServerSettings) -> int:
    """A new folder token: only its SHA-256 is stored, so this is the one time it is shown."""
    import secrets

    from ragdown.folders.manage import TOKEN_NAME_RE
    from ragdown.folders.registry import token_digest

    if not TOKEN_NAME_RE.match(args.name):
        raise CliError(f"not a token name: {args.name!r} (1 to 64 letters, digits, _ . -)")
    value = secrets.token_urlsafe(32)
    print(f"token: {value}")
    print("entry: " + json.dumps({"name": args.name, "sha256": token_digest(value)}))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    try:
        try:
            settings = ServerSettings()
        except ValidationError as error:
            raise settings_refusal(error) from None
        check_lance_threads()
        return int(args.run(args, settings))
    except RagdownError as error:
        print(f"ragdown: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ragdown: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
