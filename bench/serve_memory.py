"""Resident memory of one `ragdown serve` on a folder, as a person starting it would see it.

    .venv/bin/python bench/serve_memory.py [--docs examples] [--embedder minilm] [--queries 50]

Copies the folder (the examples by default) to a scratch dir, starts `ragdown serve` on it with an
empty data dir, waits for the first sync, then asks `--queries` searches (`ragdown_recall`, one MCP
session, the official client) and the hook's `ragdown_context` once each way. Prints RSS when ready,
after the queries, the process's peak (VmHWM), and how the resident pages split: anonymous memory,
the heap, and the largest file mappings (shared libraries' code pages count as resident too).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from _common import REPO, Server, commit

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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=Path, default=REPO / "examples", help="the folders to serve (copied)")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--folder", default="notes", help="the MCP folder to ask")
    args = parser.parse_args()
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
