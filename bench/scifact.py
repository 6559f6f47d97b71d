"""BEIR SciFact: nDCG@10 and Recall@100 for dense only, BM25 only, plain RRF and ragdown's search.

    .venv/bin/python bench/scifact.py [--split train|test] [--embedder minilm] [--data-dir DIR]
        [--policy JSON]

The corpus is written as Markdown (one `<_id>.md` per abstract: `# title`, then the text) into a
temporary folder and indexed with the real engine; a hit's path maps back to its `_id`, and a
document's rank is that of its best chunk. Tune on `train` (809 queries); report `test` (300).
nDCG@10 and Recall@100 are `ragdown.evaluation.metrics`' (the arithmetic `ragdown eval` uses).
Pass `--data-dir` to keep the index between runs (it is rebuilt when the embedder changes), and
`--policy '{"section_share": 0}'` to run ragdown's search under other `SearchPolicy` fields.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _common import SHARED_BENCH, commit, require
from ragdown.engine import Engine
from ragdown.evaluation.metrics import ndcg_at, recall_at
from ragdown.indexing.embedders import create_embedder
from ragdown.search.filters import Prefilter, SearchFilters
from ragdown.search.fusion import rrf
from ragdown.search.hybrid import retrieve
from ragdown.search.policy import SearchPolicy

SCIFACT = SHARED_BENCH / "scifact"
DEPTH = 100


def write_corpus(folder: Path) -> int:
    count = 0
    with require(SCIFACT / "corpus.jsonl").open(encoding="utf-8") as corpus:
        for line in corpus:
            doc = json.loads(line)
            (folder / f"{doc['_id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8")
            count += 1
    return count


def load_queries(split: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with require(SCIFACT / "qrels" / f"{split}.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            query_id, doc_id, score = line.split()
            qrels[query_id][doc_id] = int(score)
    queries: dict[str, str] = {}
    with require(SCIFACT / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            query = json.loads(line)
            if query["_id"] in qrels:
                queries[query["_id"]] = query["text"]
    return queries, qrels


def doc_ranking(paths: list[str]) -> list[str]:
    """Document ids in order of their best chunk."""
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(Path(path).stem, None)
    return list(seen)


def evaluate(
    engine: Engine,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    policy: SearchPolicy | None = None,
) -> dict[str, tuple[float, float]]:
    """Dense and BM25 alone (their pools), plain RRF, and the product's pipeline as shipped
    (routing, the embedder's score evidence, the alias boost, abstention)."""
    prefilter = Prefilter(SearchFilters(), engine.store.superseded_paths())
    scores: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for query_id, text in queries.items():
        vector = engine.embedder.embed_query(text)
        rankings = retrieve(engine.store, text, vector, DEPTH * 4, prefilter)
        runs = {
            "dense": doc_ranking([e.row["path"] for e in rankings["dense"]]),
            "bm25": doc_ranking([e.row["path"] for e in rankings.get("lexical", [])]),
            "hybrid, plain RRF": doc_ranking([c.path for c in rrf(rankings)]),
            "hybrid (ragdown search)": doc_ranking(
                [h.path for h in engine.search(text, DEPTH, policy=policy)]
            ),
        }
        for name, ranked in runs.items():
            scores[name].append((ndcg_at(ranked, qrels[query_id]), recall_at(ranked, qrels[query_id], DEPTH)))
    return {
        name: (sum(n for n, _ in values) / len(values), sum(r for _, r in values) / len(values))
        for name, values in scores.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=["train", "test"], default="train")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--data-dir", type=Path, help="keep the index here (default: a temporary folder)")
    parser.add_argument("--policy", type=json.loads, help="SearchPolicy fields for ragdown's search, as JSON")
    args = parser.parse_args()
    queries, qrels = load_queries(args.split)
    with tempfile.TemporaryDirectory(prefix="ragdown-scifact-") as tmp:
        docs = Path(tmp) / "scifact"
        docs.mkdir()
        files = write_corpus(docs)
        embedder = create_embedder(args.embedder)
        engine = Engine(docs, args.data_dir or Path(tmp) / "data", embedder, source=args.embedder)
        started = time.perf_counter()
        report = engine.sync()
        index_s = time.perf_counter() - started
        started = time.perf_counter()
        policy = SearchPolicy(**args.policy) if args.policy else None
        results = evaluate(engine, queries, qrels, policy)
        query_s = time.perf_counter() - started
        engine.close()
    print(
        f"SciFact {args.split}: {len(queries)} queries, {files} documents ({report.chunks} chunks embedded "
        f"in {index_s:.0f} s) · embedder {embedder.name} · commit {commit()}"
        + (f" · policy {json.dumps(args.policy)}" if args.policy else "")
    )
    print()
    print("| retrieval | nDCG@10 | Recall@100 |")
    print("|---|---|---|")
    for name in results:
        ndcg, recall = results[name]
        print(f"| {name} | {ndcg:.3f} | {recall:.3f} |")
    print(f"\n{query_s / len(queries) * 1000:.1f} ms per query (all four runs)")


if __name__ == "__main__":
    main()
