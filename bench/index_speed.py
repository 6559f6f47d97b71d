"""Indexing speed against the bare ONNX forward pass, no-change re-sync, query latency, peak RSS.

    .venv/bin/python bench/index_speed.py [--corpus fastapi-docs --corpus rust-book] [--threads N]

1. Indexes the corpora with a full sync (chunking, hashing, embedding, LanceDB writes, compaction)
   and reports chunks/s and characters/s of embedded text.
2. Embeds the same chunk texts with the same embedder (same batching, same threads) and nothing
   else: the bare forward pass. ours/bare is the share of time that is embedding.
3. Unpacks tldr-pages (7,425 files), indexes it, and times a sync that finds nothing changed.
4. Times query embedding + hybrid search on the indexed corpora (median and p95 over the corpus's
   own section headings as queries).
"""

from __future__ import annotations

import argparse
import tarfile
import tempfile
import time
from pathlib import Path

from _common import CORPORA, commit, median, peak_rss_mb, percentile, require
from ragdown.documents.chunks import embedding_text
from ragdown.documents.metadata import parse_document
from ragdown.engine import Engine
from ragdown.indexing.embedders import create_embedder
from ragdown.indexing.listing import list_markdown_files
from ragdown.indexing.sync import read_text


def chunk_texts(root: Path, max_chars: int) -> list[str]:
    texts: list[str] = []
    for path in sorted(list_markdown_files(root)):
        doc = parse_document(read_text(root, path), path, max_chars)
        texts.extend(embedding_text(c.title, c.heading, c.text) for c in doc.chunks)
    return texts


def index_corpus(name: str, embedder_name: str, threads: int | None, work: Path) -> dict[str, float]:
    root = require(CORPORA / name)
    embedder = create_embedder(embedder_name, threads=threads)
    texts = chunk_texts(root, embedder.max_chars)
    chars = sum(len(t) for t in texts)

    engine = Engine(root, work / f"data-{name}", embedder, source=embedder_name)
    started = time.perf_counter()
    report = engine.sync(full=True)
    ours_s = time.perf_counter() - started
    assert report.chunks == len(texts), (report.chunks, len(texts))

    started = time.perf_counter()
    embedder.embed(texts, "document")
    bare_s = time.perf_counter() - started

    queries = sorted({t.split("\n\n", 1)[0] for t in texts})[:200]
    engine.search(queries[0], 10)  # warm caches once
    latencies = []
    for query in queries:
        started = time.perf_counter()
        engine.search(query, 10)
        latencies.append((time.perf_counter() - started) * 1000)
    engine.close()
    return {
        "files": report.added,
        "chunks": len(texts),
        "chars": chars,
        "ours_s": ours_s,
        "bare_s": bare_s,
        "query_p50_ms": median(latencies),
        "query_p95_ms": percentile(latencies, 0.95),
        "queries": len(queries),
    }


def resync_tldr(work: Path, embedder_name: str, threads: int | None, runs: int) -> dict[str, float]:
    archive = require(CORPORA / "tldr-pages-en.tar.gz")
    root = work / "tldr"
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")
    engine = Engine(
        root, work / "data-tldr", create_embedder(embedder_name, threads=threads), source=embedder_name
    )
    started = time.perf_counter()
    first = engine.sync()
    build_s = time.perf_counter() - started
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        report = engine.sync()
        timings.append(time.perf_counter() - started)
        assert report.unchanged == first.added
        assert not report.changed
    engine.close()
    return {
        "files": first.added,
        "chunks": first.chunks,
        "build_s": build_s,
        "resync_ms": median(timings) * 1000,
        "resync_max_ms": max(timings) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", action="append", help="a folder under shared/bench/corpora (repeatable)")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--threads", type=int, default=None, help="ONNX Runtime threads (default: all CPUs)")
    parser.add_argument(
        "--tldr-embedder",
        default="minilm",
        help="embedder for the initial tldr build (the no-change re-sync embeds nothing)",
    )
    parser.add_argument("--resync-runs", type=int, default=5)
    parser.add_argument("--skip-tldr", action="store_true")
    args = parser.parse_args()
    corpora = args.corpus or ["fastapi-docs", "rust-book"]

    print(f"commit {commit()} · embedder {args.embedder} · threads {args.threads or 'all'}")
    print()
    print(
        "| corpus | files | chunks | chars | ours chunks/s | ours chars/s | bare chars/s | ours/bare "
        "| query p50 ms | query p95 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-") as tmp:
        work = Path(tmp)
        for name in corpora:
            r = index_corpus(name, args.embedder, args.threads, work)
            print(
                f"| {name} | {r['files']:.0f} | {r['chunks']:.0f} | {r['chars']:.0f} "
                f"| {r['chunks'] / r['ours_s']:.1f} | {r['chars'] / r['ours_s']:,.0f} "
                f"| {r['chars'] / r['bare_s']:,.0f} | {r['bare_s'] / r['ours_s']:.2f} "
                f"| {r['query_p50_ms']:.1f} | {r['query_p95_ms']:.1f} |"
            )
        if not args.skip_tldr:
            t = resync_tldr(work, args.tldr_embedder, args.threads, args.resync_runs)
            print()
            print(
                f"tldr-pages: {t['files']:.0f} files, {t['chunks']:.0f} chunks "
                f"indexed in {t['build_s']:.1f} s "
                f"({args.tldr_embedder}); no-change re-sync median {t['resync_ms']:.0f} ms "
                f"(max {t['resync_max_ms']:.0f} ms over {args.resync_runs} runs)"
            )
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
