"""The query log summed up for people (docs/search.md#usage): what was searched, the searches that
found nothing good enough (gaps worth a note), how often the hook added context, and which documents
are read, with how many of those reads followed a search that showed them."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

SEARCH_KINDS = ("recall", "search", "api")
# A read counts as following a search when a search among this many events before it showed the path.
FOLLOW_WINDOW = 20
TOP = 20


class Gap(BaseModel):
    query: str
    folder: str
    count: int
    best: float | None  # the best similarity any of its searches reached; None: no hits at all


class Read(BaseModel):
    path: str
    reads: int
    after_search: int


class Usage(BaseModel):
    searches: int = 0
    gaps: list[Gap] = []
    hook_calls: int = 0
    hook_injected: int = 0
    reads: int = 0
    most_read: list[Read] = []

    @property
    def hook_rate(self) -> float | None:
        return self.hook_injected / self.hook_calls if self.hook_calls else None


def events(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """The log's events, oldest first; unreadable lines (a torn write, a hand edit) are skipped."""
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event


def _rooted(folder: object, path: object) -> str:
    return f"{folder}/{path}" if folder else str(path)


def summarise(log: Iterable[dict[str, Any]], min_score: float) -> Usage:
    usage = Usage()
    gaps: dict[tuple[str, str], Gap] = {}
    reads: Counter[str] = Counter()
    followed: Counter[str] = Counter()
    shown: dict[str, int] = {}  # path -> the index of the last search event that showed it
    for index, event in enumerate(log):
        kind = event.get("kind")
        given = event.get("hits")
        hits: list[Any] = given if isinstance(given, list) else []
        if kind in SEARCH_KINDS:
            usage.searches += 1
            _count_search(event, hits, index, min_score, gaps, shown)
        elif kind == "context":
            usage.hook_calls += 1
            if event.get("injected"):
                usage.hook_injected += 1
        elif kind == "read" and isinstance(event.get("path"), str):
            usage.reads += 1
            reads[event["path"]] += 1
            last = shown.get(event["path"])
            if last is not None and index - last <= FOLLOW_WINDOW:
                followed[event["path"]] += 1
    usage.gaps = sorted(gaps.values(), key=lambda g: (-g.count, g.query))[:TOP]
    usage.most_read = [
        Read(path=path, reads=count, after_search=followed[path]) for path, count in reads.most_common(TOP)
    ]
    return usage


def _count_search(
    event: dict[str, Any],
    hits: list[Any],
    index: int,
    min_score: float,
    gaps: dict[tuple[str, str], Gap],
    shown: dict[str, int],
) -> None:
    """One search: the paths it showed (at `index`), and a gap when no hit reached `min_score`."""
    folder = str(event.get("folder") or "")
    sims = [float(h["similarity"]) for h in hits if isinstance(h, dict) and "similarity" in h]
    best = max(sims) if sims else None
    for hit in hits:
        if isinstance(hit, dict) and "path" in hit:
            shown[_rooted(folder, hit["path"])] = index
    if best is None or best < min_score:
        key = (str(event.get("query", "")), folder)
        gap = gaps.setdefault(key, Gap(query=key[0], folder=folder, count=0, best=best))
        gap.count += 1
        if best is not None and (gap.best is None or best > gap.best):
            gap.best = best
