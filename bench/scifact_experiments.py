"""SciFact retrieval-quality experiments (tune on train; test once at the end).

Works from an index that `bench/scifact.py --data-dir DIR` built and caches everything in a work
folder ($SFX_WORK, default /tmp/sfx) so that sweeps cost seconds:

    .venv/bin/python bench/scifact_experiments.py cache   --data-dir DIR    # chunks, query vectors, dense
    .venv/bin/python bench/scifact_experiments.py lexical --variant NAME    # one FTS config, on a copy
    .venv/bin/python bench/scifact_experiments.py rechunk --max-chars N [--no-title]   # into $SFX_WORK
    .venv/bin/python bench/scifact_experiments.py eval    [--split test] CONFIG_JSON...
    .venv/bin/python bench/scifact_experiments.py sweep   --base JSON --axis 'w=[0.2,0.3]' ...
    .venv/bin/python bench/scifact_experiments.py paired  A_JSON B_JSON      # bootstrap CI of the gain

Rankings are chunk-level (rows, scores), 1000 deep; every metric is on documents (a chunk's path
stem is its SciFact `_id`, a document ranks by its best chunk unless `agg` says otherwise),
nDCG@10 and Recall@100 as in `bench/scifact.py`. The chosen fusion:

    eval '{"mode":"score_chunk","dnorm":"none","lnorm":"max","w":0.3,"miss":"zero","pool":60}'

i.e. score = 0.7 × cosine + 0.3 × BM25 / (the query's best BM25 in the pool), 0 BM25 when absent.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("LANCE_CPU_THREADS", "2")

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import paired_bootstrap
from scifact import load_queries

WORK = Path(os.environ.get("SFX_WORK", "/tmp/sfx"))  # another folder per chunking variant
DEEP = 1000
SPLITS = ("train", "test")


# --- metrics ---------------------------------------------------------------------------------------


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 100) -> float:
    return len(set(ranked[:k]) & {d for d, g in relevant.items() if g > 0}) / max(1, len(relevant))


def metrics(runs: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> tuple[float, float]:
    n = [ndcg_at(runs[q], qrels[q]) for q in qrels]
    r = [recall_at(runs[q], qrels[q]) for q in qrels]
    return float(np.mean(n)), float(np.mean(r))


def per_query_ndcg(runs: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> np.ndarray:
    return np.array([ndcg_at(runs[q], qrels[q]) for q in sorted(qrels)])


# --- caches ----------------------------------------------------------------------------------------


def chunks_table() -> pa.Table:
    return pq.read_table(WORK / "chunks.parquet")


def chunk_doc_ids() -> np.ndarray:
    """Per chunk row (cache order): its SciFact document id."""
    paths = chunks_table().column("path").to_pylist()
    return np.array([Path(p).stem for p in paths])


def load_pickle(name: str) -> Any:
    with (WORK / name).open("rb") as handle:
        return pickle.load(handle)


def save_pickle(name: str, value: Any) -> None:
    with (WORK / name).open("wb") as handle:
        pickle.dump(value, handle)


def cmd_cache(args: argparse.Namespace) -> None:
    """Chunks (with vectors) from the engine's table, query vectors, exact and LanceDB dense rankings."""
    import lancedb
    from lancedb.query import LanceVectorQueryBuilder

    from ragdown.indexing.embedders import create_embedder

    WORK.mkdir(parents=True, exist_ok=True)
    db = lancedb.connect(args.data_dir / "lance")
    table = db.open_table("chunks")
    columns = ["id", "path", "chunk_index", "title", "heading", "text", "search_text", "vector"]
    data = table.search().select(columns).limit(None).to_arrow()
    pq.write_table(data, WORK / "chunks.parquet")
    vectors = np.asarray(
        data.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False), dtype=np.float32
    ).reshape(data.num_rows, -1)
    np.save(WORK / "vectors.npy", vectors)
    print(f"{data.num_rows} chunks, indices: {[i.index_type for i in table.list_indices()]}")
    embedder = create_embedder("minilm")
    ids = np.array(data.column("id").to_pylist())
    for split in SPLITS:
        queries, _ = load_queries(split)
        qids = sorted(queries)
        qvec = np.stack([embedder.embed_query(queries[q]) for q in qids]).astype(np.float32)
        np.save(WORK / f"qvec_{split}.npy", qvec)
        sims = qvec @ vectors.T
        dense: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for i, q in enumerate(qids):
            top = np.argpartition(-sims[i], DEEP)[:DEEP]
            top = top[np.argsort(-sims[i][top], kind="stable")]
            dense[q] = (top, sims[i][top])
        save_pickle(f"dense_exact_{split}.pkl", dense)
        # What the product's dense side returns (IVF-flat once the table has >= 10,000 rows).
        row_of = {cid: i for i, cid in enumerate(ids)}
        lance: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for i, q in enumerate(qids):
            search = table.search(qvec[i], vector_column_name="vector")
            assert isinstance(search, LanceVectorQueryBuilder)  # a vector given: a vector search
            res = search.distance_type("cosine").select(["id", "_distance"]).limit(400).to_arrow()
            rows = np.array([row_of[c] for c in res.column("id").to_pylist()], dtype=np.int64)
            lance[q] = (rows, 1.0 - res.column("_distance").to_numpy())
        save_pickle(f"dense_lance_{split}.pkl", lance)
        print(f"{split}: {len(qids)} queries embedded and ranked")


def dense_rankings(vectors: np.ndarray) -> None:
    for split in SPLITS:
        queries, _ = load_queries(split)
        qids = sorted(queries)
        qvec = np.load(WORK / f"qvec_{split}.npy")
        sims = qvec @ vectors.T
        dense = {}
        for i, q in enumerate(qids):
            top = np.argpartition(-sims[i], DEEP)[:DEEP]
            top = top[np.argsort(-sims[i][top], kind="stable")]
            dense[q] = (top, sims[i][top])
        save_pickle(f"dense_exact_{split}.pkl", dense)


def cmd_rechunk(args: argparse.Namespace) -> None:
    """Re-chunk the corpus at another size (or without the title in the embedded text), embed it,
    and write the same caches into $SFX_WORK (query vectors are copied from --from)."""
    from ragdown.documents.chunks import chunk_markdown, embedding_text, search_text
    from ragdown.indexing.embedders import create_embedder
    from scifact import SCIFACT

    WORK.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        shutil.copy(args.source / f"qvec_{split}.npy", WORK / f"qvec_{split}.npy")
    rows: dict[str, list[Any]] = defaultdict(list)
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as corpus:
        for line in corpus:
            doc = json.loads(line)
            path = f"{doc['_id']}.md"
            for chunk in chunk_markdown(f"# {doc['title']}\n\n{doc['text']}\n", path, args.max_chars):
                rows["id"].append(f"{path}#{chunk.index}")
                rows["path"].append(path)
                rows["chunk_index"].append(chunk.index)
                rows["title"].append(chunk.title)
                rows["heading"].append(chunk.heading)
                rows["text"].append(chunk.text)
                rows["search_text"].append(search_text(chunk, []))
                rows["embed"].append(
                    chunk.text if args.no_title else embedding_text(chunk.title, chunk.heading, chunk.text)
                )
    embedder = create_embedder("minilm")
    started = time.perf_counter()
    vectors = embedder.embed(rows.pop("embed"), "document")
    print(f"{len(vectors)} chunks embedded in {time.perf_counter() - started:.0f} s")
    np.save(WORK / "vectors.npy", vectors)
    pq.write_table(pa.table(dict(rows)), WORK / "chunks.parquet")
    dense_rankings(vectors)


# --- lexical variants ------------------------------------------------------------------------------

# Each variant: FTS config kwargs, the column text builder, and how the query is issued.
LEX_VARIANTS: dict[str, dict[str, Any]] = {
    "default": {"fts": {}},  # the product today: simple tokenizer, English stem + stop words, folding
    "nostem": {"fts": {"stem": False}},
    "nostop": {"fts": {"remove_stop_words": False}},
    "nostem_nostop": {"fts": {"stem": False, "remove_stop_words": False}},
    "body_only": {"fts": {}, "text": "body"},  # no breadcrumb in BM25 text
    "title2": {"fts": {}, "text": "title2"},  # breadcrumb twice
    "title3": {"fts": {}, "text": "title3"},
    "doc": {"fts": {}, "doc_level": True},  # one BM25 document per abstract (title + full text)
}


def variant_text(kind: str, title: str, text: str) -> str:
    if kind == "body":
        return text
    if kind == "title2":
        return f"{title}\n{title}\n\n{text}"
    if kind == "title3":
        return f"{title}\n{title}\n{title}\n\n{text}"
    return f"{title}\n\n{text}"


def cmd_lexical(args: argparse.Namespace) -> None:
    import lancedb
    from lancedb.index import FTS

    spec = LEX_VARIANTS[args.variant]
    data = chunks_table()
    doc_ids = chunk_doc_ids()
    folder = WORK / "lex" / args.variant
    shutil.rmtree(folder, ignore_errors=True)
    db = lancedb.connect(folder)
    if spec.get("doc_level"):
        # Whole abstracts: title + every chunk's text in order, keyed by the doc id.
        parts: dict[str, list[tuple[int, str]]] = defaultdict(list)
        titles: dict[str, str] = {}
        for d, ci, title, text in zip(
            doc_ids,
            data.column("chunk_index").to_pylist(),
            data.column("title").to_pylist(),
            data.column("text").to_pylist(),
            strict=True,
        ):
            parts[d].append((ci, text))
            titles[d] = title
        keys = sorted(parts)
        texts = [f"{titles[d]}\n\n" + "\n\n".join(t for _, t in sorted(parts[d])) for d in keys]
        table = db.create_table("t", pa.table({"key": keys, "search_text": texts}))
    else:
        kind = spec.get("text", "")
        texts = [
            variant_text(kind, t, x)
            for t, x in zip(data.column("title").to_pylist(), data.column("text").to_pylist(), strict=True)
        ]
        if not kind:
            texts = data.column("search_text").to_pylist()  # exactly the product's column
        table = db.create_table("t", pa.table({"key": list(range(data.num_rows)), "search_text": texts}))
    started = time.perf_counter()
    table.create_index("search_text", config=FTS(**spec["fts"]))
    print(f"{args.variant}: FTS built in {time.perf_counter() - started:.1f} s")
    for split in SPLITS:
        queries, _ = load_queries(split)
        out: dict[str, tuple[list[Any], np.ndarray]] = {}
        failed = 0
        started = time.perf_counter()
        for q in sorted(queries):
            try:
                res = (
                    table.search(queries[q], query_type="fts", fts_columns="search_text")
                    .select(["key", "_score"])
                    .limit(DEEP)
                    .to_arrow()
                )
                out[q] = (res.column("key").to_pylist(), res.column("_score").to_numpy())
            except Exception as error:
                failed += 1
                print(f"  {q}: {error}")
                out[q] = ([], np.zeros(0))
        save_pickle(f"lex_{args.variant}_{split}.pkl", out)
        ms = (time.perf_counter() - started) / len(queries) * 1000
        print(f"  {split}: {len(queries)} queries, {failed} failed, {ms:.1f} ms/query")


# --- fusion and aggregation ------------------------------------------------------------------------

ChunkRun = tuple[np.ndarray, np.ndarray]  # chunk rows, scores (best first)


class Data:
    """Cached rankings for one split, as chunk-row arrays; documents via `doc_of`."""

    def __init__(self, split: str, dense: str = "dense_exact") -> None:
        self.split = split
        self.queries, self.qrels = load_queries(split)
        self.qids = sorted(self.queries)
        self.doc_of = chunk_doc_ids()
        self.dense: dict[str, ChunkRun] = load_pickle(f"{dense}_{split}.pkl")
        self._lex: dict[str, dict[str, ChunkRun]] = {}
        self._vectors: np.ndarray | None = None
        self._qvec: dict[str, np.ndarray] | None = None

    def cosine(self, q: str, rows: np.ndarray) -> np.ndarray:
        """The query's cosine to chunk rows (the product has it for lexical hits too)."""
        if self._vectors is None:
            self._vectors = np.load(WORK / "vectors.npy")
            self._qvec = dict(zip(self.qids, np.load(WORK / f"qvec_{self.split}.npy"), strict=True))
        assert self._qvec is not None
        return np.asarray(self._vectors[rows.astype(np.int64)] @ self._qvec[q])

    def lexical(self, variant: str) -> dict[str, ChunkRun]:
        if variant not in self._lex:
            raw = load_pickle(f"lex_{variant}_{self.split}.pkl")
            self._lex[variant] = {
                q: (
                    np.asarray(keys, dtype=object if LEX_VARIANTS[variant].get("doc_level") else np.int64),
                    np.asarray(scores, dtype=np.float64),
                )
                for q, (keys, scores) in raw.items()
            }
        return self._lex[variant]


def doc_scores(
    rows: np.ndarray, scores: np.ndarray, doc_of: np.ndarray | None, agg: str, lam: float
) -> dict[str, float]:
    """Chunk scores -> document scores. `max`: best chunk; `maxsum`: best + lam * the others' sum;
    `maxmean`: best + lam * mean of the others; doc-level runs (doc_of None) pass through."""
    if doc_of is None:
        return {str(k): float(s) for k, s in zip(rows, scores, strict=True)}
    per: dict[str, list[float]] = defaultdict(list)
    for r, s in zip(rows, scores, strict=True):
        per[doc_of[r]].append(float(s))
    out: dict[str, float] = {}
    for d, values in per.items():
        best = values[0]  # rankings are best first
        rest = values[1:]
        if agg == "max" or not rest:
            out[d] = best
        elif agg == "maxsum":
            out[d] = best + lam * sum(rest)
        elif agg == "top2":
            out[d] = best + lam * rest[0]
        elif agg == "maxmean":
            out[d] = best + lam * sum(rest) / len(rest)
        else:
            raise ValueError(agg)
    return out


def ranks_to_rrf(order: list[str], k: float) -> dict[str, float]:
    return {d: 1.0 / (k + i + 1) for i, d in enumerate(order)}


def normalise(scores: dict[str, float], how: str) -> dict[str, float]:
    if not scores:
        return {}
    v = np.array(list(scores.values()))
    if how == "minmax":
        lo, hi = v.min(), v.max()
        span = hi - lo if hi > lo else 1.0
        return {d: (s - lo) / span for d, s in scores.items()}
    if how == "zscore":
        mu, sd = v.mean(), v.std() or 1.0
        return {d: (s - mu) / sd for d, s in scores.items()}
    if how == "max":
        top = v.max() or 1.0
        return {d: s / top for d, s in scores.items()}
    raise ValueError(how)


def by_score(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda d: scores[d], reverse=True)


def chunk_level_fuse(
    runs: list[tuple[ChunkRun, float]], k: float, pool: int
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted chunk-level RRF (the product's shape): returns fused chunk rows and scores, best first."""
    fused: dict[int, float] = defaultdict(float)
    for (rows, _), weight in runs:
        for i, r in enumerate(rows[:pool]):
            fused[int(r)] += weight / (k + i + 1)
    order = sorted(fused, key=lambda r: fused[r], reverse=True)
    return np.array(order, dtype=np.int64), np.array([fused[r] for r in order])


Config = dict[str, Any]


def norm_params(values: np.ndarray, how: str) -> tuple[float, float]:
    """(shift, scale) so that (x - shift) / scale is the normalised score."""
    if len(values) == 0:
        return 0.0, 1.0
    if how == "minmax":
        lo, hi = float(values.min()), float(values.max())
        return lo, (hi - lo) or 1.0
    if how == "zscore":
        return float(values.mean()), float(values.std()) or 1.0
    if how == "max":  # BM25 / top score; cosine raw
        return 0.0, float(values.max()) or 1.0
    if how == "none":
        return 0.0, 1.0
    raise ValueError(how)


def score_chunk(data: Data, q: str, dense: ChunkRun, lexical: ChunkRun, cfg: Config) -> dict[str, float]:
    """Chunk-level convex score fusion (what fusion.py could do): every candidate has its cosine; a
    chunk missing from the BM25 pool gets BM25 = `miss` (0 raw, or the pool minimum); then documents."""
    w = cfg.get("w", 0.4)
    norm = str(cfg.get("norm", "zscore"))
    dnorm, lnorm = str(cfg.get("dnorm", norm)), str(cfg.get("lnorm", norm))
    d_rows, d_scores = dense
    l_rows, l_scores = lexical
    rows = np.unique(np.concatenate([d_rows, l_rows]).astype(np.int64))
    cos = data.cosine(q, rows)
    ds, dk = norm_params(np.asarray(d_scores), dnorm)
    bm = dict(zip(l_rows.tolist(), l_scores.tolist(), strict=True))
    miss = 0.0 if cfg.get("miss", "min") == "zero" or len(l_scores) == 0 else float(np.min(l_scores))
    lraw = np.array([bm.get(int(r), miss) for r in rows])
    ls, lk = norm_params(np.asarray(l_scores), lnorm)
    dpart = (cos - ds) / dk
    if cfg.get("dmiss") == "zero":  # fusion.score_fusion today: a chunk missing from the dense pool gets 0
        in_dense = set(d_rows.tolist())
        dpart = np.array([v if int(r) in in_dense else 0.0 for r, v in zip(rows, dpart, strict=True)])
    lpart = (lraw - ls) / lk
    if cfg.get("miss") == "zero" and lnorm == "minmax":  # missing from BM25 -> normalised 0
        in_lex = set(l_rows.tolist())
        lpart = np.array([v if int(r) in in_lex else 0.0 for r, v in zip(rows, lpart, strict=True)])
    fused = (1 - w) * dpart + w * lpart
    order = np.argsort(-fused, kind="stable")
    return doc_scores(rows[order], fused[order], data.doc_of, cfg.get("agg", "max"), cfg.get("lam", 0.0))


def run_config(data: Data, cfg: Config) -> dict[str, list[str]]:
    """One document ranking per query for a configuration.

    cfg keys: lex (variant), mode ('dense' | 'bm25' | 'rrf_chunk' | 'rrf_doc' | 'score_doc'), k, w (lexical
    weight; dense weight 1-w for score fusion, 1 for rrf), pool (chunks per retriever), agg/lam (chunk ->
    doc aggregation), norm ('minmax' | 'zscore'), dagg/dlam (aggregation for the dense side if different).
    """
    mode = cfg["mode"]
    pool = cfg.get("pool", 400)
    lex = data.lexical(cfg.get("lex", "default")) if mode != "dense" else None
    lex_doc_level = bool(LEX_VARIANTS[cfg.get("lex", "default")].get("doc_level"))
    out: dict[str, list[str]] = {}
    agg, lam = str(cfg.get("agg", "max")), float(cfg.get("lam", 0.0))
    lagg, llam = str(cfg.get("lagg", agg)), float(cfg.get("llam", lam))
    for q in data.qids:
        d_rows, d_scores = data.dense[q]
        d_rows, d_scores = d_rows[:pool], d_scores[:pool]
        if mode == "dense":
            out[q] = by_score(doc_scores(d_rows, d_scores, data.doc_of, agg, lam))
            continue
        assert lex is not None
        l_rows, l_scores = lex[q]
        l_rows, l_scores = l_rows[:pool], l_scores[:pool]
        l_map = None if lex_doc_level else data.doc_of
        if mode == "bm25":
            out[q] = by_score(doc_scores(l_rows, l_scores, l_map, lagg, llam))
            continue
        w = cfg.get("w", 0.5)
        if mode == "rrf_chunk":  # product: fuse chunks, then a doc is its best chunk (or agg)
            runs = [((d_rows, d_scores), 2 * (1 - w)), ((l_rows, l_scores), 2 * w)]
            rows, scores = chunk_level_fuse(runs, cfg.get("k", 60), pool)
            out[q] = by_score(doc_scores(rows, scores, data.doc_of, agg, lam))
            continue
        if mode == "score_chunk":
            out[q] = by_score(score_chunk(data, q, (d_rows, d_scores), (l_rows, l_scores), cfg))
            continue
        dd = doc_scores(d_rows, d_scores, data.doc_of, agg, lam)
        ld = doc_scores(l_rows, l_scores, l_map, lagg, llam)
        if mode == "rrf_doc":
            k = cfg.get("k", 60)
            a, b = ranks_to_rrf(by_score(dd), k), ranks_to_rrf(by_score(ld), k)
            fused = {d: 2 * (1 - w) * a.get(d, 0.0) + 2 * w * b.get(d, 0.0) for d in set(a) | set(b)}
        elif mode == "score_doc":
            norm = cfg.get("norm", "minmax")
            a, b = normalise(dd, norm), normalise(ld, norm)
            # a document missing from one list gets that list's minimum
            amin = min(a.values()) if a else 0.0
            bmin = min(b.values()) if b else 0.0
            fused = {d: (1 - w) * a.get(d, amin) + w * b.get(d, bmin) for d in set(a) | set(b)}
        else:
            raise ValueError(mode)
        out[q] = by_score(fused)
    return out


def routed_queries(data: Data) -> set[str]:
    from ragdown.search.routing import is_routed

    return {q for q in data.qids if is_routed(data.queries[q])}


def run_any(data: Data, cfg: Config) -> dict[str, list[str]]:
    """`{"plain": cfg1, "routed": cfg2}` applies cfg2 to the queries the pipeline routes (routing.is_routed);
    `{"only": "routed"|"plain", ...}` restricts evaluation to one subset."""
    cfg = dict(cfg)
    only = cfg.pop("only", None)
    if "plain" in cfg:
        plain, routed = run_config(data, cfg["plain"]), run_config(data, cfg["routed"])
        chosen = routed_queries(data)
        runs = {q: (routed[q] if q in chosen else plain[q]) for q in data.qids}
    else:
        runs = run_config(data, cfg)
    if only:
        chosen = routed_queries(data)
        keep = chosen if only == "routed" else set(data.qids) - chosen
        runs = {q: r for q, r in runs.items() if q in keep}
    return runs


def evaluate(data: Data, cfg: Config) -> tuple[float, float]:
    runs = run_any(data, cfg)
    return metrics(runs, {q: data.qrels[q] for q in runs})


def fmt(cfg: Config) -> str:
    return " ".join(f"{k}={v}" for k, v in cfg.items())


def cmd_eval(args: argparse.Namespace) -> None:
    data = Data(args.split, args.dense)
    for spec in args.configs:
        cfg = json.loads(spec)
        n, r = evaluate(data, cfg)
        print(f"{n:.4f} {r:.4f}  {fmt(cfg)}")


def grid(base: Config, **axes: list[Any]) -> list[Config]:
    configs = [dict(base)]
    for key, values in axes.items():
        configs = [{**c, key: v} for c in configs for v in values]
    return configs


def cmd_sweep(args: argparse.Namespace) -> None:
    data = Data(args.split, args.dense)
    base = json.loads(args.base)
    axes = {k: json.loads(v) for k, v in (a.split("=", 1) for a in args.axis)}
    results = []
    for cfg in grid(base, **axes):
        n, r = evaluate(data, cfg)
        results.append((n, r, cfg))
        print(f"{n:.4f} {r:.4f}  {fmt(cfg)}", flush=True)
    best = max(results, key=lambda t: t[0])
    print(f"BEST {best[0]:.4f} {best[1]:.4f}  {fmt(best[2])}")


def cmd_paired(args: argparse.Namespace) -> None:
    """Paired bootstrap / sign test between two configurations (per-query nDCG@10)."""
    data = Data(args.split, args.dense)
    a = per_query_ndcg(run_any(data, json.loads(args.a)), data.qrels)
    b = per_query_ndcg(run_any(data, json.loads(args.b)), data.qrels)
    print(paired_bootstrap(a, b))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("cache")
    p.add_argument("--data-dir", type=Path, required=True)
    p.set_defaults(func=cmd_cache)
    p = sub.add_parser("rechunk")
    p.add_argument("--max-chars", type=int, default=500)
    p.add_argument("--no-title", action="store_true", help="embed the chunk text without the breadcrumb")
    p.add_argument("--source", type=Path, default=Path("/tmp/sfx"), help="where the query vectors are")
    p.set_defaults(func=cmd_rechunk)
    p = sub.add_parser("lexical")
    p.add_argument("--variant", choices=sorted(LEX_VARIANTS), required=True)
    p.set_defaults(func=cmd_lexical)
    for name, func in (("eval", cmd_eval), ("sweep", cmd_sweep), ("paired", cmd_paired)):
        p = sub.add_parser(name)
        p.add_argument("--split", choices=SPLITS, default="train")
        p.add_argument("--dense", default="dense_exact", choices=["dense_exact", "dense_lance"])
        p.set_defaults(func=func)
        if name == "eval":
            p.add_argument("configs", nargs="+", help="JSON configurations")
        elif name == "sweep":
            p.add_argument("--base", required=True)
            p.add_argument("--axis", action="append", default=[], help="key=JSON list")
        else:
            p.add_argument("a")
            p.add_argument("b")
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
