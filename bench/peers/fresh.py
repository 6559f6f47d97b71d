"""Fresh MCP sessions on the large corpus (issue 27): what an agent that spawns a server per session sees.

    # the "before" of issue 27 (bench/README.md, 2026-12-03): ragdown at the checkout given, then qmd
    # 2.8.3 BM25-only; /work/wt/bench's server/ is 75c17c3's
    /work/main/.venv/bin/python bench/peers/fresh.py --ragdown-src /work/wt/bench \\
        --json /tmp/ragdown-fresh-before-75c17c3.json --markdown /tmp/ragdown-fresh-before-75c17c3.md
    # ragdown only, against another worktree, its index in a fresh data dir:
    /work/main/.venv/bin/python bench/peers/fresh.py --systems ragdown --ragdown-src /work/wt/other \\
        --ragdown-data /tmp/ragdown-large-data-other --json /tmp/fresh-other.json

The corpus is bench/large_corpus.py's (>= 25,000 sections, built under /tmp once and reused). ragdown
indexes it in --ragdown-data, qmd (installed by peers.py under the peers dir: Node 22 and qmd from npm)
its own copy under --qmd-work; both kept between runs. Before its sessions each system re-indexes (a
no-change `ragdown index` / `qmd update`, timed), so the index measured is the current code's.

Per system in turn (never side by side), --sessions fresh sessions, each: spawn the stdio server with
the official Python `mcp` client, time spawn → `initialize` done ("connect") and spawn → `tools/list`
answered ("tools listed"), then send the first --queries questions one after another (bench/peers/
queries.json, rust-book and fastapi-docs alternating), timing each: the first query's latency, p50/p90
over the first 5 and over the first 20. After the queries, the resident memory of the server's process
tree (VmRSS from /proc/<pid>/status, and PSS from /proc/<pid>/smaps_rollup). Medians over sessions.

ragdown only, then: RSS and PSS per process with 1 and with 3 `ragdown stdio` processes open on the same
index at once (each has answered the first --reader-queries questions first). RSS counts shared mmap
pages in every process that maps them; PSS splits them between the processes, so PSS is what an extra
reader really costs.

With new code over an index an older commit built, copy the data dir and pass --rebuild, which runs
`ragdown index --full` first (every file re-read, stored vectors reused, no re-embedding):

    cp -a /tmp/ragdown-large-data /tmp/ragdown-large-data-after
    /work/main/.venv/bin/python bench/peers/fresh.py --ragdown-src /work/main --rebuild \\
        --ragdown-data /tmp/ragdown-large-data-after --json /tmp/ragdown-fresh-after.json

--ragdown-src puts CHECKOUT/server first on PYTHONPATH for every ragdown process (the venv is the one
running this script), so another worktree's code can be measured with the same command.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common and large_corpus

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

import large_corpus
from _common import REPO, code_commit, median, percentile
from peers import Context, Layout, Peer, PeerError, Qmd, Ragdown

HERE = Path(__file__).resolve().parent
RESULTS_ASKED = 10
WINDOWS = (1, 5, 20)


# --- where each system's index lives ------------------------------------------------------------


@dataclass
class FixedLayout(Layout):
    """A Layout whose state folder is given (ragdown's data dir), not work/state."""

    data_dir: Path | None = None

    @property
    def state(self) -> Path:
        return self.data_dir if self.data_dir is not None else self.work / "state"


class SourceRagdown(Ragdown):
    """ragdown from a given checkout: CHECKOUT/server first on PYTHONPATH of every process."""

    def __init__(self, ctx: Context, src: Path) -> None:
        super().__init__(ctx)
        self.src = src

    def env(self, lay: Layout) -> dict[str, str]:
        env = super().env(lay)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(self.src / "server"), *filter(None, [env.get("PYTHONPATH")])]
        )
        env["RAGDOWN_WATCH"] = "false"  # stdio would otherwise watch 10k files; not what is measured
        return env

    def install(self) -> str:
        out = subprocess.run(
            self.command("--version"), env=self.env(FixedLayout(Path("."), Path("."), [])),
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if out.returncode != 0:
            raise PeerError(f"`ragdown --version` failed: {out.stderr.strip()[-300:]}")
        return f"{out.stdout.strip().split()[-1]} ({code_commit(self.src)})"


def why(exc: BaseException) -> str:
    """The first real error inside (nested) exception groups, as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:300]


# --- process memory ------------------------------------------------------------------------------


def children_of(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError):
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry.name))
    return kids


def tree(pid: int) -> list[int]:
    """pid and all its descendants."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children_of(p))
    return found


def memory_of(pid: int) -> dict[str, Any]:
    """VmRSS and PSS (MB) of one process, and its command's first words."""
    rss = pss = 0.0
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1]) / 1024
    with contextlib.suppress(OSError):
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        name = " ".join(Path(c.decode(errors="replace")).name if i == 0 else c.decode(errors="replace")
                        for i, c in enumerate(cmd[:4]) if c)  # fmt: skip
    return {
        "pid": pid,
        "cmd": name if "name" in locals() else "?",
        "rss_mb": round(rss, 1),
        "pss_mb": round(pss, 1),
    }


def tree_memory(root_pid: int) -> dict[str, Any]:
    procs = [memory_of(p) for p in tree(root_pid)]
    return {
        "rss_mb": round(sum(p["rss_mb"] for p in procs), 1),
        "pss_mb": round(sum(p["pss_mb"] for p in procs), 1),
        "processes": procs,
    }


def server_pids(before: set[int]) -> list[int]:
    """Our direct children that were not there before the client spawned its server."""
    return [p for p in children_of(os.getpid()) if p not in before]


# --- sessions ------------------------------------------------------------------------------------


def client_for(peer: Peer, lay: Layout) -> Client:
    command = peer.server(lay)
    params = StdioServerParameters(command=command[0], args=command[1:], env=peer.env(lay), cwd=lay.work)
    errlog = (lay.work / "fresh-server-stderr.log").open("a")
    # mode="legacy": the plain `initialize` handshake, as bench/peers/run.py does.
    return Client(stdio_client(params, errlog=errlog), mode="legacy")


async def ask(client: Client, peer: Peer, query: str) -> float:
    name, arguments = peer.search_call(query, RESULTS_ASKED)
    start = time.perf_counter()
    result = await client.call_tool(name, arguments)
    elapsed = time.perf_counter() - start
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise PeerError(f"{name} answered an error: {text[:200]}")
    return elapsed


async def fresh_session(peer: Peer, lay: Layout, queries: list[str]) -> dict[str, Any]:
    before = set(children_of(os.getpid()))
    with anyio.fail_after(peer.server_timeout + 60 * len(queries)):
        spawned = time.perf_counter()
        async with client_for(peer, lay) as client:
            connected = time.perf_counter() - spawned
            await client.list_tools()
            listed = time.perf_counter() - spawned
            latencies = [await ask(client, peer, q) for q in queries]
            pids = server_pids(before)
            memory = [tree_memory(p) for p in pids]
    return {
        "connect_s": connected,
        "tools_listed_s": listed,
        "latencies_s": latencies,
        "rss_mb": round(sum(m["rss_mb"] for m in memory), 1),
        "pss_mb": round(sum(m["pss_mb"] for m in memory), 1),
        "processes": [p for m in memory for p in m["processes"]],
    }


async def readers_open(peer: Peer, lay: Layout, queries: list[str], count: int) -> dict[str, Any]:
    """`count` servers open at once on one index, each having answered `queries`: memory per process."""
    before = set(children_of(os.getpid()))
    with anyio.fail_after(count * (peer.server_timeout + 60 * len(queries))):
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(count):
                client = await stack.enter_async_context(client_for(peer, lay))
                for q in queries:
                    await ask(client, peer, q)
            await anyio.sleep(1)
            trees = [tree_memory(p) for p in server_pids(before)]
    return {
        "processes": count,
        "rss_mb_each": [t["rss_mb"] for t in trees],
        "pss_mb_each": [t["pss_mb"] for t in trees],
        "rss_mb_sum": round(sum(t["rss_mb"] for t in trees), 1),
        "pss_mb_sum": round(sum(t["pss_mb"] for t in trees), 1),
        "trees": trees,
    }


def summarise(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """Per session: first query, p50/p90 of the first 5 and 20; then the median of each over sessions."""
    per = []
    for s in sessions:
        lat = s["latencies_s"]
        row = {"connect_ms": 1000 * s["connect_s"], "tools_listed_ms": 1000 * s["tools_listed_s"],
               "first_query_ms": 1000 * lat[0], "rss_mb": s["rss_mb"], "pss_mb": s["pss_mb"]}  # fmt: skip
        for n in WINDOWS[1:]:
            if len(lat) >= n:
                row[f"p50_first{n}_ms"] = 1000 * percentile(lat[:n], 0.5)
                row[f"p90_first{n}_ms"] = 1000 * percentile(lat[:n], 0.9)
        per.append(row)
    keys = per[0].keys() if per else []
    return {
        "median": {k: round(median([r[k] for r in per]), 1) for k in keys},
        "min": {k: round(min(r[k] for r in per), 1) for k in keys},
        "max": {k: round(max(r[k] for r in per), 1) for k in keys},
    }


# --- one system ----------------------------------------------------------------------------------


@dataclass
class Result:
    version: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def timed(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float) -> float:
    started = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if out.returncode != 0:
        raise PeerError(
            f"{shlex.join(cmd[:4])} … exited {out.returncode}: {(out.stderr or out.stdout)[-400:]}"
        )
    return time.perf_counter() - started


def ensure_index(name: str, peer: Peer, lay: FixedLayout, res: Result, timeout: float, rebuild: bool) -> None:
    """A first full index when there is none yet (niced: the machine is shared), or with `rebuild` a
    `ragdown index --full` (every file re-read, stored vectors reused: what another version of the code
    needs to write its own index files over an index an older one built); then the no-change re-index
    every run does (timed)."""
    env = peer.env(lay)
    marker = lay.work / f"{name}-indexed"
    if not marker.exists():
        print(f"   full index of {lay.docs} (first run; takes minutes)", flush=True)
        lay.state.mkdir(parents=True, exist_ok=True)
        res.values["full_index_s"] = timed(["nice", *peer.full_index(lay)], env, lay.work, timeout)
        marker.write_text(json.dumps({"at": time.time()}) + "\n")
        print(f"   full index {res.values['full_index_s']:.0f} s", flush=True)
    elif rebuild and name == "ragdown":
        res.values["rebuild_s"] = timed(["nice", *peer.full_index(lay), "--full"], env, lay.work, timeout)
        print(f"   index --full (vectors reused) {res.values['rebuild_s']:.0f} s", flush=True)
    res.values["reindex_s"] = timed(peer.reindex(lay), env, lay.work, timeout)
    print(f"   no-change re-index {res.values['reindex_s']:.2f} s", flush=True)


def measure(name: str, peer: Peer, lay: FixedLayout, args: argparse.Namespace, queries: list[str]) -> Result:
    res = Result()
    res.values["load_start"] = os.getloadavg()[0]
    print(f"\n== {name} (1-min load {res.values['load_start']:.1f})", flush=True)
    try:
        res.version = peer.install()
        print(f"   version {res.version}", flush=True)
        lay.work.mkdir(parents=True, exist_ok=True)
        if name == "qmd" and not lay.docs.exists():
            shutil.copytree(args.corpus, lay.docs)  # its own copy, as in bench/peers/run.py
        ensure_index(name, peer, lay, res, args.index_timeout, args.rebuild)
    except (PeerError, subprocess.TimeoutExpired) as exc:
        res.errors["setup"] = str(exc)[:500]
        print(f"   failed: {res.errors['setup']}", flush=True)
        return res

    sessions = []
    for i in range(args.sessions):
        try:
            s = asyncio.run(fresh_session(peer, lay, queries))
        except Exception as exc:  # a failed session is a note, never the end of the run
            res.errors[f"session-{i}"] = why(exc)
            print(f"   session {i + 1}: failed {res.errors[f'session-{i}']}", flush=True)
            continue
        sessions.append(s)
        lat = s["latencies_s"]
        print(
            f"   session {i + 1}: connect {1000 * s['connect_s']:.0f} ms, "
            f"tools {1000 * s['tools_listed_s']:.0f} ms, "
            f"first query {1000 * lat[0]:.0f} ms, p50/p90 of {len(lat)} "
            f"{1000 * percentile(lat, 0.5):.1f}/{1000 * percentile(lat, 0.9):.1f} ms, "
            f"RSS {s['rss_mb']:.0f} MB (PSS {s['pss_mb']:.0f})",
            flush=True,
        )
    res.values["sessions"] = sessions
    if sessions:
        res.values["summary"] = summarise(sessions)

    if name == "ragdown":
        for count in args.readers:
            try:
                r = asyncio.run(readers_open(peer, lay, queries[: args.reader_queries], count))
            except Exception as exc:
                res.errors[f"readers-{count}"] = why(exc)
                print(f"   {count} readers: failed {res.errors[f'readers-{count}']}", flush=True)
                continue
            res.values[f"readers_{count}"] = r
            print(
                f"   {count} stdio open at once: RSS each {r['rss_mb_each']} MB (sum {r['rss_mb_sum']:.0f}), "
                f"PSS each {r['pss_mb_each']} MB (sum {r['pss_mb_sum']:.0f})",
                flush=True,
            )
    res.values["load_end"] = os.getloadavg()[0]
    print(f"   1-min load at its end {res.values['load_end']:.1f}", flush=True)
    return res


# --- report --------------------------------------------------------------------------------------


def table(results: dict[str, Result]) -> str:
    def med(r: Result, key: str, fmt: str = "{:,.0f}") -> str:
        if "summary" not in r.values:
            return "failed: " + "; ".join(r.errors.values())[:120] if r.errors else "—"
        s = r.values["summary"]
        if key not in s["median"]:
            return "—"
        return f"{fmt.format(s['median'][key])} ({fmt.format(s['min'][key])}–{fmt.format(s['max'][key])})"

    def pair(r: Result, a: str, b: str) -> str:
        if "summary" not in r.values or a not in r.values["summary"]["median"]:
            return "—"
        m = r.values["summary"]["median"]
        return f"{m[a]:,.1f} / {m[b]:,.1f}"

    def readers(r: Result, count: int) -> str:
        v = r.values.get(f"readers_{count}")
        if v is None:
            return "—" if name_of(r) != "ragdown" else r.errors.get(f"readers-{count}", "—")
        rss = ", ".join(f"{x:.0f}" for x in v["rss_mb_each"])
        pss = ", ".join(f"{x:.0f}" for x in v["pss_mb_each"])
        return f"RSS {rss} / PSS {pss}"

    def seconds(r: Result, key: str) -> str:
        return f"{r.values[key]:.2f}" if key in r.values else "—"

    names = {id(r): n for n, r in results.items()}

    def name_of(r: Result) -> str:
        return names[id(r)]

    rows: list[tuple[str, Callable[[Result], str]]] = [
        ("version", lambda r: r.version or "failed"),
        ("no-change re-index before the sessions (s)", lambda r: seconds(r, "reindex_s")),
        ("spawn → `initialize` done (ms)", lambda r: med(r, "connect_ms")),
        ("spawn → tools listed (ms)", lambda r: med(r, "tools_listed_ms")),
        ("first query (ms)", lambda r: med(r, "first_query_ms")),
        ("first 5 queries: p50 / p90 (ms)", lambda r: pair(r, "p50_first5_ms", "p90_first5_ms")),
        ("first 20 queries: p50 / p90 (ms)", lambda r: pair(r, "p50_first20_ms", "p90_first20_ms")),
        ("server RSS after the queries, whole process tree (MB)", lambda r: med(r, "rss_mb")),
        ("— its PSS (MB)", lambda r: med(r, "pss_mb")),
        ("1 stdio process open: RSS / PSS (MB)", lambda r: readers(r, 1)),
        ("3 stdio processes open at once: RSS / PSS each (MB)", lambda r: readers(r, 3)),
    ]  # fmt: skip
    lines = ["| | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for label, render in rows:
        lines.append(
            f"| {label} | " + " | ".join(render(r).replace("|", "\\|") for r in results.values()) + " |"
        )
    return "\n".join(lines)


def command_line() -> str:
    return " ".join(
        ["/work/main/.venv/bin/python bench/peers/fresh.py", *(shlex.quote(a) for a in sys.argv[1:])]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--systems", default="ragdown,qmd", help="comma-separated, of ragdown, qmd; run in turn"
    )
    parser.add_argument(
        "--ragdown-src", type=Path, default=REPO, help="the ragdown checkout to measure (its server/)"
    )
    parser.add_argument(
        "--corpus", type=Path, default=large_corpus.DEFAULT_ROOT, help="built there if missing"
    )
    parser.add_argument("--ragdown-data", type=Path, default=Path("/tmp/ragdown-large-data"))
    parser.add_argument(
        "--qmd-work", type=Path, default=Path("/tmp/ragdown-large-qmd"), help="qmd's corpus copy and state"
    )
    parser.add_argument(
        "--peers-dir", type=Path, default=Path(os.environ.get("RAGDOWN_PEERS_DIR", "/tmp/ragdown-peers"))
    )
    parser.add_argument("--queries-file", type=Path, default=HERE / "queries.json")
    parser.add_argument("--sessions", type=int, default=5, help="fresh sessions per system")
    parser.add_argument(
        "--queries", type=int, default=20, help="questions per session (>= 20 for the p90 of 20)"
    )
    parser.add_argument("--readers", default="1,3", help="ragdown stdio processes open at once, for memory")
    parser.add_argument("--reader-queries", type=int, default=5, help="questions each reader answers first")
    parser.add_argument("--index-timeout", type=float, default=7200)
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="ragdown: `index --full` (vectors reused) before the sessions, for an index built by other code",
    )
    parser.add_argument("--json", type=Path, help="every number of the run")
    parser.add_argument("--markdown", type=Path, help="the table and notes")  # fmt: skip
    args = parser.parse_args()
    args.readers = [int(n) for n in args.readers.split(",") if n.strip()]
    args.ragdown_src = args.ragdown_src.resolve()
    if not (args.ragdown_src / "server" / "ragdown").is_dir():
        parser.error(f"{args.ragdown_src} has no server/ragdown")

    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    load_start = os.getloadavg()[0]
    # The large corpus is built when missing; any other existing folder is measured as it is.
    if args.corpus.resolve() == large_corpus.DEFAULT_ROOT.resolve() or not args.corpus.exists():
        args.corpus = large_corpus.materialise(args.corpus)
    labelled = json.loads(args.queries_file.read_text())["queries"]
    by_source: dict[str, list[str]] = {}
    for q in labelled:
        by_source.setdefault(q["files"][0].split("/", 1)[0], []).append(q["query"])
    mixed = [q for group in zip(*by_source.values(), strict=False) for q in group]
    mixed += [q["query"] for q in labelled if q["query"] not in mixed]
    queries = mixed[: args.queries]

    ctx = Context(peers_dir=args.peers_dir, log_dir=args.peers_dir / "install-logs")
    parts = large_corpus.parts_of(args.corpus)
    systems: dict[str, tuple[Peer, FixedLayout]] = {
        "ragdown": (
            SourceRagdown(ctx, args.ragdown_src),
            FixedLayout(work=args.ragdown_data.parent / (args.ragdown_data.name + "-work"), docs=args.corpus,
                        corpus_names=parts, data_dir=args.ragdown_data),
        ),
        "qmd": (Qmd(ctx), FixedLayout(work=args.qmd_work, docs=args.qmd_work / "corpus", corpus_names=parts)),
    }  # fmt: skip
    names = [n.strip() for n in args.systems.split(",") if n.strip()]
    unknown = [n for n in names if n not in systems]
    if unknown:
        parser.error(f"unknown systems {unknown}")
    # ragdown's data dir may have been indexed by bench/large_corpus.py --index (no marker then).
    rd_work = systems["ragdown"][1].work
    rd_work.mkdir(parents=True, exist_ok=True)
    if (args.ragdown_data / "").exists() and any(args.ragdown_data.iterdir()):
        (rd_work / "ragdown-indexed").touch()

    corpus = large_corpus.describe(args.corpus)
    print(
        f"corpus {args.corpus}: {corpus['files_total']} files, {corpus['chunks_total']} sections", flush=True
    )
    results: dict[str, Result] = {}
    raw: dict[str, Any] = {}

    def save() -> None:
        raw.update(
            {
                "started": started_at,
                "command": command_line(),
                "bench_commit": code_commit(REPO),
                "ragdown_src": str(args.ragdown_src),
                "ragdown_commit": code_commit(args.ragdown_src),
                "corpus": corpus,
                "queries": queries,
                "load_start": load_start,
                "load_end": os.getloadavg()[0],
                "cpus": os.cpu_count(),
                "systems": {
                    n: {"version": r.version, "errors": r.errors, "values": r.values}
                    for n, r in results.items()
                },
            }
        )
        if args.json:
            args.json.write_text(json.dumps(raw, indent=1) + "\n")

    for name in names:
        peer, lay = systems[name]
        results[name] = measure(name, peer, lay, args, queries)
        save()
    text = "\n".join(
        [
            f"Fresh sessions, {started_at}, ragdown {raw['ragdown_commit']} ({args.ragdown_src})",
            "",
            "```",
            command_line(),
            "```",
            "",
            f"Corpus {args.corpus}: {corpus['files_total']:,} files, {corpus['chunks_total']:,} sections "
            f"({', '.join(f'{k} {v:,}' for k, v in corpus['chunks'].items())}). "
            f"{args.sessions} fresh sessions per system, {len(queries)} questions each; "
            "medians (min–max over sessions).",
            "",
            table(results),
            "",
            f"1-min load average: {load_start:.1f} at the start, {raw['load_end']:.1f} at the end; "
            "per system "
            + "; ".join(
                f"{n} {r.values.get('load_start', 0):.1f} → {r.values.get('load_end', 0):.1f}"
                for n, r in results.items()
            )
            + f" ({os.cpu_count()} cores).",
        ]
    )
    print("\n" + text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
