"""The per-document cap (docs/search.md#per-document-cap): at most N sections of one document before any
overflow."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def cap_per_document(items: list[T], cap: int, path: Callable[[T], str]) -> list[T]:
    """Keep the first `cap` items of each path in place; the rest follow every kept item, in their
    original order, so a list that other documents cannot fill still fills. `cap` 0 is no cap."""
    if cap <= 0:
        return items
    kept: list[T] = []
    overflow: list[T] = []
    counts: dict[str, int] = {}
    for item in items:
        key = path(item)
        counts[key] = counts.get(key, 0) + 1
        (kept if counts[key] <= cap else overflow).append(item)
    return kept + overflow
