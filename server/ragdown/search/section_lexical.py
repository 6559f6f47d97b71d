"""Section-level BM25 (docs/search.md#section-level-bm25): a long section is stored as several chunks, and a
query's words can be spread over them. BM25 over the whole section, computed from the chunks'
postings, is mixed into each BM25-pool chunk's score before fusion, so the chunk of a section that
holds the question's words between its chunks ranks above one that holds them only by chance.

A section's term counts are the sum of its chunks' (each chunk's BM25 text repeats its breadcrumb,
and the sum keeps those repeats), its length the sum of theirs; the document frequencies and the
average length are counted over sections. A section of one chunk scores what its chunk scores when
every section is one chunk, so the rule changes nothing there.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ragdown.indexing.lexicon import K1, B, Lexicon, bm25
from ragdown.search.fusion import Rankings, Retrieved
from ragdown.search.policy import SECTION_SHARE


@dataclass(frozen=True)
class Sections:
    """Each row's section (a path and heading) as a number, and BM25's per-section norms."""

    of_row: npt.NDArray[np.int64]
    norms: npt.NDArray[np.float64]  # k1 * (1 - b + b * length / average length), per section
    documents: int  # sections with at least one term
    count: int
    several: bool  # some section has two chunks or more (otherwise the rule changes nothing)

    @classmethod
    def of(cls, columns: pa.Table, lexicon: Lexicon) -> Sections:
        keys = pc.binary_join_element_wise(columns.column("path"), columns.column("heading"), "\x00")
        encoded = pc.dictionary_encode(keys).combine_chunks()
        of_row = np.asarray(encoded.indices, dtype=np.int64)
        count = len(encoded.dictionary)
        length = np.bincount(of_row, weights=np.asarray(lexicon.lengths, dtype=np.float64), minlength=count)
        documents = int(np.count_nonzero(length))
        average = float(length.sum()) / max(documents, 1) or 1.0
        norms = np.asarray(K1 * (1.0 - B + B * length / average), dtype=np.float64)
        return cls(of_row, norms, documents, count, count < of_row.size)

    def scores(self, lexicon: Lexicon, query: str) -> npt.NDArray[np.float64] | None:
        """Every section's BM25 score for `query` (its analysis as `Lexicon.scores`); None when no
        term matches."""
        wanted = lexicon.query_terms(query)
        if not wanted:
            return None
        total = np.zeros(self.count, dtype=np.float64)
        for term, repeats in wanted.items():
            start, end = lexicon.starts[term], lexicon.starts[term + 1]
            counts = np.bincount(
                self.of_row[lexicon.rows[start:end]], weights=lexicon.counts[start:end], minlength=self.count
            )
            held = np.flatnonzero(counts)
            total[held] += bm25(repeats, held.size, self.documents, counts[held], self.norms[held])
        return total


# One `Sections` per set of postings, dropped with them.
_CACHE: dict[int, Sections] = {}
_LOCK = threading.Lock()


def sections_for(columns: pa.Table, lexicon: Lexicon) -> Sections:
    key = id(lexicon)
    with _LOCK:
        found = _CACHE.get(key)
    if found is not None:
        return found
    built = Sections.of(columns, lexicon)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = built
            weakref.finalize(lexicon, _CACHE.pop, key, None)
        return _CACHE[key]


def with_sections(
    rankings: Rankings,
    positions: npt.NDArray[np.int64],
    sections: Sections,
    lexicon: Lexicon,
    query: str,
    share: float = SECTION_SHARE,
) -> Rankings:
    """The rankings with the BM25 pool's scores mixed with their sections' — `(1 − share)` × the
    chunk's score over the pool's best plus `share` × its section's over the best of the pool's
    sections — and re-sorted (stable). `positions` are the pool's rows in the postings, in its order.
    Unchanged when `share` is 0, no section has two chunks, or nothing matches."""
    pool = rankings.get("lexical", [])
    if share == 0 or not pool or not sections.several or len(pool) != positions.size:
        return rankings
    totals = sections.scores(lexicon, query)
    if totals is None:
        return rankings
    of_pool = totals[sections.of_row[positions]]
    top_chunk = max(e.raw for e in pool)
    top_section = float(of_pool.max())
    if top_chunk <= 0 or top_section <= 0:
        return rankings
    mixed = [
        Retrieved(e.row, e.similarity, (1.0 - share) * e.raw / top_chunk + share * float(s) / top_section)
        for e, s in zip(pool, of_pool.tolist(), strict=True)
    ]
    return {**rankings, "lexical": sorted(mixed, key=lambda e: e.raw, reverse=True)}
