"""ragdown measured beside its peers (issue 15): qmd, basic-memory and mcp-local-rag, on the same
corpus, the same labelled questions and the same MCP client.

Each peer is installed once in its own folder under the peers dir ($RAGDOWN_PEERS_DIR, default
/tmp/ragdown-peers; reused between runs), from the npm registry or PyPI only, and never becomes a
dependency of ragdown. Each gets its own copy of the corpus (basic-memory rewrites notes). Every peer's
MCP server is spawned over stdio by the official Python `mcp` client (one client for all). Peers run
one after another, never side by side; a peer that fails a step gets "failed: <reason>" in that cell.

Per peer, in order: full index (wall, peak RSS); no-change re-index (median of runs); MCP connect
(process start to `initialize` done) and the first call after it, over a few launches; one long-lived
MCP session: a warm-up round of every question, then timed rounds (p50 / p90), the files of the last
round scored against the labels (a question counts when a labelled file is among the first 5 distinct
files); one-shot CLI searches (wall, peak RSS) where the peer has a search command.

    .venv/bin/python bench/peers/run.py
    .venv/bin/python bench/peers/run.py --peers ragdown,qmd --markdown /tmp/peers.md
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from _common import CORPORA, commit, median, percentile, require
from peers import PEERS, Context, Layout, Peer, PeerError, distinct

HERE = Path(__file__).resolve().parent
TOP_FILES = 5
RESULTS_ASKED = 10


@dataclass
class Measure:
    """One peer's numbers (seconds, MB), and per failed step why there are none."""

    version: str = ""
    errors: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class Proc:
    wall: float
    rss_mb: float
    output: str


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_measured(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float, log: Path) -> Proc:
    """Run `cmd` to the end: its wall time, and its peak RSS (ru_maxrss of os.wait4 for this child, which
    covers the largest of its waited-for descendants too). Output goes to `log` (a full pipe would block
    it). Whatever the process leaves running in its group is killed afterwards."""
    log.parent.mkdir(parents=True, exist_ok=True)
    timed_out = threading.Event()

    def on_timeout(pid: int) -> None:
        timed_out.set()
        kill_group(pid)

    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        timer = threading.Timer(timeout, on_timeout, args=(proc.pid,))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    kill_group(proc.pid)
    output = log.read_text(errors="replace")
    if timed_out.is_set():
        raise PeerError(f"timed out after {timeout:.0f} s")
    result = Proc(wall=wall, rss_mb=usage.ru_maxrss / 1024, output=output)
    if proc.returncode != 0:
        raise ExitError(proc.returncode, result)
    return result


class ExitError(PeerError):
    def __init__(self, code: int, proc: Proc) -> None:
        tail = " ".join(proc.output.strip().splitlines()[-3:])[-300:]
        super().__init__(f"exited {code}: {tail}")
        self.code = code
        self.proc = proc


def copy_corpus(sources: list[Path], docs: Path) -> None:
    docs.mkdir(parents=True)
    for source in sources:
        shutil.copytree(source, docs / source.name)


def load_queries(path: Path) -> list[dict[str, Any]]:
    queries = json.loads(path.read_text())["queries"]
    assert all(q["query"] and q["files"] for q in queries), "every question needs text and labelled files"
    return list(queries)


# --- MCP -----------------------------------------------------------------------------------------


def client_for(peer: Peer, lay: Layout, errlog: TextIO) -> Client:
    command = peer.server(lay)
    params = StdioServerParameters(command=command[0], args=command[1:], env=peer.env(lay), cwd=lay.work)
    # mode="legacy": the plain `initialize` handshake, the same for every peer (no discovery probe).
    return Client(stdio_client(params, errlog=errlog), mode="legacy")


async def call(client: Client, peer: Peer, lay: Layout, query: str) -> tuple[float, list[str]]:
    name, arguments = peer.search_call(query, RESULTS_ASKED)
    start = time.perf_counter()
    result = await client.call_tool(name, arguments)
    elapsed = time.perf_counter() - start
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise PeerError(f"{name} answered an error: {text[:200]}")
    return elapsed, distinct(peer.files(result, lay))


async def connect_once(peer: Peer, lay: Layout, query: str, errlog: TextIO) -> tuple[float, float]:
    with anyio.fail_after(peer.server_timeout):
        start = time.perf_counter()
        async with client_for(peer, lay, errlog) as client:
            connected = time.perf_counter() - start
            first, _ = await call(client, peer, lay, query)
    return connected, first


async def session(
    peer: Peer, lay: Layout, queries: list[str], rounds: int, errlog: TextIO
) -> tuple[list[float], list[list[str]]]:
    """One long-lived session: a warm-up round, then `rounds` timed rounds of every question."""
    latencies: list[float] = []
    files: list[list[str]] = []
    with anyio.fail_after(peer.server_timeout + 30 * (rounds + 1) * len(queries)):
        async with client_for(peer, lay, errlog) as client:
            for round_no in range(rounds + 1):
                round_files = []
                for query in queries:
                    elapsed, found = await call(client, peer, lay, query)
                    round_files.append(found)
                    if round_no:
                        latencies.append(elapsed)
                files = round_files
    return latencies, files


# --- one peer ------------------------------------------------------------------------------------


def step(m: Measure, key: str, fn: Callable[[], None]) -> bool:
    try:
        fn()
        return True
    except PeerError as exc:
        m.errors[key] = str(exc)
    except Exception as exc:  # a peer's failure is a cell, never the end of the run
        m.errors[key] = f"{type(exc).__name__}: {exc}"[:300]
    return False


def measure_peer(peer: Peer, args: argparse.Namespace, queries: list[dict[str, Any]], root: Path) -> Measure:
    m = Measure()
    lay = Layout(
        work=root / peer.name, docs=root / peer.name / "corpus", corpus_names=[c.name for c in args.corpus]
    )
    logs = lay.work / "logs"
    m.values["load_start"] = os.getloadavg()[0]
    print(f"\n== {peer.name}", flush=True)

    def install() -> None:
        m.version = peer.install()
        print(f"   version {m.version}", flush=True)

    if not step(m, "install", install):
        print(f"   install failed: {m.errors['install']}", flush=True)
        return m

    lay.state.mkdir(parents=True)
    copy_corpus(args.corpus, lay.docs)
    env = peer.env(lay)

    def full_index() -> None:
        peer.prepare(lay)
        try:
            proc = run_measured(
                peer.full_index(lay), env, lay.work, args.index_timeout, logs / "full-index.log"
            )
        except ExitError as exc:
            peer.check_full_index(lay, exc.code, exc.proc.output)  # raises unless the peer accepts it
            proc = exc.proc
        else:
            peer.check_full_index(lay, 0, proc.output)
        m.values["full_index"] = (proc.wall, proc.rss_mb)
        print(f"   full index {proc.wall:.1f} s, {proc.rss_mb:.0f} MB", flush=True)

    if not step(m, "full_index", full_index):
        print(f"   full index failed: {m.errors['full_index']}", flush=True)
        peer.after_run(lay)
        return m

    def reindex() -> None:
        walls = []
        for i in range(args.reindex_runs):
            walls.append(
                run_measured(
                    peer.reindex(lay), env, lay.work, args.step_timeout, logs / f"reindex-{i}.log"
                ).wall
            )
        m.values["reindex"] = median(walls)
        print(
            f"   no-change re-index {median(walls):.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)})",
            flush=True,
        )

    step(m, "reindex", reindex)
    texts = [q["query"] for q in queries]

    def connect() -> None:
        connects, firsts = [], []
        with (logs / "mcp-connect.log").open("w") as errlog:
            for i in range(args.launches):
                connected, first = asyncio.run(connect_once(peer, lay, texts[i % len(texts)], errlog))
                connects.append(connected)
                firsts.append(first)
        m.values["connect"] = median(connects)
        m.values["first_call"] = median(firsts)
        print(
            f"   MCP connect {1000 * median(connects):.0f} ms, first call {1000 * median(firsts):.0f} ms "
            f"(launches {', '.join(f'{c:.2f}+{f:.2f}' for c, f in zip(connects, firsts, strict=True))} s)",
            flush=True,
        )

    step(m, "connect", connect)

    def queries_session() -> None:
        with (logs / "mcp-session.log").open("w") as errlog:
            latencies, files = asyncio.run(session(peer, lay, texts, args.rounds, errlog))
        m.values["query_ms"] = (1000 * percentile(latencies, 0.5), 1000 * percentile(latencies, 0.9))
        m.values["answers"] = [
            {"id": q["id"], "kind": q["kind"], "labels": q["files"], "files": found[:RESULTS_ASKED]}
            for q, found in zip(queries, files, strict=True)
        ]
        hits, ranked_first = score(m.values["answers"])
        print(
            f"   MCP query p50 {m.values['query_ms'][0]:.1f} ms, p90 {m.values['query_ms'][1]:.1f} ms; "
            f"top {TOP_FILES}: {hits}/{len(queries)}, first: {ranked_first}/{len(queries)}",
            flush=True,
        )

    step(m, "session", queries_session)

    def cli() -> None:
        picked = texts[: args.cli_queries]
        commands = [peer.cli_search(lay, text, RESULTS_ASKED) for text in picked]
        if any(c is None for c in commands):
            m.values["cli"] = None
            return
        runs = [
            run_measured(c, env, lay.work, args.step_timeout, logs / f"cli-search-{i}.log")
            for i, c in enumerate(commands)
            if c is not None
        ]
        m.values["cli"] = (median([r.wall for r in runs]), max(r.rss_mb for r in runs))
        print(f"   one-shot search {m.values['cli'][0]:.2f} s, {m.values['cli'][1]:.0f} MB", flush=True)

    step(m, "cli", cli)
    peer.after_run(lay)
    m.values["load_end"] = os.getloadavg()[0]
    return m


def score(answers: list[dict[str, Any]], kind: str | None = None) -> tuple[int, int]:
    """(questions with a labelled file among the first TOP_FILES distinct files, ... ranked first)."""
    picked = [a for a in answers if kind is None or a["kind"] == kind]
    top = sum(1 for a in picked if set(a["labels"]) & set(a["files"][:TOP_FILES]))
    first = sum(1 for a in picked if a["files"][:1] and a["files"][0] in a["labels"])
    return top, first


# --- the table -----------------------------------------------------------------------------------


def cell(m: Measure, key: str, render: Callable[[Any], str], step_name: str | None = None) -> str:
    """The rendering of m.values[key]; or why it is missing: its own step failed, or a step before it."""
    step_name = step_name or key
    for blocker in ("install", "full_index"):
        if blocker in m.errors and blocker != step_name:
            return f"— ({blocker.replace('_', ' ')} failed)"
    if step_name in m.errors:
        return f"failed: {m.errors[step_name]}"
    return render(m.values[key]) if key in m.values else "—"


def table(results: dict[str, Measure], peers: dict[str, Peer], n: int) -> str:
    def answers(kind: str | None, first: bool = False) -> Callable[[Any], str]:
        def render(values: list[dict[str, Any]]) -> str:
            top, ranked = score(values, kind)
            total = sum(1 for a in values if kind is None or a["kind"] == kind)
            return f"{ranked if first else top}/{total}"

        return render

    def split(values: list[dict[str, Any]]) -> str:
        return f"{answers('concept')(values)} / {answers('identifier')(values)}"

    def ms(v: float) -> str:
        return f"{1000 * v:,.0f}"

    def pair(fmt: str) -> Callable[[Any], str]:
        return lambda v: "—" if v is None else fmt.format(*v)

    rows: list[tuple[str, Callable[[str, Measure], str]]] = [
        ("version", lambda name, m: m.version or f"failed: {m.errors.get('install', '?')}"),
        ("search, offline", lambda name, m: peers[name].offline),
        (
            f"files found in the top {TOP_FILES} (of {n} labelled questions)",
            lambda name, m: cell(m, "answers", answers(None), "session"),
        ),
        ("— plain-words / identifier questions", lambda name, m: cell(m, "answers", split, "session")),
        (
            "labelled file ranked first",
            lambda name, m: cell(m, "answers", answers(None, first=True), "session"),
        ),
        (
            "MCP query p50 / p90 (ms, one long-lived session)",
            lambda name, m: cell(m, "query_ms", pair("{:.1f} / {:.1f}"), "session"),
        ),
        ("MCP connect: process start to `initialize` done (ms)", lambda name, m: cell(m, "connect", ms)),
        ("first call after connect (ms)", lambda name, m: cell(m, "first_call", ms, "connect")),
        (
            "one-shot CLI search: wall (s) / peak RSS (MB)",
            lambda name, m: cell(m, "cli", pair("{:.2f} / {:.0f}")),
        ),
        ("no-change re-index, whole process (s)", lambda name, m: cell(m, "reindex", lambda v: f"{v:.2f}")),
        (
            "full index: wall (s) / peak RSS (MB)",
            lambda name, m: cell(m, "full_index", pair("{:.1f} / {:.0f}")),
        ),
    ]
    lines = ["| | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for label, render in rows:
        cells = (render(name, m).replace("|", "\\|") for name, m in results.items())
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(
    args: argparse.Namespace, results: dict[str, Measure], peers: dict[str, Peer], n: int, wall: float
) -> str:
    corpus = " + ".join(f"{c.name}/ ({sum(1 for _ in c.rglob('*.md'))} .md)" for c in args.corpus)
    lines = [
        f"## Peers — {date.today().isoformat()}, commit {args.commit}",
        "",
        "```",
        command_line(),
        "```",
        "",
        f"Corpus: {corpus}, one folder, a copy per peer. {n} labelled questions (bench/peers/queries.json), "
        f"{RESULTS_ASKED} results asked per search. MCP: the official Python `mcp` client over stdio; "
        f"{args.launches} launches for connect, {args.rounds} timed rounds after a warm-up round for "
        "queries. "
        f"Whole run: {wall / 60:.1f} min.",
        "",
        table(results, peers, n),
        "",
    ]
    for name, m in results.items():
        peer = peers[name]
        load = m.values.get("load_start"), m.values.get("load_end")
        notes = list(peer.notes)
        if load[0] is not None and load[1] is not None:
            notes.append(f"1-min load average {load[0]:.1f} at its start, {load[1]:.1f} at its end")
        if notes:
            lines.append(f"- {name}: " + "; ".join(notes) + ".")
    return "\n".join(lines) + "\n"


def command_line() -> str:
    return " ".join([".venv/bin/python bench/peers/run.py", *(shlex.quote(a) for a in sys.argv[1:])])


def save(
    path: Path, run_commit: str, results: dict[str, Measure], peers: dict[str, Peer], wall: float
) -> None:
    """Every number and every answer of this run, with the peers' notes (what --reuse reads back)."""
    raw = {
        "date": date.today().isoformat(),
        "commit": run_commit,
        "command": command_line(),
        "wall_s": round(wall, 1),
        "peers": {
            name: {"version": m.version, "errors": m.errors, "notes": peers[name].notes, "values": m.values}
            for name, m in results.items()
        },
    }
    path.write_text(json.dumps(raw, indent=1) + "\n")


def reuse(
    path: Path, names: list[str], queries: list[dict[str, Any]], ctx: Context
) -> dict[str, tuple[Peer, Measure]]:
    """The columns of `names` from an earlier run's --json file (say, the peers' columns when only
    ragdown is measured again). Answers to questions that changed since are dropped, not scored."""
    earlier = json.loads(path.read_text())
    wanted = {q["id"]: q for q in queries}
    columns = {}
    for name in names:
        if name not in earlier.get("peers", {}):
            continue
        raw = earlier["peers"][name]
        peer = PEERS[name](ctx)
        peer.notes = [
            *raw.get("notes", []),
            f"measured {earlier['date']} at commit {earlier['commit']} ({path.name})",
        ]
        values = dict(raw.get("values", {}))
        answers = values.get("answers")
        if answers is not None:
            same = all(
                a["id"] in wanted and set(a["labels"]) == set(wanted[a["id"]]["files"]) for a in answers
            ) and len(answers) == len(queries)
            if not same:
                del values["answers"]
                peer.notes.append(
                    "its answers were to other questions than queries.json's now, so are not scored"
                )
        columns[name] = (
            peer,
            Measure(version=raw.get("version", ""), errors=raw.get("errors", {}), values=values),
        )
    return columns


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="a Markdown folder (repeatable; default: ../shared/bench/corpora's rust-book and fastapi-docs)",
    )
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, of {', '.join(PEERS)}")
    parser.add_argument("--queries", type=Path, default=HERE / "queries.json")
    parser.add_argument(
        "--peers-dir", type=Path, default=Path(os.environ.get("RAGDOWN_PEERS_DIR", "/tmp/ragdown-peers"))
    )
    parser.add_argument(
        "--work", type=Path, help="where the corpus copies and indexes go (default: a temp dir)"
    )
    parser.add_argument(
        "--keep-work", action="store_true", help="keep the work dir (indexes, logs) afterwards"
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed query rounds after the warm-up round")
    parser.add_argument("--launches", type=int, default=3, help="MCP server launches for connect time")
    parser.add_argument("--reindex-runs", type=int, default=3)
    parser.add_argument("--cli-queries", type=int, default=3, help="one-shot CLI searches")
    parser.add_argument("--index-timeout", type=float, default=3600, help="seconds for one full index")
    parser.add_argument("--step-timeout", type=float, default=600, help="seconds for any other command")
    parser.add_argument("--markdown", type=Path, help="also write the section (heading, table, notes) here")
    parser.add_argument("--json", type=Path, help="also write every number and every answer here")
    parser.add_argument(
        "--reuse",
        type=Path,
        help="an earlier run's --json: the table shows its columns for the peers not measured now",
    )
    args = parser.parse_args()

    args.corpus = [
        require(c.resolve()) for c in args.corpus or [CORPORA / "rust-book", CORPORA / "fastapi-docs"]
    ]
    names = [n.strip() for n in args.peers.split(",") if n.strip()]
    unknown = [n for n in names if n not in PEERS]
    if unknown:
        parser.error(f"unknown peers {unknown}; known: {', '.join(PEERS)}")
    queries = load_queries(args.queries)
    args.commit = commit()  # the commit measured, even if the work tree moves on during a long run
    args.peers_dir.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="ragdown-peers-run-", dir=args.work))
    ctx = Context(peers_dir=args.peers_dir, log_dir=root / "install-logs")
    peers = {name: PEERS[name](ctx) for name in names}
    print(f"work dir {root}; peers installed under {args.peers_dir}", flush=True)

    started = time.perf_counter()
    results: dict[str, Measure] = {}
    for name, peer in peers.items():
        results[name] = measure_peer(peer, args, queries, root)
        if args.json:  # after every peer, so a long run that is stopped keeps what it measured
            save(args.json, args.commit, results, peers, time.perf_counter() - started)
    wall = time.perf_counter() - started
    if args.reuse:
        reused = reuse(args.reuse, [n for n in PEERS if n not in results], queries, ctx)
        peers.update({name: peer for name, (peer, _) in reused.items()})
        results.update({name: m for name, (_, m) in reused.items()})
        results = {name: results[name] for name in PEERS if name in results}
    text = report(args, results, peers, len(queries), wall)
    print("\n" + text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.keep_work:
        print(f"kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
