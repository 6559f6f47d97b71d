"""Where a `ragdown stdio` process's memory goes, step by step, in one process (docs/design.md#memory).

    .venv/bin/python bench/memory_breakdown.py DOCS --data-dir DIR [--queries 20]

Does what `ragdown stdio DOCS` does at start (the CLI's imports, the MCP server's, the engine opened
and its first sync, the warm-up search and the BM25 postings), then `--queries` searches (the
corpus's `## ` headings), and prints after each step: RSS, its anonymous and file-backed parts, PSS
and USS (`/proc/self/smaps_rollup`), glibc's heap (`mallinfo2`: in use and free-but-held), and RSS
once `malloc_trim` has handed the free pages back (what the step really holds: Δ).
Then the sizes of what the engine holds in Python and numpy (the in-memory rows,
vectors and postings), and pyarrow's pool. Index DOCS beforehand (`ragdown index DOCS --data-dir`).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

from _common import commit, headings

STATUS_KEYS = ("VmRSS", "RssAnon", "RssFile", "VmHWM")


class MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def mallinfo() -> tuple[float, float]:
    """glibc's heap in MiB: (in use, free but held) over every arena; (0, 0) elsewhere."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
    except (OSError, AttributeError):
        return 0.0, 0.0
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 2**20, info.fordblks / 2**20


def status() -> dict[str, float]:
    found: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in STATUS_KEYS:
            found[key] = int(value.split()[0]) / 1024
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Pss", "Private_Clean", "Private_Dirty"):
            found[key] = int(value.split()[0]) / 1024
    found["USS"] = found.pop("Private_Clean") + found.pop("Private_Dirty")
    found["heap in use"], found["heap free"] = mallinfo()
    found["threads"] = len(os.listdir("/proc/self/task"))
    return found


ROWS: list[tuple[str, dict[str, float], float]] = []


def step(label: str, started: float) -> float:
    """Measure after `label`, then trim (as `stdio` does after its start) and measure what stays."""
    from ragdown.release_memory import release_free_memory

    seconds = time.perf_counter() - started
    gc.collect()
    figures = status()
    release_free_memory()
    figures["held"] = status()["VmRSS"]
    ROWS.append((label, figures, seconds))
    return time.perf_counter()


def mappings(top: int) -> list[tuple[str, float]]:
    """The mappings holding the most resident memory: file names, `[heap]`, `[anon]`, `[stack]`."""
    sizes: dict[str, int] = {}
    current = "[anon]"
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            current = fields[5].rsplit("/", 1)[-1] if len(fields) > 5 else "[anon]"
        elif fields and fields[0] == "Rss:":
            sizes[current] = sizes.get(current, 0) + int(fields[1])
    ordered = sorted(sizes.items(), key=lambda item: -item[1])[:top]
    return [(name, kb / 1024) for name, kb in ordered]


def nbytes(value: Any) -> int:
    """Bytes held by numpy arrays, Arrow tables and arrays, or a dict of str (keys and values)."""
    if hasattr(value, "nbytes"):
        return int(value.nbytes)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in value.items())
    return sys.getsizeof(value)


def held(engine: Any) -> list[tuple[str, float]]:
    store, _embedder = engine.lifecycle.index.searched()
    snapshot = store._cache.snapshot
    out: list[tuple[str, float]] = []
    if snapshot is not None:
        out.append(
            (
                f"vectors ({snapshot.vectors.shape[0]} x {snapshot.vectors.shape[1]} float32)",
                nbytes(snapshot.vectors),
            )
        )
        out.append(
            (f"row columns (Arrow: {', '.join(snapshot.columns.column_names)})", nbytes(snapshot.columns))
        )
        out.append(("id -> row dict", nbytes(snapshot.positions)))
        lexicon = snapshot.lexicon.ready()
        if lexicon is not None:
            arrays = sum(nbytes(a) for a in (lexicon.starts, lexicon.rows, lexicon.counts, lexicon.norms))
            out.append((f"BM25 postings arrays ({lexicon.rows.size} postings)", arrays))
            out.append((f"BM25 term -> id dict ({len(lexicon.term_ids)} terms)", nbytes(lexicon.term_ids)))
    from ragdown.indexing.lexicon import ANALYZER

    out.append((f"analyzer word cache ({len(ANALYZER._terms)} words)", nbytes(ANALYZER._terms)))
    memo = store._cache._memo
    out.append((f"memoised table reads ({', '.join(memo)})", sum(_deep(v) for v in memo.values())))
    return [(name, size / 2**20) for name, size in out]


def _deep(value: Any) -> int:
    if hasattr(value, "nbytes"):
        return int(value.nbytes)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(_deep(k) + _deep(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + sum(_deep(v) for v in value)
    return sys.getsizeof(value)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("docs", type=Path)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("RAGDOWN_WATCH", "false")
    queries = headings(args.docs, seed=7)[: args.queries]

    started = step("interpreter", time.perf_counter())
    import ragdown.cli  # noqa: F401  what `ragdown` imports before running a command

    started = step("+ the CLI's imports (pydantic, settings)", started)
    import anyio  # noqa: F401

    from ragdown.serving.deferred import DeferredEngine  # noqa: F401
    from ragdown.serving.tools import build_server  # noqa: F401

    started = step("+ the MCP server's imports (mcp SDK, starlette, anyio)", started)
    from ragdown.engine import Engine
    from ragdown.settings import ServerSettings

    started = step("+ the engine's imports (numpy, pyarrow)", started)
    settings = ServerSettings()
    engine = Engine.open(
        args.docs.resolve(), args.data_dir.resolve(), None, threads=settings.threads, settings=settings
    )
    started = step("+ Engine.open (LanceDB imported, table opened)", started)
    engine.start().result()
    started = step("+ first sync (nothing changed)", started)
    engine.lifecycle.index.searched()[1].embed(["warm"], "query")
    started = step("+ ONNX session and tokenizer (one query embedded)", started)
    engine.searcher.search_outcome("ragdown warm-up", 1)
    started = step("+ warm-up search (rows and vectors read into memory)", started)
    future = engine.lifecycle.index.searched()[0].start_lexicon()
    if future is not None:
        future.result()
    started = step("+ BM25 postings built", started)
    for query in queries:
        engine.search(query, 5)
    step(f"+ {len(queries)} searches", started)

    print(
        f"commit {commit()}, {args.docs} ({engine.totals()[1]} chunks), "
        f"MALLOC_ARENA_MAX={os.environ.get('MALLOC_ARENA_MAX', '-')}, load {os.getloadavg()[0]:.1f}\n"
    )
    print("| step | s | RSS | anon | file | PSS | USS | heap used | heap free | trimmed: RSS | Δ | threads |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    previous = 0.0
    for label, figures, seconds in ROWS:
        keys = ("VmRSS", "RssAnon", "RssFile", "Pss", "USS", "heap in use", "heap free", "held")
        cells = [f"{seconds:.2f}", *(f"{figures[k]:.0f}" for k in keys)]
        cells += [f"{figures['held'] - previous:+.0f}", f"{figures['threads']:.0f}"]
        print(f"| {label} | " + " | ".join(cells) + " |")
        previous = figures["held"]
    print(f"\npeak (VmHWM): {ROWS[-1][1]['VmHWM']:.0f} MiB\n")
    import pyarrow as pa

    print("| held by the engine | MiB |\n|---|---|")
    for name, size in held(engine):
        print(f"| {name} | {size:.1f} |")
    from ragdown.indexing.lance_session import lance_session

    session = lance_session()
    print(f"| LanceDB session caches ({session.approx_num_items} items) | {session.size_bytes / 2**20:.1f} |")
    pool = pa.default_memory_pool()
    print(f"| pyarrow pool ({pool.backend_name}): allocated | {pool.bytes_allocated() / 2**20:.1f} |")
    print("\nlargest resident mappings (MiB): " + ", ".join(f"{n} {mb:.0f}" for n, mb in mappings(14)))
    engine.close()


if __name__ == "__main__":
    main()
