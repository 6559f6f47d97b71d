"""The command line of `ragdown eval FOLDER --draft-from-log` (docs/evaluation.md#a-draft-from-the-query-log):
which query log to read, which golden file's questions to skip, and where the draft goes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ragdown.atomic import write_atomic
from ragdown.errors import CliError
from ragdown.evaluation.draft import Gathered, draft, draft_text, gather
from ragdown.evaluation.golden import GoldenLine, read_golden
from ragdown.evaluation.options import GOLDEN_NAME
from ragdown.folders.dir_checks import default_data_dir
from ragdown.search.query_log import LOG_NAME
from ragdown.search.usage import events
from ragdown.settings import ServerSettings

if TYPE_CHECKING:  # the engine loads LanceDB: only once the options are checked
    from ragdown.engine import Engine

MAX_LIMIT = 1000


def log_files(log: str | None, settings: ServerSettings, folder: Path, data_dir: Path) -> list[Path]:
    """The logs to read: the one named, else the server's (RAGDOWN_QUERY_LOG_FILE, RAGDOWN_DATA_DIR),
    else whichever exist of a server's over FOLDER's parent and the index's of FOLDER itself."""
    if log is not None:
        named = [Path(log)]
    elif settings.query_log_file is not None:
        named = [settings.query_log_file]
    elif settings.data_dir is not None:
        named = [settings.data_dir / LOG_NAME]
    else:
        guesses = [default_data_dir(folder.parent, folders_mode=True) / LOG_NAME, data_dir / LOG_NAME]
        found = [p for p in guesses if p.is_file()]
        if not found:
            raise CliError(
                f"no query log at {guesses[0]} nor {guesses[1]}: pass --log FILE (a server keeps "
                "<data dir>/query-log.jsonl with RAGDOWN_QUERY_LOG=true)"
            )
        return found
    for path in named:
        if not path.is_file():
            raise CliError(f"no query log at {path}: pass --log FILE (<data dir>/query-log.jsonl)")
    return named


def with_rotated(paths: list[Path]) -> list[Path]:
    """Each log after its rotated older half (`query-log.jsonl.1`), so events stay oldest first."""
    return [p for path in paths for p in (path.with_name(path.name + ".1"), path)]


# What only scoring takes, and what only a draft takes: each refused with the other.
SCORING_ONLY = ("json", "compare", "hook", "min_hit1", "min_hit5", "min_mrr", "min_ndcg")
DRAFT_ONLY = ("log", "log_folder", "since", "out")


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def refuse_draft_options(args: argparse.Namespace) -> None:
    """Without --draft-from-log: the draft's own options would be ignored, so they are refused."""
    given = [flag(n) for n in DRAFT_ONLY if getattr(args, n) is not None] + (
        ["--force"] if args.force else []
    )
    if given:
        raise CliError(f"{given[0]} goes with --draft-from-log; without it eval scores GOLDEN")


def check_options(args: argparse.Namespace) -> None:
    scoring = [flag(n) for n in SCORING_ONLY if getattr(args, n, None) not in (None, False)]
    if scoring:
        raise CliError(f"{scoring[0]} scores a golden set; --draft-from-log only drafts one")
    if not 1 <= args.limit <= MAX_LIMIT:
        raise CliError(f"--limit must be between 1 and {MAX_LIMIT}, got {args.limit}")
    if args.since is not None and args.since < 1:
        raise CliError(f"--since takes a number of days, 1 or more, got {args.since}")
    if args.out and Path(args.out).exists() and not args.force:
        raise CliError(f"{args.out} exists: pass --force to replace it, or name another --out")


def known_lines(folder: Path, golden: str | None) -> list[GoldenLine]:
    """The golden set the draft adds to: GOLDEN, else the folder's own file when it has one."""
    path = Path(golden) if golden else folder / GOLDEN_NAME
    if golden is None and not path.exists():
        return []
    return read_golden(path)


def run_draft(
    args: argparse.Namespace,
    settings: ServerSettings,
    open_engine: Callable[[], Engine],
    sync: Callable[[Engine], object],
) -> int:
    """Draft from the log and write it: `open_engine` gives FOLDER's engine, which `sync` brings up to
    date before the questions are searched again."""
    check_options(args)
    folder = Path(args.docs)
    name = args.log_folder if args.log_folder is not None else folder.resolve().name
    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir(folder)
    logs = log_files(args.log, settings, folder, data_dir)
    known = known_lines(folder, args.golden)
    gathered: Gathered = gather(events(with_rotated(logs)), name, since_days=args.since)
    if not gathered.asked:
        within = f" in the last {args.since} days" if args.since else ""
        raise CliError(
            f"the query log ({', '.join(map(str, logs))}) holds no searches of the folder {name}{within}: "
            "nothing to draft (--log-folder names the folder as the server knows it)"
        )
    engine = open_engine()
    try:
        sync(engine)
        lines = draft(
            gathered,
            lambda query: engine.search(query, 10),
            limit=args.limit,
            known=[line.query for line in known],
            taken_ids=[line.id for line in known],
        )
    finally:
        engine.close()
    text = draft_text(lines)
    if args.out:
        try:  # exclusive unless --force: a file made meanwhile is not replaced either
            write_atomic(Path(args.out), text.encode("utf-8"), exclusive=not args.force)
        except FileExistsError:
            raise CliError(f"{args.out} exists: pass --force to replace it, or name another --out") from None
    else:
        sys.stdout.write(text)
    said = f"ragdown: drafted {len(lines)} lines from {len(gathered.asked)} distinct questions"
    if known:
        said += " (those already in the golden set skipped)"
    if gathered.hashed:
        said += (
            f"; {gathered.hashed} hook prompts that injected nothing are logged as hashes only "
            "(RAGDOWN_QUERY_LOG_PROMPTS=true keeps their words)"
        )
    print(said + "; confirm each line, then remove its draft key", file=sys.stderr)
    return 0
