"""What a store keeps in memory between searches until its table changes (docs/design.md#table-layout):
reads derived from the whole table, and the rows with their vectors for a flat dense scan."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa

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

    @cached_property
    def positions(self) -> dict[str, int]:
        """id -> row, built when first needed: a search answered from the postings never needs it."""
        ids = self.columns.column("id").to_pylist()
        return dict(zip(ids, range(len(ids)), strict=True))


class ReadCache:
    """Values computed from one version of a table. `generation` moves on with every `forget`, so a
    value computed across a write is not kept; `lock` is also the one writes to the table hold."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshot: VectorSnapshot | None = None
        self.generation = 0
        self._memo: dict[str, Any] = {}
        self._seen_version: int | None = None

    def refresh(self, version: int) -> None:
        """Forget everything when the table is at another `version` than last seen (a commit by
        another process)."""
        if version != self._seen_version:
            with self.lock:
                if self._seen_version is not None:
                    self.forget()
                self._seen_version = version

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

    def forget(self) -> None:
        """Drop every kept value; the caller holds `lock`."""
        self._memo = {}
        self.snapshot = None
        self.generation += 1
