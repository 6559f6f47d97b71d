"""Retrieval: a dense pool and a BM25 pool, pre-filtered, each chunk with its cosine to the query."""

from __future__ import annotations

import logging
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ragdown.indexing.store import ChunkStore
from ragdown.search.aliases import row_aliases
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


def _lexical_ranking(
    store: ChunkStore, query: str, vector: np.ndarray, pool: int, where: str | None
) -> list[Retrieved]:
    try:
        table = store.lexical(query, pool, where, HIT_COLUMNS)
    except Exception as error:  # the FTS parser refuses some inputs; dense alone still answers
        log.info("full-text search rejected %r: %s", query, error)
        return []
    if table.num_rows == 0:
        return []
    similarities = (
        vectors_of(table) @ vector
    )  # the same cosine the dense side reports: vectors are unit length
    scores = table.column("_score").to_pylist()
    rows = table.drop_columns(["vector", "_score"]).to_pylist()
    return [Retrieved(r, s, b) for r, s, b in zip(rows, similarities.tolist(), scores, strict=True)]


def _dense_ranking(store: ChunkStore, vector: np.ndarray, pool: int, where: str | None) -> list[Retrieved]:
    table = store.dense(vector, pool, where, HIT_COLUMNS)
    similarities = (1.0 - table.column("_distance").to_numpy()).tolist()
    rows = table.drop_columns(["_distance"]).to_pylist()
    return [Retrieved(r, s, s) for r, s in zip(rows, similarities, strict=True)]


def retrieve(store: ChunkStore, query: str, vector: np.ndarray, pool: int, where: str | None) -> Rankings:
    """The two rankings as (row, cosine similarity to the query); lexical only for a query with words."""
    lexical = (
        _RETRIEVERS.submit(_lexical_ranking, store, query, vector, pool, where)
        if _HAS_WORD_RE.search(query)
        else None
    )
    rankings: Rankings = {"dense": _dense_ranking(store, vector, pool, where)}
    if lexical is not None:
        rankings["lexical"] = lexical.result()
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
