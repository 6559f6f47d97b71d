"""What one small write costs the process that serves it (docs/design.md#search-snapshot): CPU per
write, split by the parts that take it.

    .venv/bin/python bench/write_cost.py [--corpus fastapi-docs] [--writes 40] [--every 0.2] [--work DIR]

Copies the corpus to a scratch folder (or reuses `--work`), opens an engine on it with MiniLM and
the watcher on, as `ragdown serve` does, syncs it and runs one search (so the rows, vectors and
postings are held, as in a serving process). Then `--writes` times, one every `--every` seconds: a
scratch document (one of eight in turn) is rewritten and `Engine.sync_changed` is called with its
path, as a write tool does once the file is on disk. A few seconds after the last one (for the
snapshot writer and the compaction to catch up) it prints the process's CPU per write (user and
system, every thread: LanceDB's and ONNX Runtime's included) and the CPU each part's own thread spent
per write: the held rows' update, the embedding, the whole sync, and the snapshot written for other
processes. Nothing searches meanwhile: `bench/serve_load.py --writes` measures what the writes cost
the searches.
"""

from __future__ import annotations

import argparse
import functools
import resource
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import CORPORA, commit, require
from ragdown.engine import Engine
from ragdown.indexing import read_cache, store, sync
from ragdown.indexing.embedders import onnx_model

SCRATCH = "write-cost"
PARTS: dict[str, tuple[Any, str]] = {
    "the held rows' update (VectorSnapshot.updated)": (read_cache.VectorSnapshot, "updated"),
    "the embedding (OnnxEmbedder.embed)": (onnx_model.OnnxEmbedder, "embed"),
    "the whole sync (Syncer._run)": (sync.Syncer, "_run"),
    "the snapshot for other processes (persist_snapshot)": (store.ChunkStore, "persist_snapshot"),
}


def thread_timed(owner: Any, name: str, spent: dict[str, float], calls: Counter[str], label: str) -> None:
    """Wrap `owner.name` to add the CPU its calling thread spends in it to `spent[label]`."""
    real: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(real)
    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.thread_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent[label] += time.thread_time() - began
            calls[label] += 1

    setattr(owner, name, timed)


def cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default="fastapi-docs")
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--every", type=float, default=0.2, help="seconds between two writes")
    parser.add_argument("--work", type=Path, help="keep the docs copy and the index here between runs")
    args = parser.parse_args()
    source = require(CORPORA / args.corpus)
    spent: dict[str, float] = dict.fromkeys(PARTS, 0.0)  # seconds, per part
    calls: Counter[str] = Counter()
    for label, (owner, name) in PARTS.items():
        thread_timed(owner, name, spent, calls, label)
    with tempfile.TemporaryDirectory(prefix="ragdown-write-cost-") as scratch:
        work = args.work or Path(scratch)
        docs, data = work / "docs", work / "data"
        if not docs.exists():
            shutil.copytree(source, docs, symlinks=False)
        (docs / SCRATCH).mkdir(exist_ok=True)
        engine = Engine.open(docs, data, "minilm", watch=True)
        try:
            engine.start().result()
            engine.search("how do I declare a dependency", 5)
            time.sleep(2)  # the warm-up's postings and snapshot
            spent.update(dict.fromkeys(PARTS, 0.0))
            calls.clear()
            user, system = cpu()
            for n in range(args.writes):
                path = f"{SCRATCH}/note-{n % 8}.md"
                (docs / path).write_text(
                    f"# Scratch note {n % 8}\n\ncounter: {n}\n\nA note rewritten by the bench.\n"
                )
                engine.sync_changed([path])
                time.sleep(args.every)
            time.sleep(3)
            after_user, after_system = cpu()
            rows = engine.store.count_rows()
        finally:
            engine.close()
    per = 1000 / args.writes
    print(f"## Write cost — {args.corpus}, {rows} rows, commit {commit()}\n")
    print(f"{args.writes} writes, one every {args.every:g} s. CPU ms per write:\n")
    print("| part | CPU ms per write | calls |\n|---|---|---|")
    total = (after_user - user) + (after_system - system)
    print(
        f"| the process, every thread (user + system) | {total * per:.1f} ({(after_user - user) * per:.1f} + "
        f"{(after_system - system) * per:.1f}) | |"
    )
    for label in PARTS:
        print(f"| {label} | {spent[label] * per:.1f} | {calls[label]} |")


if __name__ == "__main__":
    main()
