"""Resident memory of one `ragdown serve` on a folder, as a person starting it would see it, or of
one `ragdown stdio` on an indexed folder, as an agent's session would see it.

    .venv/bin/python bench/serve_memory.py [--docs examples] [--embedder minilm] [--queries 50]
    .venv/bin/python bench/serve_memory.py --stdio DOCS --data-dir DIR [--queries 20]
    .venv/bin/python bench/serve_memory.py --readers N DOCS --data-dir DIR [--queries 20]

Copies the folder (the examples by default) to a scratch dir, starts `ragdown serve` on it with an
empty data dir, waits for the first sync, then asks `--queries` searches (`ragdown_recall`, one MCP
session, the official client) and the hook's `ragdown_context` once each way. Prints RSS when ready,
after the queries, the process's peak (VmHWM), and how the resident pages split: anonymous memory,
the heap, and the largest file mappings (shared libraries' code pages count as resident too).

`--stdio` spawns `ragdown stdio DOCS --data-dir DIR` (DOCS indexed beforehand, not copied) with the
official client, and reads RSS, PSS and USS (`/proc/<pid>/smaps_rollup`) right after `initialize`,
after the first search, once the server is idle (its first sync and the warm-up done), and after
`--queries` searches (the folder's `## ` headings). `bench/memory_breakdown.py` splits the same
process's memory by step.

`--readers N` starts a primary `ragdown serve` on DOCS and DIR (indexed beforehand; not copied), waits
for its first sync, then N readers beside it (`RAGDOWN_ROLE=reader`, same folders, each on its own
port; `--folder` must have MCP on in its `.ragdown.json`), and reads each reader's RSS, PSS and USS
once it has started, after one search in every reader, once idle, after `--queries` more searches
in each, and after a list and a read in each; then again after a write through the first reader and
a search in every reader, so following the primary's commits is measured too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TextIO, cast

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from _common import REPO, Server, commit, cpu_seconds, headings

TOKEN = "bench-token"
QUESTIONS = [
    "how do we restore the postgres backups",
    "what happens on call when the pager fires",
    "row counts data checks",
    "search revamp plan",
    "who owns the deploy pipeline",
]


def status_mb(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, RssAnon and RssFile of `pid`, in MiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            found[key] = int(value.split()[0]) // 1024
    return found


def rollup_mb(pid: int) -> dict[str, int]:
    """RSS, PSS and USS (private clean + dirty) of `pid` from smaps_rollup, in MiB."""
    found = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Rss", "Pss", "Private_Clean", "Private_Dirty"):
            found[key] = int(value.split()[0])
    return {
        "RSS": found["Rss"] // 1024,
        "PSS": found["Pss"] // 1024,
        "USS": (found["Private_Clean"] + found["Private_Dirty"]) // 1024,
    }


def mappings_mb(pid: int, top: int) -> list[tuple[str, int]]:
    """The mappings holding the most resident memory: file names, `[heap]`, or `[anon]`."""
    sizes: Counter[str] = Counter()
    current = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            current = fields[5].rsplit("/", 1)[-1] if len(fields) > 5 else "[anon]"
        elif fields and fields[0] == "Rss:":
            sizes[current] += int(fields[1])
    return [(name, kb // 1024) for name, kb in sizes.most_common(top)]


async def ask(url: str, queries: int) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        for n in range(queries):
            result = await client.call_tool("ragdown_recall", {"query": QUESTIONS[n % len(QUESTIONS)]})
            if result.is_error:
                raise RuntimeError(f"ragdown_recall failed: {result.content}")
        for question in QUESTIONS:
            await client.call_tool("ragdown_context", {"prompt": question, "session_id": "bench"})


def child_pid() -> int:
    """The one child process of this one (the server `stdio_client` spawned)."""
    me = str(os.getpid())
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me:
                children.append(int(entry.name))
    if len(children) != 1:
        raise RuntimeError(f"expected one server process, found {children}")
    return children[0]


async def settle(pid: int, quiet: float = 6.0, most: float = 60.0) -> float:
    """Wait until the server's CPU time stops moving for `quiet` seconds (its first sync and the
    warm-up's BM25 build run in the background after the first search); the seconds waited."""
    waited, still, last = 0.0, 0.0, cpu_seconds(pid)
    while still < quiet and waited < most:
        await asyncio.sleep(0.5)
        waited += 0.5
        now = cpu_seconds(pid)
        still = still + 0.5 if now - last < 0.05 else 0.0
        last = now
    return waited


async def stdio_memory(
    docs: Path, data_dir: Path, queries: list[str], errlog: TextIO
) -> tuple[list[tuple[str, dict[str, int]]], list[tuple[str, int]]]:
    """RSS/PSS/USS of one `ragdown stdio` at each stage of a session, and its largest mappings."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragdown.cli", "stdio", str(docs), "--data-dir", str(data_dir)],
        env={**os.environ, "RAGDOWN_WATCH": "false"},
    )
    stages: list[tuple[str, dict[str, int]]] = []

    def measure(label: str, pid: int) -> None:
        stages.append((label, {**rollup_mb(pid), **status_mb(pid)}))

    async with Client(stdio_client(params, errlog=errlog)) as client:
        pid = child_pid()
        measure("connected (initialize answered)", pid)
        first = await client.call_tool("ragdown_recall", {"query": queries[0], "top_k": 5})
        if first.is_error:
            raise RuntimeError(f"ragdown_recall failed: {first.content}")
        measure("after the first search", pid)
        waited = await settle(pid)
        measure(f"settled ({waited:.0f} s later: warm-up and first sync done)", pid)
        for query in queries:
            await client.call_tool("ragdown_recall", {"query": query, "top_k": 5})
        measure(f"after {len(queries)} more searches", pid)
        listed = await client.call_tool("ragdown_list", {"limit": 5})
        text = "".join(getattr(part, "text", "") for part in listed.content)
        listed_path = next(line.split(" — ")[0] for line in text.splitlines() if " — " in line)
        await client.call_tool("ragdown_read_doc", {"path": listed_path})
        await settle(pid, quiet=2.0)
        measure("after a list and a read", pid)
        top = mappings_mb(pid, 8)
    return stages, top


def stdio_main(docs: Path, data_dir: Path, queries: int) -> None:
    asked = headings(docs, seed=7)[:queries]
    with tempfile.TemporaryFile("w+") as errlog:
        stages, top = asyncio.run(stdio_memory(docs, data_dir, asked, cast(TextIO, errlog)))
    load = os.getloadavg()[0]
    print(f"commit {commit()}, `ragdown stdio {docs}`, load {load:.1f}")
    print("\n| when | RSS MiB | PSS | USS | anonymous | file-backed | peak so far |")
    print("|---|---|---|---|---|---|---|")
    for when, figures in stages:
        columns = (figures[key] for key in ("RSS", "PSS", "USS", "RssAnon", "RssFile", "VmHWM"))
        print(f"| {when} | " + " | ".join(map(str, columns)) + " |")
    print("\nlargest resident mappings after the queries: " + ", ".join(f"{n} {mb}" for n, mb in top))


async def search_each(urls: list[str], queries: list[str]) -> None:
    """`queries` searches (`ragdown_recall`) in one session per reader, the readers in turn."""
    for url in urls:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            for query in queries:
                result = await client.call_tool("ragdown_recall", {"query": query, "top_k": 5})
                if result.is_error:
                    raise RuntimeError(f"ragdown_recall failed: {result.content}")


async def list_and_read(urls: list[str]) -> None:
    """`ragdown_list` and one `ragdown_read_doc` (of the first document listed) in each reader."""
    for url in urls:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            listed = await client.call_tool("ragdown_list", {"limit": 5})
            text = "".join(getattr(part, "text", "") for part in listed.content)
            # A listed line: `[label] path — title (details)`.
            first = next(line.split(" — ")[0] for line in text.splitlines() if " — " in line)
            read = await client.call_tool("ragdown_read_doc", {"path": first.split("] ")[-1]})
            if listed.is_error or read.is_error:
                raise RuntimeError(f"list or read failed: {text[:200]} / {read.content}")


async def write_through(url: str, folder: str) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        result = await client.call_tool(
            "ragdown_remember", {"content": f"memory bench note {os.getpid()}", "title": "memory bench"}
        )
        if result.is_error:
            raise RuntimeError(f"ragdown_remember failed: {result.content}")


def readers_main(docs: Path, data_dir: Path, count: int, queries: int, folder: str) -> None:
    if not (docs / folder / ".ragdown.json").is_file():
        raise SystemExit(
            f'{docs / folder} has no .ragdown.json: write {{"mcp": true}} there, or name --folder'
        )
    asked = headings(docs, seed=7)[:queries]
    stages: list[tuple[str, list[dict[str, int]]]] = []
    with tempfile.TemporaryDirectory(prefix="ragdown-readers-") as scratch:
        work = Path(scratch)
        primary = Server(docs, data_dir, "minilm", work, "primary", TOKEN, env={"RAGDOWN_ROLE": "primary"})
        readers: list[Server] = []
        try:
            primary.wait(lambda status: bool(status.get("ready")), "the primary's first sync")
            for n in range(count):
                reader = Server(
                    docs, data_dir, "minilm", work, f"reader{n}", TOKEN, env={"RAGDOWN_ROLE": "reader"}
                )
                readers.append(reader)
                reader.wait(lambda status: bool(status.get("ready")), f"reader {n}")
            pids = [reader.process.pid for reader in readers]
            urls = [f"{reader.url}/mcp/{folder}" for reader in readers]

            def measure(label: str) -> None:
                stages.append((label, [{**rollup_mb(pid), **status_mb(pid)} for pid in pids]))

            measure("ready")
            asyncio.run(search_each(urls, asked[:1]))
            measure("after one search each")
            asyncio.run(settle(pids[-1]))
            measure("idle")
            asyncio.run(search_each(urls, asked))
            measure(f"after {len(asked)} more searches each")
            asyncio.run(list_and_read(urls))
            measure("after a list and a read in each")
            asyncio.run(write_through(urls[0], folder))
            started = time.perf_counter()
            asyncio.run(search_each(urls[:1], asked[:1]))
            after_write = time.perf_counter() - started
            asyncio.run(search_each(urls[1:], asked[:1]))
            asyncio.run(settle(pids[0]))
            measure("after a write through reader 0, a search each, idle")
            top = mappings_mb(pids[0], 8)
        finally:
            for server in [*readers, primary]:
                server.stop()
    print(f"commit {commit()}, {count} readers beside a primary on {docs}, load {os.getloadavg()[0]:.1f}")
    print("\n| when | reader | RSS MiB | PSS | USS | anonymous | file-backed |")
    print("|---|---|---|---|---|---|---|")
    for when, each in stages:
        for n, figures in enumerate(each):
            columns = (figures[key] for key in ("RSS", "PSS", "USS", "RssAnon", "RssFile"))
            print(f"| {when} | {n} | " + " | ".join(map(str, columns)) + " |")
    print(f"\nreader 0's session after the write through it (connect, one search): {after_write:.2f} s")
    print("reader 0's largest resident mappings at the end: " + ", ".join(f"{n} {mb}" for n, mb in top))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=Path, default=REPO / "examples", help="the folders to serve (copied)")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--folder", default="notes", help="the MCP folder to ask")
    parser.add_argument("--stdio", type=Path, metavar="DOCS", help="measure `ragdown stdio DOCS` instead")
    parser.add_argument(
        "--readers", nargs=2, metavar=("N", "DOCS"), help="measure N readers beside a primary"
    )
    parser.add_argument("--data-dir", type=Path, help="with --stdio or --readers: where DOCS is indexed")
    args = parser.parse_args()
    if args.readers is not None:
        if args.data_dir is None:
            parser.error("--readers needs --data-dir (index DOCS there first)")
        count, docs = int(args.readers[0]), Path(args.readers[1]).resolve()
        readers_main(docs, args.data_dir.resolve(), count, args.queries, args.folder)
        return
    if args.stdio is not None:
        if args.data_dir is None:
            parser.error("--stdio needs --data-dir (index DOCS there first)")
        stdio_main(args.stdio.resolve(), args.data_dir.resolve(), args.queries)
        return
    with tempfile.TemporaryDirectory(prefix="ragdown-memory-") as scratch:
        work = Path(scratch)
        shutil.copytree(args.docs, work / "docs")
        server = Server(work / "docs", work / "data", args.embedder, work, "serve", TOKEN)
        try:
            server.wait(lambda status: bool(status.get("ready")), "the first sync")
            ready = status_mb(server.process.pid)
            asyncio.run(ask(f"{server.url}/mcp/{args.folder}", args.queries))
            after = status_mb(server.process.pid)
            top = mappings_mb(server.process.pid, 6)
        finally:
            server.stop()
    print(f"commit {commit()}, embedder {args.embedder}, {args.docs}")
    print("\n| when | RSS MiB | anonymous | file-backed | peak so far |")
    print("|---|---|---|---|---|")
    for when, figures in (("first sync done", ready), (f"after {args.queries} searches + hook", after)):
        columns = (figures[key] for key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"))
        print(f"| {when} | " + " | ".join(map(str, columns)) + " |")
    print("\nlargest resident mappings after the queries: " + ", ".join(f"{n} {mb}" for n, mb in top))


if __name__ == "__main__":
    main()
