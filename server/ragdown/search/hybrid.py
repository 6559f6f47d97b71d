"""Retrieval: a dense pool and a BM25 pool, pre-filtered, each chunk with its cosine to the query."""

from __future__ import annotations

import logging
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ragdown.indexing.derived import vector_matrix
from ragdown.indexing.read_cache import VectorSnapshot
from ragdown.indexing.searched import SearchedStore
from ragdown.search.aliases import row_aliases
from ragdown.search.filters import Prefilter
from ragdown.search.fusion import Candidate, Rankings, Retrieved

log = logging.getLogger(__name__)

HIT_COLUMNS = [
    "id",
    "path",
    "title",
    "heading",
    "text",
    "line_start",
    "line_end",
    "tags",
    "aliases",
    "created_by",
    "mtime_ms",
]
_HAS_WORD_RE = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Hit:
    """A ranked chunk. Ranking uses `score` (fused); every gate uses `similarity` (cosine)."""

    id: str
    path: str
    title: str
    heading: str
    text: str
    line_start: int
    line_end: int
    score: float
    similarity: float
    sources: list[str]
    tags: list[str] = field(default_factory=list)
    created_by: str = ""
    mtime_ms: float = 0.0
    aliases: list[str] = field(default_factory=list)


# Each retriever's pool holds max(4 × limit, MIN_POOL) chunks. A deep floor costs little (the dense
# side scans every row anyway) and lets the alias boost reach a named document's sections that
# neither retriever ranked near the top: alias questions first 83/150 at 20, 126 at 40, 128 at 60
# (bench/runbooks.py).
MIN_POOL = 60


def pool_size(limit: int) -> int:
    return max(4 * limit, MIN_POOL)


# Dense and lexical retrieval run side by side: LanceDB releases the GIL while it searches.
_RETRIEVERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ragdown-retrieve")


def _lexical_rows(
    store: SearchedStore, query: str, pool: int, where: str | None, snapshot: VectorSnapshot | None
) -> pa.Table | None:
    """The BM25 pool: only ids and scores when the rows are in memory (LanceDB's fetch of the other
    columns and the vectors cost a third of the query), else the rows with their vectors."""
    try:
        if snapshot is not None:
            return store.lexical(query, pool, where, ["id"], with_vectors=False)
        return store.lexical(query, pool, where, HIT_COLUMNS)
    except Exception as error:  # the FTS parser refuses some inputs; dense alone still answers
        log.info("full-text search rejected %r: %s", query, error)
        return None


def _lexical_ranking(
    table: pa.Table | None, vector: np.ndarray, snapshot: VectorSnapshot | None
) -> list[Retrieved]:
    if table is None or table.num_rows == 0:
        return []
    scores = table.column("_score").to_pylist()
    if snapshot is None:
        rows = table.drop_columns(["vector", "_score"]).to_pylist()
        # The same cosine the dense side reports: the vectors are unit length.
        similarities = vector_matrix(table) @ vector
        return [Retrieved(r, s, b) for r, s, b in zip(rows, similarities.tolist(), scores, strict=True)]
    # A row written after the snapshot was taken is left out, as the dense side leaves it out.
    ids = table.column("id").to_pylist()
    found = [(snapshot.positions.get(i), s) for i, s in zip(ids, scores, strict=True)]
    kept = [(p, s) for p, s in found if p is not None]
    positions = np.array([p for p, _ in kept], dtype=np.int64)
    return _ranking_from_memory(snapshot, positions, [s for _, s in kept], vector)


def _ranking_from_memory(
    snapshot: VectorSnapshot, positions: np.ndarray, scores: list[float], vector: np.ndarray
) -> list[Retrieved]:
    """The rows at `positions` of the snapshot, with their BM25 `scores` and cosines."""
    rows = snapshot.columns.take(pa.array(positions, type=pa.int64())).to_pylist()
    similarities = snapshot.vectors[positions] @ vector
    return [Retrieved(r, s, b) for r, s, b in zip(rows, similarities.tolist(), scores, strict=True)]


def _dense_ranking(store: SearchedStore, vector: np.ndarray, pool: int, where: str | None) -> list[Retrieved]:
    table = store.dense(vector, pool, where, HIT_COLUMNS)
    similarities = (1.0 - table.column("_distance").to_numpy()).tolist()
    rows = table.drop_columns(["_distance"]).to_pylist()
    return [Retrieved(r, s, s) for r, s in zip(rows, similarities, strict=True)]


def _dense_in_memory(
    snapshot: VectorSnapshot, vector: np.ndarray, pool: int, prefilter: Prefilter
) -> list[Retrieved]:
    """The dense pool from the in-memory snapshot of a flat-scan table: the same cosine ranking
    LanceDB's flat scan gives, without its per-query overhead."""
    # One product over every row beats gathering the passing rows' vectors first.
    every = snapshot.vectors @ vector
    if prefilter.narrows:
        rows = np.flatnonzero(prefilter.mask(snapshot.columns))
        similarities = every[rows]
    else:
        rows, similarities = np.arange(every.size), every
    if rows.size == 0:
        return []
    # Only the pool is sorted: a full sort of every row would cost more than the product itself.
    best = np.argpartition(-similarities, pool - 1)[:pool] if rows.size > pool else np.arange(rows.size)
    best = best[np.argsort(-similarities[best], kind="stable")]
    picked = snapshot.columns.take(pa.array(rows[best])).to_pylist()
    cosines = similarities[best].tolist()
    return [Retrieved(r, s, s) for r, s in zip(picked, cosines, strict=True)]


def _sql(where: Prefilter | str | None) -> str | None:
    return where.sql() if isinstance(where, Prefilter) else where


@dataclass(frozen=True)
class LexicalPool:
    """A BM25 pool: found in memory (`found`: positions in `snapshot` and scores), or being fetched
    from LanceDB (`rows`), its ids read against `snapshot` (None: LanceDB returns full rows)."""

    snapshot: VectorSnapshot | None
    rows: Future[pa.Table | None] | None = None
    found: tuple[np.ndarray, list[float]] | None = None


def _snapshot_for(store: SearchedStore, where: Prefilter | str | None) -> VectorSnapshot | None:
    return store.vector_snapshot(HIT_COLUMNS) if isinstance(where, Prefilter) else None


def start_lexical(
    store: SearchedStore, query: str, pool: int, where: Prefilter | str | None
) -> LexicalPool | None:
    """The BM25 pool (None for a query without words): from the snapshot's postings when they are
    built, else started in the background, as it needs no query vector and runs while the query is
    embedded (docs/search.md#pipeline, #bm25-from-memory)."""
    if _HAS_WORD_RE.search(query) is None:
        return None
    snapshot = _snapshot_for(store, where)
    if snapshot is not None and isinstance(where, Prefilter):  # a snapshot is taken for a Prefilter only
        lexicon = snapshot.lexicon.ready()
        if lexicon is not None:
            keep = where.mask(snapshot.columns) if where.narrows else None
            positions, scores = lexicon.top(query, pool, keep)
            return LexicalPool(snapshot, found=(positions, scores.tolist()))
        snapshot.lexicon.searched()
    rows = _RETRIEVERS.submit(_lexical_rows, store, query, pool, _sql(where), snapshot)
    return LexicalPool(snapshot, rows=rows)


def retrieve(
    store: SearchedStore,
    query: str,
    vector: np.ndarray,
    pool: int,
    where: Prefilter | str | None,
    lexical: LexicalPool | bool | None = True,
) -> Rankings:
    """The two rankings, each chunk with its cosine to the query; lexical only for a query with words.

    Given a `Prefilter`, the dense side of a flat-scan table is answered from memory; an SQL
    `where` always goes through LanceDB (benchmarks compare both). `lexical` is the BM25 pool
    `start_lexical` began for this query and `where`; True starts it here.
    """
    if lexical is True:
        lexical = start_lexical(store, query, pool, where)
    # One look at the snapshot serves both sides: the BM25 pool's ids are read against it.
    snapshot = lexical.snapshot if isinstance(lexical, LexicalPool) else _snapshot_for(store, where)
    if snapshot is not None and isinstance(where, Prefilter):
        dense = _dense_in_memory(snapshot, vector, pool, where)
    else:
        dense = _dense_ranking(store, vector, pool, _sql(where))
    rankings: Rankings = {"dense": dense}
    if isinstance(lexical, LexicalPool):
        if lexical.found is not None and lexical.snapshot is not None:
            positions, scores = lexical.found
            rankings["lexical"] = _ranking_from_memory(lexical.snapshot, positions, scores, vector)
        elif lexical.rows is not None:
            rankings["lexical"] = _lexical_ranking(lexical.rows.result(), vector, lexical.snapshot)
    return rankings


def to_hit(candidate: Candidate) -> Hit:
    row = candidate.row
    return Hit(
        id=row["id"],
        path=row["path"],
        title=row["title"],
        heading=row["heading"],
        text=row["text"],
        line_start=int(row["line_start"]),
        line_end=int(row["line_end"]),
        score=candidate.score,
        similarity=candidate.similarity,
        sources=candidate.sources,
        tags=row["tags"].split(),
        created_by=row["created_by"],
        mtime_ms=float(row["mtime_ms"]),
        aliases=row_aliases(row),
    )
