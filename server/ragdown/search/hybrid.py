"""Retrieval: a dense pool and a BM25 pool, pre-filtered, each chunk with its cosine to the query."""

from __future__ import annotations

import logging
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ragdown.indexing.store import ChunkStore
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


# mcp-ragdown takes max(4k, 20). A deeper floor costs little (the dense side scans every row
# anyway) and lets the alias boost reach a named document's sections that neither retriever ranked
# near the top: alias questions first 83/150 at 20, 126 at 40, 128 at 60 (bench/runbooks.py).
MIN_POOL = 60


def pool_size(limit: int) -> int:
    return max(4 * limit, MIN_POOL)


# Dense and lexical retrieval run side by side: LanceDB releases the GIL while it searches.
_RETRIEVERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ragdown-retrieve")


def vectors_of(table: pa.Table) -> np.ndarray:
    column = table.column("vector").combine_chunks()
    return np.asarray(column.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(
        len(table), -1
    )


def _lexical_rows(store: ChunkStore, query: str, pool: int, where: str | None) -> pa.Table | None:
    try:
        return store.lexical(query, pool, where, HIT_COLUMNS)
    except Exception as error:  # the FTS parser refuses some inputs; dense alone still answers
        log.info("full-text search rejected %r: %s", query, error)
        return None


def _lexical_ranking(table: pa.Table | None, vector: np.ndarray) -> list[Retrieved]:
    if table is None or table.num_rows == 0:
        return []
    # The same cosine the dense side reports: the vectors are unit length.
    similarities = vectors_of(table) @ vector
    scores = table.column("_score").to_pylist()
    rows = table.drop_columns(["vector", "_score"]).to_pylist()
    return [Retrieved(r, s, b) for r, s, b in zip(rows, similarities.tolist(), scores, strict=True)]


def _dense_ranking(store: ChunkStore, vector: np.ndarray, pool: int, where: str | None) -> list[Retrieved]:
    table = store.dense(vector, pool, where, HIT_COLUMNS)
    similarities = (1.0 - table.column("_distance").to_numpy()).tolist()
    rows = table.drop_columns(["_distance"]).to_pylist()
    return [Retrieved(r, s, s) for r, s in zip(rows, similarities, strict=True)]


def _dense_in_memory(
    store: ChunkStore, vector: np.ndarray, pool: int, prefilter: Prefilter
) -> list[Retrieved] | None:
    """The dense pool from the in-memory snapshot of a flat-scan table (None when there is none):
    the same cosine ranking LanceDB's flat scan gives, without its per-query overhead."""
    snapshot = store.vector_snapshot(HIT_COLUMNS)
    if snapshot is None:
        return None
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


def start_lexical(
    store: ChunkStore, query: str, pool: int, where: Prefilter | str | None
) -> Future[pa.Table | None] | None:
    """The BM25 pool, started in the background (None for a query without words): it needs no
    query vector, so it runs while the query is embedded (docs/search.md#pipeline)."""
    if _HAS_WORD_RE.search(query) is None:
        return None
    return _RETRIEVERS.submit(_lexical_rows, store, query, pool, _sql(where))


def retrieve(
    store: ChunkStore,
    query: str,
    vector: np.ndarray,
    pool: int,
    where: Prefilter | str | None,
    lexical: Future[pa.Table | None] | bool | None = True,
) -> Rankings:
    """The two rankings, each chunk with its cosine to the query; lexical only for a query with words.

    Given a `Prefilter`, the dense side of a flat-scan table is answered from memory; an SQL
    `where` always goes through LanceDB (benchmarks compare both). `lexical` is the BM25 pool
    `start_lexical` began for this query and `where`; True starts it here.
    """
    prefilter = where if isinstance(where, Prefilter) else None
    sql = _sql(where)
    if lexical is True:
        lexical = start_lexical(store, query, pool, where)
    dense = _dense_in_memory(store, vector, pool, prefilter) if prefilter is not None else None
    if dense is None:
        dense = _dense_ranking(store, vector, pool, sql)
    rankings: Rankings = {"dense": dense}
    if isinstance(lexical, Future):
        rankings["lexical"] = _lexical_ranking(lexical.result(), vector)
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
