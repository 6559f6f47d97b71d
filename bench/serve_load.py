"""Serving under load: `ragdown_recall` and `ragdown_context` over HTTP MCP, many clients at once.

    .venv/bin/python bench/serve_load.py [--embedder minilm] [--corpus fastapi-docs] [--seconds 20]
        [--clients 1,4,16] [--tools ragdown_recall,ragdown_context] [--setups one,readers] [--work DIR]
        [--writes 5]

Copies the corpus into a temporary docs dir (one folder `docs`, MCP on), starts one `ragdown serve`
process and waits for its first sync; then 1, 4 and 16 concurrent clients call each tool back to
back for `--seconds` each. Each client holds one MCP session (the official client over streamable
HTTP). Then two more processes start on the same data dir (readers) and the same runs are spread
round-robin over the primary and the two readers. `--work DIR` keeps the docs copy and the index
there, so a second run skips the first sync's embedding. Queries: the corpus's `## ` headings,
deduplicated and shuffled with a fixed seed.

`--writes RATE` measures reads beside writes: each run is made twice in a row, read-only and then
with one more MCP session (on the primary) starting RATE writes a second, small changes to eight
scratch documents in turn (`ragdown_edit` of one line, or `ragdown_write` appending a paragraph),
each answered only once indexed. A write starts on its schedule whether the earlier ones have been
answered or not (up to 8 at once, as from several agents). Comparing the two rows of one run keeps
the machine's load out of the ratio. `--rounds N` makes the pair N times in a row on the same
server (a shared machine's load moves within a minute, so one pair can say 70% or 90% of the same
code) and reports each round's ratio and their median, after 5 s of calls that are not counted
(the first calls of a server are slower, which flattered the first pair's ratio).

Reported: requests per second, p50/p95 latency in milliseconds, explicit "overloaded" answers (the
client then waits as long as the answer's retry hint says and asks the same again; "retried ok"
counts the retries that were answered), other errors, empty answers, the CPU the servers and this
(client) process used during the run (cores busy on average, and server CPU milliseconds per
answered call), and the share of calls whose query the bench had already sent earlier in its life
(what a server-side cache of queries could answer from memory); with `--writes`, the writes made per
second and their p50/p95 latency. Everything runs on one machine, the clients included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from _common import CORPORA, Server, commit, cpu_seconds, headings, percentile, require

TOKEN = "bench-serve-load"
# Where an overloaded answer says how long to wait (docs/tools.md#calls-errors-and-limits); spelled out
# rather than imported, so this client can load a server of another commit (PYTHONPATH) for a before/after.
RETRY_META = "ragdown/retryAfterSeconds"
FOLDER = "docs"
CLIENTS = (1, 4, 16)
SEED = 5
TOOLS: dict[str, Any] = {
    "ragdown_recall": lambda q: {"query": q, "top_k": 8},
    "ragdown_context": lambda q: {"prompt": q, "top_k": 4},
}


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    overloaded: int = 0
    errors: int = 0
    empty: int = 0
    samples: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    repeats: int = 0
    retried_ok: int = 0
    write_latencies: list[float] = field(default_factory=list)
    write_errors: int = 0

    def error(self, message: str) -> None:
        self.errors += 1
        if len(self.samples) < 3:
            self.samples.append(message[:200])


@dataclass
class Clock:
    """Shared by the clients of one run: how many are warmed up, the start signal, the deadline."""

    start: asyncio.Event = field(default_factory=asyncio.Event)
    warmed: int = 0
    deadline: float = float("inf")


# Every query sent so far in this bench process (warm-up calls included), across runs and servers.
SENT: set[str] = set()

# The writer's documents (under the served folder) and the words its changes are made of.
SCRATCH = "load-scratch"
SCRATCH_FILES = 8
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo")
# Writes under way at once at most (as from that many agents); a write due beyond it waits its turn.
WRITES_IN_FLIGHT = 8


def scratch_text(n: int) -> str:
    return f"# Scratch note {n}\n\ncounter: 0\n\nA note the load bench rewrites while searches run.\n"


async def writer_loop(url: str, rate: float, clock: Clock, run: Run, stamp: str) -> None:
    """A write started every 1/`rate` s until the deadline, whether the earlier ones have been
    answered or not (as from several agents), each answered once the change is indexed: the scratch
    documents in turn, each one's `counter:` line edited, then a paragraph appended to it."""
    counters = [0] * SCRATCH_FILES
    words = random.Random(SEED)
    slots = asyncio.Semaphore(WRITES_IN_FLIGHT)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):

        async def one(tool: str, arguments: dict[str, Any]) -> None:
            async with slots:
                began = time.perf_counter()
                try:
                    result = await client.call_tool(tool, arguments)
                    if result.is_error:
                        run.write_errors += 1
                    else:
                        run.write_latencies.append((time.perf_counter() - began) * 1000)
                except Exception:  # transport failures count as write errors
                    run.write_errors += 1

        for n in range(SCRATCH_FILES):  # fresh documents for this run (the stamp keeps runs apart)
            await client.call_tool(
                "ragdown_write", {"path": f"{SCRATCH}/{stamp}-{n}.md", "text": scratch_text(n)}
            )
        clock.warmed += 1
        await clock.start.wait()
        interval = 1.0 / rate
        due = time.perf_counter()
        k = 0
        arguments: dict[str, Any]
        started: list[asyncio.Task[None]] = []
        while time.perf_counter() < clock.deadline:
            n = k % SCRATCH_FILES
            path = f"{SCRATCH}/{stamp}-{n}.md"
            if (k // SCRATCH_FILES) % 2 == 0:
                old, counters[n] = counters[n], counters[n] + 1
                edit = {"old_text": f"counter: {old}", "new_text": f"counter: {counters[n]}"}
                tool, arguments = "ragdown_edit", {"path": path, "edits": [edit]}
            else:
                said = " ".join(words.choice(WORDS) for _ in range(12))
                tool, arguments = "ragdown_write", {"path": path, "text": said, "append": True}
            k += 1
            started.append(asyncio.create_task(one(tool, arguments)))
            due += interval
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        await asyncio.gather(*started)


async def client_loop(url: str, tool: str, queries: list[str], offset: int, clock: Clock, run: Run) -> None:
    make = TOOLS[tool]
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        SENT.add(queries[offset % len(queries)])
        await client.call_tool(tool, make(queries[offset % len(queries)]))  # warm the session
        clock.warmed += 1
        await clock.start.wait()
        index = offset
        retrying = False
        while time.perf_counter() < clock.deadline:
            if not retrying:
                query = queries[index % len(queries)]
                index += 1
            repeat = query in SENT
            SENT.add(query)
            began = time.perf_counter()
            try:
                result = await client.call_tool(tool, make(query))
            except Exception as error:  # transport failures count as errors
                run.error(f"{type(error).__name__}: {error}")
                continue
            text = "".join(getattr(c, "text", "") for c in result.content)
            if result.is_error:
                retrying = "overloaded" in text
                if retrying:  # as an agent would: wait as long as the hint says, then ask again
                    run.overloaded += 1
                    await asyncio.sleep(float((result.meta or {}).get(RETRY_META, 1)))
                else:
                    run.error(text)
                continue
            if retrying:
                run.retried_ok += 1
                retrying = False
            run.latencies.append((time.perf_counter() - began) * 1000)
            run.repeats += repeat
            if not text.strip():
                run.empty += 1


async def measure(
    servers: list[Server], tool: str, clients: int, seconds: float, queries: list[str], writes: float = 0.0
) -> Run:
    """`clients` sessions spread round-robin over `servers`, all opened and warmed before the clock
    starts, then calling back to back until `seconds` have passed; with `writes`, one more session
    writing that many times a second to the primary meanwhile."""
    run = Run()
    clock = Clock()
    step = max(1, len(queries) // clients)
    tasks = [
        asyncio.create_task(
            client_loop(f"{servers[i % len(servers)].url}/mcp/{FOLDER}", tool, queries, i * step, clock, run)
        )
        for i in range(clients)
    ]
    if writes > 0:
        stamp = f"{tool.removeprefix('ragdown_')}-{clients}-{len(servers)}-{time.monotonic_ns() % 10**6}"
        url = f"{servers[0].url}/mcp/{FOLDER}"
        tasks.append(asyncio.create_task(writer_loop(url, writes, clock, run, stamp)))
    while clock.warmed < len(tasks) and not any(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    cpu_before = [cpu_seconds(s.process.pid) for s in servers]
    client_before = time.process_time()
    began = time.perf_counter()
    clock.deadline = began + seconds
    clock.start.set()
    await asyncio.gather(*tasks)
    run.elapsed = time.perf_counter() - began
    run.client_cpu = time.process_time() - client_before
    run.server_cpu = sum(cpu_seconds(s.process.pid) - b for s, b in zip(servers, cpu_before, strict=True))
    return run


def row(setup: str, tool: str, clients: int, run: Run) -> str:
    count = len(run.latencies)
    p50 = f"{percentile(run.latencies, 0.5):.1f}" if count else "—"
    p95 = f"{percentile(run.latencies, 0.95):.1f}" if count else "—"
    elapsed = run.elapsed or 1.0
    rps, server, client = count / elapsed, run.server_cpu / elapsed, run.client_cpu / elapsed
    per_call = f"{run.server_cpu * 1000 / count:.0f}" if count else "—"
    repeats = f"{100 * run.repeats / count:.0f}%" if count else "—"
    writes = run.write_latencies
    written = (
        f"{len(writes) / elapsed:.1f} | {percentile(writes, 0.5):.0f} | {percentile(writes, 0.95):.0f} | "
        f"{run.write_errors}"
        if writes or run.write_errors
        else "— | — | — | —"
    )
    return (
        f"| {setup} | `{tool}` | {clients} | {count} | {rps:.1f} | {p50} | {p95} | {run.overloaded} | "
        f"{run.retried_ok} | {run.errors} | {run.empty} | {server:.2f} | {per_call} | {client:.2f} | "
        f"{repeats} | {written} |"
    )


def names(text: str, known: tuple[str, ...] | None = None) -> list[str]:
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [c for c in chosen if known is not None and c not in known]
    if unknown:
        raise SystemExit(f"unknown: {', '.join(unknown)} (choose from {', '.join(known or ())})")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--corpus", default="fastapi-docs", help="a folder under shared/bench/corpora")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each measured run")
    parser.add_argument("--clients", default=",".join(map(str, CLIENTS)), help="client counts, e.g. 4,16")
    parser.add_argument("--tools", default=",".join(TOOLS), help="tools to call, comma-separated")
    parser.add_argument("--setups", default="one,readers", help="one (one process), readers (+2 readers)")
    parser.add_argument("--work", type=Path, help="keep the docs copy and the index here between runs")
    parser.add_argument(
        "--writes", type=float, default=0.0, help="also run each measurement beside this many writes a second"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="with --writes: make each read-only, beside-writes pair N times"
    )
    args = parser.parse_args()
    clients = [int(c) for c in names(args.clients)]
    tools = names(args.tools, tuple(TOOLS))
    setups = names(args.setups, ("one", "readers"))

    source = require(CORPORA / args.corpus)
    load = os.getloadavg()[0]
    command = " ".join([".venv/bin/python bench/serve_load.py", *sys.argv[1:]])
    rows: list[str] = []
    samples: list[str] = []
    ratios: list[str] = []
    servers: list[Server] = []
    with tempfile.TemporaryDirectory(prefix="ragdown-serve-load-") as tmp:
        work = args.work or Path(tmp)
        docs = work / "docs-root"
        if not (docs / FOLDER).exists():
            shutil.copytree(source, docs / FOLDER, symlinks=False)
            (docs / FOLDER / ".ragdown.json").write_text(
                json.dumps({"title": "Docs", "mcp": True}), encoding="utf-8"
            )
        queries = headings(docs / FOLDER, SEED)
        data_dir = work / "data"
        try:
            primary = Server(docs, data_dir, args.embedder, work, "primary", TOKEN)
            servers.append(primary)
            began = time.monotonic()
            status = primary.wait(lambda s: not s["syncing"] and s["files"] > 0, "the primary's first sync")
            print(
                f"primary on :{primary.port}: {status['files']} files, {status['chunks']} chunks "
                f"({status['embedder']}), ready in {time.monotonic() - began:.0f} s; {len(queries)} queries",
                file=sys.stderr,
            )

            def measured(setup: str, targets: list[Server]) -> list[str]:
                return run_setup(
                    setup,
                    targets,
                    args.seconds,
                    queries,
                    samples,
                    tools,
                    clients,
                    args.writes,
                    args.rounds,
                    ratios,
                )

            if "one" in setups:
                rows += measured("one process", [primary])
            if "readers" in setups:
                servers += [Server(docs, data_dir, args.embedder, work, f"reader-{n}", TOKEN) for n in (1, 2)]
                for reader in servers[1:]:
                    reader.wait(lambda s: s["role"] == "reader" and s["files"] > 0, reader.name, timeout=300)
                print("two readers up", file=sys.stderr)
                rows += measured("primary + 2 readers", servers)
        finally:
            for server in servers:
                server.stop()
    report(args, command, load, queries, rows, samples, ratios)


def report(
    args: argparse.Namespace,
    command: str,
    load: float,
    queries: list[str],
    rows: list[str],
    samples: list[str],
    ratios: list[str],
) -> None:
    """The section for bench/README.md, on standard output."""
    print(f"## Serving under load — {date.today().isoformat()}, commit {commit()}\n")
    print(f"```\n{command}\n```\n")
    print(
        f"Corpus {args.corpus}, embedder {args.embedder}, {args.seconds:g} s per run, {len(queries)} queries "
        f"(`## ` headings, shuffled with seed {SEED}); `ragdown_recall` top_k 8, `ragdown_context` top_k 4 "
        "without a session. Clients and servers share the machine. Latency in ms over answered calls (a "
        "retry after an overloaded answer is timed on its own); "
        "CPU columns are cores busy on average (server processes together, and this client process) and "
        "the servers' CPU milliseconds per answered call; repeated: calls whose query this bench had sent "
        f"before; 1-minute load average at the start: {load:.2f}."
        + (
            f" Each run read-only, then beside a writer at {args.writes:g} writes/s (`+ writes` rows: "
            "writes made per second, their p50/p95 ms and errors)."
            if args.writes
            else ""
        )
        + "\n"
    )
    print(
        "| setup | tool | clients | calls | req/s | p50 ms | p95 ms | overloaded | retried ok | other errors "
        "| empty | server CPU | server CPU ms/call | client CPU | repeated | writes/s | write p50 ms "
        "| write p95 ms | write errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for line in rows:
        print(line)
    print(
        "\nTarget: p95 under 100 ms at 4 clients on one process with minilm; no errors other than explicit "
        '"overloaded" answers at 16.'
    )
    if ratios:
        print("\nReads beside writes against read-only, per round and their median:\n")
        for line in ratios:
            print(f"- {line}")
    if samples:
        print("\nError samples:\n")
        for sample in samples:
            print(f"- {sample}")


def run_setup(
    setup: str,
    targets: list[Server],
    seconds: float,
    queries: list[str],
    samples: list[str],
    tools: list[str],
    counts: list[int],
    writes: float = 0.0,
    rounds: int = 1,
    ratios: list[str] | None = None,
) -> list[str]:
    """Each tool at each client count; with `writes`, read-only and then beside the writer, `rounds`
    times, each round's ratio of the two throughputs added to `ratios`."""
    lines = []
    for tool in tools:
        for clients in counts:
            found = []
            if writes and rounds > 1:  # the first calls of a session are slower: not in the first pair
                asyncio.run(measure(targets, tool, clients, min(seconds, 5.0), queries))
            for _round in range(rounds if writes else 1):
                rates: list[float] = []
                for rate in (0.0, writes) if writes else (0.0,):
                    run = asyncio.run(measure(targets, tool, clients, seconds, queries, rate))
                    label = f"{setup} + writes" if rate else setup
                    line = row(label, tool, clients, run)
                    print(line, file=sys.stderr)
                    lines.append(line)
                    samples.extend(f"{label}, {tool}, {clients} clients: {s}" for s in run.samples)
                    rates.append(len(run.latencies) / (run.elapsed or 1.0))
                if writes and rates[0] > 0:
                    found.append(rates[1] / rates[0])
            if found and ratios is not None:
                shown = ", ".join(f"{100 * r:.0f}%" for r in found)
                median = 100 * statistics.median(found)
                ratios.append(f"{setup}, `{tool}`, {clients} clients: {shown}; median {median:.0f}%")
    return lines


if __name__ == "__main__":
    main()
