"""Search latency: one query at a time through the whole pipeline, and where the time goes.

    .venv/bin/python bench/search_latency.py [--corpus fastapi-docs rust-book] [--data-dir DIR]

Indexes each corpus with the default embedder (kept in --data-dir between runs), then times 200
queries (section breadcrumbs, deduplicated) through `engine.search(q, 10)` back to back, and then the
query embedding, the dense pool (in memory, and through LanceDB for comparison) and the BM25
pool (through LanceDB, and from the in-memory postings). Medians and p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import date
from functools import partial
from pathlib import Path

from _common import CORPORA, commit, median, percentile, require
from ragdown.engine import Engine
from ragdown.search.filters import Prefilter, SearchFilters
from ragdown.search.hybrid import HIT_COLUMNS, retrieve

QUERIES = 200
STEPS = ("embed", "dense", "dense lancedb", "bm25", "bm25 memory")


def timed(run: Callable[[], object], count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure(corpus: str, data_dir: Path) -> tuple[int, int, dict[str, list[float]]]:
    engine = Engine.open(require(CORPORA / corpus), data_dir / corpus, watch=False)
    engine.sync()
    rows = engine.store.chunks(["title", "heading"], "chunk_index >= 0").to_pylist()
    queries = sorted({r["heading"] or r["title"] for r in rows})[:QUERIES]
    prefilter = Prefilter(SearchFilters(), engine.store.superseded_paths())
    where = prefilter.sql()
    vectors = [engine.embedder.embed_query(q) for q in queries]
    engine.search(queries[0], 10)  # warm caches once
    snapshot = engine.store.vector_snapshot(HIT_COLUMNS)
    # BM25 from memory (docs/search.md#bm25-from-memory), built as a server's warm-up builds it.
    building = engine.store.start_lexicon()
    assert building is not None  # the engine holds its rows in memory
    lexicon = building.result()
    keep = prefilter.mask(snapshot.columns) if snapshot is not None and prefilter.narrows else None

    results: dict[str, list[float]] = defaultdict(list)
    # Searches back to back, as a server answers them; then each step on its own.
    for query in queries:
        results["search"] += timed(partial(engine.search, query, 10), 1)
    for query, vector in zip(queries, vectors, strict=True):
        results["embed"] += timed(partial(engine.embedder.embed_query, query), 1)
        # An empty query skips BM25: this is the dense pool alone, as the pipeline takes it.
        results["dense"] += timed(partial(retrieve, engine.store, "", vector, 60, prefilter), 1)
        results["dense lancedb"] += timed(partial(engine.store.dense, vector, 60, where, HIT_COLUMNS), 1)
        results["bm25"] += timed(partial(engine.store.lexical, query, 60, where, HIT_COLUMNS), 1)
        if lexicon is not None:
            results["bm25 memory"] += timed(partial(lexicon.top, query, 60, keep), 1)
    chunks = engine.store.count_rows()
    engine.close()
    return chunks, len(queries), results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", nargs="+", default=["fastapi-docs", "rust-book"])
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args()
    work = args.data_dir or Path(tempfile.mkdtemp(prefix="ragdown-latency-"))
    print(f"{date.today()} · commit {commit()} · `.venv/bin/python bench/search_latency.py`\n")
    print(
        "| corpus | chunks | queries | search p50 | search p95 | embed p50 | dense p50 "
        "| dense via LanceDB p50 | BM25 via LanceDB p50 | BM25 in memory p50 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for corpus in args.corpus:
        chunks, count, r = measure(corpus, work)
        cells = [
            median(r["search"]),
            percentile(r["search"], 0.95),
            *(median(r[k]) if r[k] else float("nan") for k in STEPS),
        ]
        print(f"| {corpus} | {chunks:,} | {count} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
