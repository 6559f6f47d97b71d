"""Issue 26 item 2: what the three pathological one-line shapes cost to index and to render, and what
another folder's recall sees meanwhile (docs/security.md#tenants).

    .venv/bin/python bench/pathological.py                 # the table: index and render, each run capped
    .venv/bin/python bench/pathological.py --recall        # plus: another folder's recall while one folder
                                                           # writes a 200k-character line through the server

Each measurement runs in a fresh process killed at `--cap` seconds (">cap s" in the table): the
old regexes held the GIL for minutes, so a run that hangs must not hang the benchmark. "index" is a
sync of a folder holding the one document, through the engine with the hash embedder (parsing,
chunking, tags, links and the store; the embedder is cheap so the parse shows); "render" is the web
UI's `render_markdown`; "links" is `find_links`, what backlinks pay per document.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import REPO, Server, commit

SHAPES = {
    "heading": "`# x {` + spaces + `y`",
    "links": "`[a](` repeated",
    "brackets": "`[` repeated",
}


def shape(name: str, size: int) -> str:
    """One line of about `size` characters."""
    if name == "heading":
        return "# x {" + " " * (size - 6) + "y"
    if name == "links":
        return "[a](" * (size // 4)
    return "[" * size


def one(what: str, name: str, size: int) -> float:
    """Seconds for one measurement, in this process."""
    text = f"# Doc\n\n{shape(name, size)}\n"
    if what == "render":
        from ragdown.web.render import render_markdown

        started = time.perf_counter()
        render_markdown(text, folder="a", resolve=lambda _: None, attachment=lambda _: None)
        return time.perf_counter() - started
    if what == "links":
        from ragdown.documents.link_finder import find_links

        started = time.perf_counter()
        find_links(text)
        return time.perf_counter() - started
    from ragdown.engine import Engine
    from ragdown.indexing.embedders.hashing import HashEmbedder

    with tempfile.TemporaryDirectory() as tmp:
        docs, data = Path(tmp) / "docs", Path(tmp) / "data"
        (docs / "a").mkdir(parents=True)
        (docs / "a" / "doc.md").write_text(text, encoding="utf-8")
        engine = Engine(docs, data, HashEmbedder(), source="hash", watch=False)
        started = time.perf_counter()
        report = engine.sync()
        elapsed = time.perf_counter() - started
        engine.close()
        assert report.added == 1, report
        return elapsed


def measure(what: str, name: str, size: int, cap: float) -> str:
    command = [sys.executable, __file__, "--one", what, name, str(size)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=cap, check=False)
    except subprocess.TimeoutExpired:
        return f">{cap:.0f} s"
    if done.returncode:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    return f"{float(done.stdout.strip().splitlines()[-1]):.3f} s"


def table(sizes: list[int], cap: float) -> None:
    print(f"commit {commit()}, each run capped at {cap:.0f} s\n")
    print("| shape | chars | index | render | find_links |")
    print("|---|---|---|---|---|")
    for name, label in SHAPES.items():
        for size in sizes:
            cells = [measure(what, name, size, cap) for what in ("index", "render", "links")]
            print(f"| {label} | {size:,} | " + " | ".join(cells) + " |", flush=True)


# --- another folder's recall while one folder writes the 200k line ------------------------------------


async def _call(url: str, token: str, tool: str, arguments: dict[str, object]) -> str:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=600) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        result = await client.call_tool(tool, arguments)
        return "".join(getattr(part, "text", "") for part in result.content)


def recall_latency(size: int, rounds: int, shapes: list[str], with_backlinks: bool) -> None:
    token = "bench-token"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        docs = work / "docs"
        for folder in ("a", "b"):
            (docs / folder).mkdir(parents=True)
            (docs / folder / ".ragdown.json").write_text(json.dumps({"title": folder, "mcp": True}))
        (docs / "b" / "restore.md").write_text("# Restore\n\nHow we restore the database.\n")
        (docs / "a" / "target.md").write_text("# Target\n\nWhat backlinks are asked about.\n")
        server = Server(docs, work / "data", "hash", work, "serve", token)
        try:
            server.wait(lambda status: bool(status.get("files")), "the first sync", timeout=120)
            url_a, url_b = f"{server.url}/mcp/a", f"{server.url}/mcp/b"

            def quiet() -> list[float]:
                out = []
                for _ in range(rounds):
                    started = time.perf_counter()
                    asyncio.run(_call(url_b, token, "ragdown_recall", {"query": "restore database"}))
                    out.append(time.perf_counter() - started)
                return out

            idle = quiet()
            for name in shapes:
                writes: list[float] = []
                answers: list[str] = []
                done = threading.Event()

                def write(
                    name: str = name,
                    writes: list[float] = writes,
                    answers: list[str] = answers,
                    done: threading.Event = done,
                ) -> None:
                    # A new document again and again until folder b's recalls are done: they all
                    # run while folder a indexes.
                    while not done.is_set():
                        started = time.perf_counter()
                        text = f"# Doc\n\n{shape(name, size)}\n"
                        arguments: dict[str, object] = {"path": f"{name}-{len(writes)}.md", "text": text}
                        answers.append(asyncio.run(_call(url_a, token, "ragdown_write", arguments)))
                        writes.append(time.perf_counter() - started)

                writer = threading.Thread(target=write)
                writer.start()
                time.sleep(0.5)  # the first write is in flight
                busy = quiet()
                done.set()
                writer.join()
                created = sum(answer.startswith("created") for answer in answers)
                assert created == len(answers), [a for a in answers if not a.startswith("created")][:1]
                print(
                    f"{SHAPES[name]} ({size:,} chars) written {len(writes)} times to folder a, median "
                    f"{statistics.median(writes):.2f} s a write; folder b's recall meanwhile: median "
                    f"{statistics.median(busy) * 1000:.0f} ms, max {max(busy) * 1000:.0f} ms (idle: median "
                    f"{statistics.median(idle) * 1000:.0f} ms)",
                    flush=True,
                )
            if not with_backlinks:
                return
            # Four backlinks calls of folder a at a time (each parses every document of folder a,
            # the ones written above included) while folder b recalls.
            done = threading.Event()
            calls: list[float] = []

            def backlinks(calls: list[float] = calls, done: threading.Event = done) -> None:
                while not done.is_set():
                    started = time.perf_counter()
                    asyncio.run(_call(url_a, token, "ragdown_backlinks", {"path": "target.md"}))
                    calls.append(time.perf_counter() - started)

            threads = [threading.Thread(target=backlinks) for _ in range(4)]
            for thread in threads:
                thread.start()
            time.sleep(0.5)
            busy = quiet()
            done.set()
            for thread in threads:
                thread.join()
            print(
                f"4 concurrent ragdown_backlinks in folder a ({len(calls)} done, median "
                f"{statistics.median(calls):.2f} s each); folder b's recall meanwhile: median "
                f"{statistics.median(busy) * 1000:.0f} ms, max {max(busy) * 1000:.0f} ms",
                flush=True,
            )
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,40000,200000")
    parser.add_argument("--cap", type=float, default=60.0)
    parser.add_argument("--recall", action="store_true", help="also measure another folder's recall")
    parser.add_argument("--recall-size", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--recall-shapes", default=",".join(SHAPES))
    parser.add_argument("--backlinks", action="store_true", help="then 4 concurrent backlinks in folder a")
    parser.add_argument("--skip-table", action="store_true")
    parser.add_argument("--one", nargs=3, metavar=("WHAT", "SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        what, name, size = args.one
        print(one(what, name, int(size)))
        return
    assert REPO.exists()
    if not args.skip_table:
        table([int(s) for s in args.sizes.split(",")], args.cap)
    if args.recall:
        recall_latency(args.recall_size, args.rounds, args.recall_shapes.split(","), args.backlinks)


if __name__ == "__main__":
    main()
