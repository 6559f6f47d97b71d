"""What a store keeps in memory between searches until its table changes (docs/design.md#table-layout):
reads derived from the whole table, and the rows with their vectors for a flat dense scan."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragdown.indexing.derived import vector_matrix
from ragdown.indexing.lexicon import LexiconBuild

T = TypeVar("T")


@dataclass(frozen=True)
class VectorSnapshot:
    """The table's rows (`columns`, which start with `id`) and their vectors, row-aligned, and the
    BM25 postings over the same rows once they are built (docs/search.md#bm25-from-memory)."""

    columns: pa.Table
    vectors: np.ndarray
    lexicon: LexiconBuild = field(default_factory=lambda: LexiconBuild(None))
    # The table version the rows were read at (None: not known), for the snapshot on disk.
    version: int | None = None
    # Every column but the vector and the BM25 text, of the same rows (`columns` is a selection):
    # what the snapshot on disk holds, and what a write updates in place.
    rows: pa.Table | None = None

    @cached_property
    def positions(self) -> dict[str, int]:
        """id -> row, built when first needed: a search answered from the postings never needs it."""
        ids = self.columns.column("id").to_pylist()
        return dict(zip(ids, range(len(ids)), strict=True))

    def updated(self, paths: list[str], added: pa.Table | None, version: int) -> VectorSnapshot | None:
        """The rows after a write that deleted every row of `paths` and then added `added` (full
        rows, vectors and BM25 text included), at `version`: the kept rows in their order, then the
        added ones, as the table lists them; only the added text is analysed. None when the postings
        cannot be built (the next search reads the table)."""
        if self.rows is None:
            return None
        # Postings still being built are waited for, once: dropped instead, under a steady stream of
        # writes they would be read and built again at every write and never be ready.
        lexicon = self.lexicon.start().result()
        if lexicon is None:
            return None
        keep = ~np.asarray(pc.is_in(self.rows.column("path"), pa.array(paths, pa.string())), dtype=bool)
        # Each array is copied once, into memory of its final size: a write's cost here is these
        # copies (and the page faults of fresh memory), linear in the rows held.
        runs = _kept_runs(keep)
        parts = [self.rows.slice(start, end - start) for start, end in runs] or [self.rows.slice(0, 0)]
        old_vectors = np.asarray(self.vectors)
        new_vectors, texts = old_vectors[:0], []
        if added is not None and added.num_rows:
            parts.append(added.select(self.rows.column_names))
            new_vectors = vector_matrix(added)
            texts = added.column("search_text").to_pylist()
        kept = int(np.count_nonzero(keep))
        vectors = np.empty((kept + len(new_vectors), old_vectors.shape[1]), dtype=np.float32)
        at = 0
        for start, end in runs:  # a few block copies, where a boolean index copies row by row
            vectors[at : at + end - start] = old_vectors[start:end]
            at += end - start
        vectors[kept:] = new_vectors
        rows = pa.concat_tables(parts, promote_options="default").combine_chunks()
        return VectorSnapshot(
            rows.select(self.columns.column_names),
            vectors,
            LexiconBuild.built(lexicon.updated(keep, texts)),
            version,
            rows,
        )


def _kept_runs(keep: np.ndarray) -> list[tuple[int, int]]:
    """The runs of rows `keep` keeps, as (start, end): a write deletes one file's rows, so the kept
    rows are a handful of runs around them, each copied (or sliced) as one block."""
    if not keep.any():
        return []
    edges = np.flatnonzero(np.diff(keep.view(np.int8))) + 1
    starts = np.concatenate([[0], edges]).tolist()
    ends = np.concatenate([edges, [keep.size]]).tolist()
    return [(int(start), int(end)) for start, end in zip(starts, ends, strict=True) if keep[start]]


class ReadCache:
    """Values computed from one version of a table. `generation` moves on with every `forget`, so a
    value computed across a write is not kept. While this process changes the table (`changing`),
    the versions its commits make are left to it: searches go on with what is held, never waiting
    for the commit nor dropping what the change will update (docs/design.md#compaction)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshot: VectorSnapshot | None = None
        self.generation = 0
        self._memo: dict[str, Any] = {}
        self._seen_version: int | None = None
        self._changing_from: int | None = None

    @property
    def seen_version(self) -> int | None:
        return self._seen_version

    def refresh(self, version: int) -> None:
        """Forget everything when the table is at another `version` than last seen (a commit by
        another process)."""
        if version != self._seen_version:
            if self._changing_from is not None and self._changing_from == self._seen_version:
                return  # this process's own change, under way: it says what holds once it is done
            with self.lock:
                seen = self._seen_version
                # Versions only grow: an older one was read before a commit this cache followed
                # already (a search that looked while this process wrote), and changes nothing.
                if seen is not None and version <= seen:
                    return
                if seen is not None:
                    self.forget()
                self._seen_version = version

    @property
    def busy(self) -> bool:
        """This process is changing the table now (`changing`)."""
        return self._changing_from is not None

    @contextlib.contextmanager
    def changing(self, version: int) -> Iterator[None]:
        """This process is changing the table, now at `version` (a write or a compaction, one at a
        time): until it ends, searches keep what is held for `version` (a search sees the table as
        it was, or as the change leaves it, never half of it)."""
        with self.lock:
            if self._seen_version is None or version > self._seen_version:
                self.forget()  # what is held is older still: not for this change to keep
                self._seen_version = version
            self._changing_from = version
        try:
            yield
        finally:
            with self.lock:
                self._changing_from = None

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """`compute()`, kept until the table changes. Callers must not mutate what they get."""
        if name in self._memo:
            return cast(T, self._memo[name])
        generation = self.generation
        value = compute()
        with self.lock:
            if generation == self.generation:  # not kept if a write landed meanwhile
                self._memo[name] = value
        return value

    def keep_snapshot(self, snapshot: VectorSnapshot, generation: int) -> None:
        """Keep `snapshot`, read at `generation`, unless a write landed since."""
        with self.lock:
            if generation == self.generation:
                self.snapshot = snapshot

    def written(self, snapshot: VectorSnapshot | None, version: int) -> None:
        """After this process's own write, which left the table at `version`: every kept value
        dropped, and the rows the write left (VectorSnapshot.updated) kept when known, so searches
        go on without reading the table again."""
        with self.lock:
            self.forget()
            self._seen_version = version
            self.snapshot = snapshot

    def restamp(self, old: int, new: int) -> None:
        """A commit that changed no row (a compaction) moved the table from `old` to `new`: what is
        kept for `old` holds for `new`."""
        with self.lock:
            if self._seen_version == old:
                self._seen_version = new
                if self.snapshot is not None and self.snapshot.version == old:
                    self.snapshot = replace(self.snapshot, version=new)

    def forget(self) -> None:
        """Drop every kept value; the caller holds `lock`."""
        self._memo = {}
        self.snapshot = None
        self.generation += 1
