"""`ragdown serve`, `stdio`, and what runs beside a server: `tail-log` and `token`."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ragdown.bounds import is_remote
from ragdown.commands.folder import data_dir_setting
from ragdown.errors import CliError
from ragdown.release_memory import arrow_hands_back_at_once
from ragdown.settings import ServerSettings

if TYPE_CHECKING:
    pass


def command_serve(args: argparse.Namespace, settings: ServerSettings) -> int:
    """The HTTP server over the folders of RAGDOWN_DOCS_DIR (serving/launch.py, once the command line
    is checked here)."""
    if settings.role == "reader":  # it never writes the table
        arrow_hands_back_at_once()
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
    # A session mostly reads, and writes now and then: a few ms more per write for freed pages
    # handed back at once (release_memory.arrow_hands_back_at_once).
    arrow_hands_back_at_once()
    from ragdown.folders.dir_checks import check_data_dir, check_docs_dir, default_data_dir
    from ragdown.indexing.embedders.registry import check_embedder_name
    from ragdown.serving.start_checks import check_disabled_tools

    folder = args.docs or settings.docs_dir
    if folder is None:
        raise CliError("pass the folder to serve (ragdown stdio DOCS) or set RAGDOWN_DOCS_DIR")
    docs = check_docs_dir(Path(folder))
    data_dir = Path(args.data_dir) if args.data_dir else settings.data_dir or default_data_dir(docs)
    check_data_dir(data_dir, docs, data_dir_setting(args, settings))
    check_disabled_tools(settings)
    embedder = args.embedder or settings.embedder
    check_embedder_name(embedder, "--embedder" if args.embedder else "RAGDOWN_EMBEDDER")

    from ragdown.serving.stdio_session import serve_stdio, stdio_engine

    serve_stdio(stdio_engine(docs, data_dir, embedder, settings), docs, settings)
    return 0


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
