"""Embedding throughput of the default MiniLM: the packaged model against the int8 build, 1 and 2 threads.

    .venv/bin/python bench/embed_speed.py [--corpus fastapi-docs --corpus rust-book] [--every N]
        [--max-chars N] [--threads 1 --threads 2] [--batch-sweep] [--token-counts]
        [--ort-optimizer [--rounds N]]

Chunks the Markdown files of the corpora in ../shared/bench/corpora (read in place, never copied) with
`parse_document(source, path, max_chars)` and embeds `embedding_text(title, heading, text)` of every
chunk as a document. chars/s = characters of those texts / seconds of `embed()` (tokenizing,
forward passes, pooling; the model is loaded and warmed up first).

Also prints the quality of the int8 build (cosine against the packaged model on the fixed check
sentences and on every chunk embedded), and with `--batch-sweep` the old way of running: padded,
length-sorted batches of 16/32/64 through one session with intra-op threads. `--token-counts`
prints how many chunks fit the model's 256-token window at several `max_chars`.

`--ort-optimizer` instead compares ONNX Runtime's transformer optimizer with the build's own float32
rewrites (bench/quantize_variants.py): throughput, and cosine against the packaged model on the
chunks and on the build's check sentences, for the packaged model, the shipped int8 build, and the
variants. Models are timed in turn, `--rounds` times over. Besides wall-clock chars/s (best round)
it reports chars per CPU-second of the process (median round), which other work on the machine
disturbs far less.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import numpy.typing as npt

from quantize_variants import Variant, build_variants
from ragdown.documents.chunks import embedding_text
from ragdown.documents.metadata import parse_document
from ragdown.indexing.embedders.base import normalise_rows
from ragdown.indexing.embedders.minilm import MINILM, check_minilm_quality, load_minilm, minilm_files
from ragdown.indexing.embedders.onnx_model import OnnxEmbedder, batch_feeds, load_tokenizer
from ragdown.indexing.embedders.quantize import CALIBRATION_TEXTS, QualityCheck, cosine_report

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "bench" / "corpora"
DEFAULT_CORPORA = ["fastapi-docs", "rust-book"]
Vectors = npt.NDArray[np.float32]


def chunk_texts(corpora: list[str], max_chars: int) -> list[str]:
    texts: list[str] = []
    for name in corpora:
        root = CORPORA / name
        if not root.is_dir():
            sys.exit(
                f"benchmark corpus not found: {root} (the shared/bench folder sits beside the repository)"
            )
        for path in sorted(root.rglob("*.md")):
            source = path.read_text(encoding="utf-8", errors="replace")
            document = parse_document(source, path.relative_to(root).as_posix(), max_chars)
            texts.extend(embedding_text(c.title, c.heading, c.text) for c in document.chunks)
    return texts


def timed(embed: Callable[[list[str]], Vectors], texts: list[str]) -> tuple[float, Vectors]:
    embed(texts[:8])  # warm-up: first-run allocations
    started = time.perf_counter()
    vectors = embed(texts)
    return time.perf_counter() - started, vectors


def row(label: str, threads: int, texts: list[str], seconds: float) -> str:
    chars = sum(len(t) for t in texts)
    return f"| {label} | {threads} | {chars / seconds:,.0f} | {len(texts) / seconds:.1f} | {seconds:.1f} |"


class BatchedSession:
    """The previous way of running: length-sorted batches padded to their longest, intra-op threads."""

    def __init__(self, model: Path, tokenizer: Path, threads: int, batch_size: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.tokenizer = load_tokenizer(tokenizer, MINILM.max_tokens)
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> Vectors:
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), MINILM.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            feeds = batch_feeds([encodings[i].ids for i in batch])
            hidden = self.session.run(None, feeds)[0]
            weights = feeds["attention_mask"][:, :, None].astype(np.float32)
            out[batch] = normalise_rows((hidden * weights).sum(axis=1) / weights.sum(axis=1))
        return out


def token_counts(corpora: list[str], tokenizer: Path) -> None:
    from tokenizers import Tokenizer

    counter = Tokenizer.from_file(str(tokenizer))
    counter.no_truncation()
    counter.no_padding()
    print("\n| max_chars | chunks | tokens p50 | p90 | p99 | max | fit in 256 | fit, worst corpus |")
    print("|---|---|---|---|---|---|---|---|")
    for max_chars in (400, 500, 520, 600, 800, 1000, 1200, 1500):
        counts = {
            name: np.array([len(e.ids) for e in counter.encode_batch(chunk_texts([name], max_chars))])
            for name in corpora
        }
        every = np.concatenate(list(counts.values()))
        worst = min(float(np.mean(c <= MINILM.max_tokens)) for c in counts.values())
        p50, p90, p99 = np.percentile(every, [50, 90, 99])
        print(
            f"| {max_chars} | {every.size} | {p50:.0f} | {p90:.0f} | {p99:.0f} | {every.max()} "
            f"| {np.mean(every <= MINILM.max_tokens):.2%} | {worst:.2%} |"
        )


def optimizer_comparison(texts: list[str], cache_dir: Path, thread_counts: list[int], rounds: int) -> None:
    model, tokenizer = minilm_files()
    shipped = load_minilm(1, cache_dir, quantize=True)
    encodings = load_tokenizer(tokenizer, MINILM.max_tokens).encode_batch(list(CALIBRATION_TEXTS))
    folder = cache_dir / "variants"
    folder.mkdir(exist_ok=True)
    variants = [
        Variant("packaged", model),
        Variant("int8 build (shipped: our rewrites)", shipped.model_path),
        *build_variants(model, [batch_feeds([e.ids]) for e in encodings], folder),
    ]
    shipped.close()
    chars = sum(len(t) for t in texts)
    wall: dict[tuple[str, int], list[float]] = {}
    cpu: dict[tuple[str, int], list[float]] = {}
    vectors: dict[str, Vectors] = {}
    for round_ in range(rounds):
        for threads in thread_counts:
            # Alternate the order so no model always runs right after the same one.
            for variant in variants if round_ % 2 == 0 else variants[::-1]:
                embedder = OnnxEmbedder(MINILM, variant.path, tokenizer, threads)
                embedder.embed(texts[:8], "document")  # warm-up: first-run allocations
                started, started_cpu = time.perf_counter(), time.process_time()
                vectors[variant.label] = embedder.embed(texts, "document")
                wall.setdefault((variant.label, threads), []).append(chars / (time.perf_counter() - started))
                cpu.setdefault((variant.label, threads), []).append(
                    chars / (time.process_time() - started_cpu)
                )
                embedder.close()
    check = QualityCheck(
        reference=lambda: OnnxEmbedder(MINILM, model, tokenizer, 1),
        load=lambda path: OnnxEmbedder(MINILM, path, tokenizer, 1),
    )
    print(f"\n{rounds} rounds; chars/s: the best round's (wall clock); chars/CPU-s: the median round's.")
    print(
        "Cosine against the packaged model (a build is refused below mean 0.99 / min 0.98 on the check set)."
    )
    print(
        "\n| model | threads | chars/s | chars/CPU-s | chunks: mean | min | check set: mean | min | passes |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for variant in variants:
        corpus = cosine_report(vectors["packaged"], vectors[variant.label])
        quality = check(variant.path)
        verdict = "yes" if quality.passed else "**no**"
        figures = f"{corpus.mean:.4f} | {corpus.minimum:.4f} | {quality.mean:.4f} | {quality.minimum:.4f}"
        for threads in thread_counts:
            key = (variant.label, threads)
            speed = f"{max(wall[key]):,.0f} | {statistics.median(cpu[key]):,.0f}"
            print(f"| {variant.label} | {threads} | {speed} | {figures} | {verdict} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", action="append", help=f"folder under {CORPORA} (default: both)")
    parser.add_argument("--every", type=int, default=1, help="embed every Nth chunk only (quick runs)")
    parser.add_argument("--max-chars", type=int, default=MINILM.max_chars)
    parser.add_argument("--threads", type=int, action="append", help="thread counts (default: 1 and 2)")
    parser.add_argument("--cache-dir", type=Path, help="where to cache the int8 build (default: a temp dir)")
    parser.add_argument("--batch-sweep", action="store_true", help="also time batches of 16/32/64")
    parser.add_argument("--token-counts", action="store_true", help="also print token counts by max_chars")
    parser.add_argument(
        "--ort-optimizer",
        action="store_true",
        help="compare ONNX Runtime's transformer optimizer with the build's float32 rewrites instead",
    )
    parser.add_argument("--rounds", type=int, default=1, help="with --ort-optimizer: timed rounds per model")
    args = parser.parse_args()
    corpora = args.corpus or DEFAULT_CORPORA
    thread_counts = args.threads or [1, 2]
    texts = chunk_texts(corpora, args.max_chars)[:: args.every]
    model, tokenizer = minilm_files()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"{', '.join(corpora)} · max_chars {args.max_chars} · {len(texts)} chunks · "
        f"{sum(len(t) for t in texts):,} chars · {cpus} CPUs"
    )

    with tempfile.TemporaryDirectory() as scratch:
        cache_dir = args.cache_dir or Path(scratch)
        started = time.perf_counter()
        load_minilm(1, cache_dir, quantize=True).close()
        build_s = time.perf_counter() - started
        print(f"int8 build (or cache check) in {cache_dir}: {build_s:.1f} s")
        if args.ort_optimizer:
            optimizer_comparison(texts, cache_dir, thread_counts, args.rounds)
            return

        print("\n| model | threads | chars/s | chunks/s | seconds |")
        print("|---|---|---|---|---|")
        vectors: dict[tuple[bool, int], Vectors] = {}
        for quantize in (False, True):
            label = "int8 build" if quantize else "packaged"
            for threads in thread_counts:
                embedder: OnnxEmbedder = load_minilm(threads, cache_dir, quantize=quantize)
                seconds, vectors[quantize, threads] = timed(partial(embedder.embed, kind="document"), texts)
                embedder.close()
                print(row(label, threads, texts, seconds), flush=True)

        if args.batch_sweep:
            print("\n| model | batch | threads (intra-op) | chars/s | chunks/s | seconds |")
            print("|---|---|---|---|---|---|")
            int8 = load_minilm(1, cache_dir, quantize=True)
            for label, path in (("packaged", model), ("int8 build", int8.model_path)):
                for batch in (16, 32, 64):
                    runner = BatchedSession(path, tokenizer, max(thread_counts), batch)
                    seconds, _ = timed(runner.embed, texts)
                    cells = row(label, max(thread_counts), texts, seconds).split(" | ", 1)[1]
                    print(f"| {label} | {batch} | {cells}", flush=True)
            int8.close()

        quality = check_minilm_quality(max(thread_counts), cache_dir)
    threads = max(thread_counts)
    corpus = cosine_report(vectors[False, threads], vectors[True, threads])
    print("\nint8 build against the packaged model (cosine; the build refuses below mean 0.99 / min 0.98):")
    print(f"- check sentences: mean {quality.mean:.4f}, min {quality.minimum:.4f} ({quality.count} texts)")
    print(f"- corpus chunks:   mean {corpus.mean:.4f}, min {corpus.minimum:.4f} ({corpus.count} chunks)")
    if args.token_counts:
        token_counts(corpora, tokenizer)


if __name__ == "__main__":
    main()
