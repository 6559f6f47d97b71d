"""Start-up: how soon a command answers (docs/design.md#start-up).

    .venv/bin/python bench/start_up.py [--corpus rust-book] [--runs 5]
    # the large corpus (bench/large_corpus.py), its index reused, another checkout's code, raw numbers kept:
    /work/main/.venv/bin/python bench/start_up.py --corpus-dir /tmp/ragdown-large-corpus \
        --index-dir /tmp/ragdown-large-data --ragdown-src /work/main --json /tmp/start-up.json

On one corpus, indexed once beforehand (and the int8 model built once), each measured `--runs`
times as a fresh process, medians (and the range):

- MCP over stdio with the official client (`mcp.Client` + `stdio_client`): process start to
  `initialize` answered ("connect"); the first `ragdown_recall` sent right after ("first call,
  at once"); and, in another launch, the first call sent after the server has had 3 s to warm up
  ("first call, warmed"), then a second call.
- One-shot `ragdown search QUERY`: wall time and peak RSS of the process.
- `ragdown index` of the unchanged folder: wall time and peak RSS.

--ragdown-src CHECKOUT puts CHECKOUT/server first on PYTHONPATH of every ragdown process (the venv stays
the one running this script), so another worktree can be measured with the same command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from _common import CORPORA, REPO, code_commit, commit, median, require

QUERY = "how do I handle errors without panicking"
RAGDOWN = [sys.executable, "-m", "ragdown.cli"]


def timed_process(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process (run in a fresh helper so RUSAGE_CHILDREN is its own)."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "w = time.perf_counter() - t\n"
        "assert r.returncode == 0, r.stderr\n"
        "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, *args], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    wall, peak = out.stdout.split()
    return float(wall), float(peak)


async def stdio_session(docs: Path, data_dir: Path, env: dict[str, str], pause: float) -> tuple[float, ...]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragdown.cli", "stdio", str(docs), "--data-dir", str(data_dir)],
        env=env,
    )
    started = time.perf_counter()
    async with Client(stdio_client(params)) as client:
        connected = time.perf_counter()
        await asyncio.sleep(pause)
        before = time.perf_counter()
        first = await client.call_tool("ragdown_recall", {"query": QUERY, "top_k": 3})
        after = time.perf_counter()
        await client.call_tool("ragdown_recall", {"query": "ownership and borrowing", "top_k": 3})
        second = time.perf_counter()
    assert not first.is_error, first
    return connected - started, after - before, second - after


def spread(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    low, mid, high = (v * scale for v in (min(values), median(values), max(values)))
    return f"{mid:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default="rust-book", help="a folder of the shared corpora")
    parser.add_argument("--corpus-dir", type=Path, help="any Markdown folder instead of --corpus")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, help="kept between runs (default: a temporary folder)")
    parser.add_argument("--index-dir", type=Path, help="the index itself (default: DATA_DIR/<corpus name>)")
    parser.add_argument("--ragdown-src", type=Path, help="the ragdown checkout to measure (its server/)")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()
    docs = require(args.corpus_dir.resolve()) if args.corpus_dir else require(CORPORA / args.corpus)
    name = docs.name
    work = args.data_dir or Path(tempfile.mkdtemp(prefix="ragdown-start-up-"))
    data_dir = args.index_dir or work / name
    env = {**os.environ, "RAGDOWN_WATCH": "false"}
    src = (args.ragdown_src or REPO).resolve()
    if args.ragdown_src:
        env["PYTHONPATH"] = os.pathsep.join([str(src / "server"), *filter(None, [env.get("PYTHONPATH")])])
    load_start = os.getloadavg()[0]
    first = subprocess.run([*RAGDOWN, "index", str(docs), "--data-dir", str(data_dir)], env=env, check=False)
    if first.returncode != 0:
        sys.exit("indexing failed")

    connect, at_once, warmed, second = [], [], [], []
    for _ in range(args.runs):
        c, f, _s = asyncio.run(stdio_session(docs, data_dir, env, pause=0))
        connect.append(c)
        at_once.append(f)
        _c, w, s = asyncio.run(stdio_session(docs, data_dir, env, pause=3))
        warmed.append(w)
        second.append(s)
    search = [
        timed_process([*RAGDOWN, "search", str(docs), QUERY, "--data-dir", str(data_dir)], env)
        for _ in range(args.runs)
    ]
    index = [
        timed_process([*RAGDOWN, "index", str(docs), "--data-dir", str(data_dir)], env)
        for _ in range(args.runs)
    ]
    load_end = os.getloadavg()[0]
    src_commit = code_commit(src)
    command = " ".join([".venv/bin/python bench/start_up.py", *sys.argv[1:]])
    if args.json:
        raw = {
            "date": date.today().isoformat(),
            "command": command,
            "bench_commit": commit(),
            "ragdown_src": str(src),
            "ragdown_commit": src_commit,
            "corpus": str(docs),
            "index": str(data_dir),
            "load_start": load_start,
            "load_end": load_end,
            "connect_s": connect,
            "first_call_at_once_s": at_once,
            "first_call_warmed_s": warmed,
            "second_call_s": second,
            "search_wall_s_peak_mb": search,
            "index_no_change_wall_s_peak_mb": index,
        }
        args.json.write_text(json.dumps(raw, indent=1) + "\n")
    print(f"{date.today()} · ragdown commit {src_commit} · `{command}`\n")
    print(
        f"{name}, {args.runs} runs each; median (min–max); 1-min load {load_start:.1f} at the start, "
        f"{load_end:.1f} at the end\n"
    )
    print("| step | time | peak RSS MB |")
    print("|---|---|---|")
    print(f"| MCP stdio connect (start → initialized) | {spread(connect)} s | |")
    print(f"| first call, sent at once | {spread(at_once)} s | |")
    print(f"| first call, sent 3 s after connect | {spread(warmed, 1000, 0)} ms | |")
    print(f"| second call | {spread(second, 1000, 0)} ms | |")
    for label, runs in (("one-shot `ragdown search`", search), ("`ragdown index`, nothing changed", index)):
        print(f"| {label} | {spread([w for w, _ in runs])} s | {median([m for _, m in runs]):.0f} |")


if __name__ == "__main__":
    main()
