"""The query log summed up for people (docs/search.md#usage): what was searched (the recent searches,
which the Usage screen lets a person mark for the golden set), the searches that found nothing good
enough (gaps worth a note), how often the hook added context, which documents
are read, with how many of those reads followed a search that showed them, and those counts per UTC
day over the last weeks (the Usage screen's charts)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

SEARCH_KINDS = ("recall", "search", "api")
# A read counts as following a search when a search among this many events before it showed the path.
FOLLOW_WINDOW = 20
TOP = 20
# The days the per-day counts cover, today (UTC) included: a fixed window, so the counts stay a few
# numbers whatever the log holds.
DAYS = 28


class Gap(BaseModel):
    query: str
    folder: str
    count: int
    best: float | None  # the best similarity any of its searches reached; None: no hits at all


class Recent(BaseModel):
    """One query of a folder as last asked, however often (its case and spacing as last written)."""

    query: str
    folder: str
    count: int
    last: str  # the `ts` of its latest search
    best: float | None  # the latest search's best similarity; None: no hits


class Read(BaseModel):
    path: str
    reads: int
    after_search: int


class Day(BaseModel):
    """One UTC day's counts; a day with no events is all zeros."""

    day: str  # YYYY-MM-DD
    searches: int = 0
    gaps: int = 0  # searches whose best hit stayed under the floor, or that found nothing
    hook_calls: int = 0
    hook_injected: int = 0
    hook_empty: int = 0  # hook calls that injected nothing


class Usage(BaseModel):
    searches: int = 0
    gaps: list[Gap] = []
    recent: list[Recent] = []  # the latest TOP distinct searches, the latest first
    hook_calls: int = 0
    hook_injected: int = 0
    reads: int = 0
    most_read: list[Read] = []
    days: list[Day] = []  # the last DAYS days, oldest first

    @property
    def hook_rate(self) -> float | None:
        return self.hook_injected / self.hook_calls if self.hook_calls else None


def events(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """The log's events, oldest first, read a line at a time (a file is never held whole); lines
    that do not parse (a torn write, a hand edit) are skipped. Only "\\n" ends a line: a logged
    query may hold U+2028, which str.splitlines would cut at."""
    for path in paths:
        try:
            file = path.open(encoding="utf-8", errors="replace", newline="\n")
        except FileNotFoundError:
            continue
        with file:
            for line in file:
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(event, dict):
                    yield event


def empty_days(today: date, count: int = DAYS) -> dict[str, Day]:
    """The window's days, oldest first, each with nothing counted yet; keyed by the ISO date that
    starts an event's `ts`."""
    first = today - timedelta(days=count - 1)
    keys = ((first + timedelta(days=n)).isoformat() for n in range(count))
    return {key: Day(day=key) for key in keys}


def _day_of(event: dict[str, Any], days: dict[str, Day]) -> Day | None:
    """The window's day an event falls on, by its `ts` (UTC, as QueryLog writes it); None outside it
    or without a usable `ts`."""
    ts = event.get("ts")
    return days.get(ts[:10]) if isinstance(ts, str) else None


def _rooted(folder: object, path: object) -> str:
    return f"{folder}/{path}" if folder else str(path)


def summarise(
    log: Iterable[dict[str, Any]], min_score: float, today: date | None = None, window: int = DAYS
) -> Usage:
    """One pass over `log`; the per-day counts cover `window` days up to `today` (UTC; now if None)."""
    usage = Usage()
    days = empty_days(today or datetime.now(UTC).date(), window)
    gaps: dict[tuple[str, str], Gap] = {}
    recent: dict[tuple[str, str], Recent] = {}
    reads: Counter[str] = Counter()
    followed: Counter[str] = Counter()
    shown: dict[str, int] = {}  # path -> the index of the last search event that showed it
    for index, event in enumerate(log):
        kind = event.get("kind")
        given = event.get("hits")
        hits: list[Any] = given if isinstance(given, list) else []
        day = _day_of(event, days)
        if kind in SEARCH_KINDS:
            usage.searches += 1
            gap = _count_search(event, hits, index, min_score, gaps, shown)
            _note_recent(event, hits, recent)
            if day is not None:
                day.searches += 1
                day.gaps += gap
        elif kind == "context":
            injected = bool(event.get("injected"))
            usage.hook_calls += 1
            usage.hook_injected += injected
            if day is not None:
                day.hook_calls += 1
                day.hook_injected += injected
                day.hook_empty += not injected
        elif kind == "read" and isinstance(event.get("path"), str):
            usage.reads += 1
            reads[event["path"]] += 1
            last = shown.get(event["path"])
            if last is not None and index - last <= FOLLOW_WINDOW:
                followed[event["path"]] += 1
    usage.gaps = sorted(gaps.values(), key=lambda g: (-g.count, g.query))[:TOP]
    usage.recent = list(reversed(recent.values()))[:TOP]
    usage.most_read = [
        Read(path=path, reads=count, after_search=followed[path]) for path, count in reads.most_common(TOP)
    ]
    usage.days = list(days.values())
    return usage


def _note_recent(event: dict[str, Any], hits: list[Any], recent: dict[tuple[str, str], Recent]) -> None:
    """The search as the latest of its query (case and spacing aside) in its folder: moved to the end."""
    query = str(event.get("query") or "")
    if not query.strip():
        return
    folder = str(event.get("folder") or "")
    key = (" ".join(query.split()).casefold(), folder)
    sims = [float(h["similarity"]) for h in hits if isinstance(h, dict) and "similarity" in h]
    before = recent.pop(key, None)
    count = before.count + 1 if before else 1
    ts = str(event.get("ts") or "")
    recent[key] = Recent(query=query, folder=folder, count=count, last=ts, best=max(sims) if sims else None)


def _count_search(
    event: dict[str, Any],
    hits: list[Any],
    index: int,
    min_score: float,
    gaps: dict[tuple[str, str], Gap],
    shown: dict[str, int],
) -> bool:
    """One search: the paths it showed (at `index`), and a gap when no hit reached `min_score`
    (then True)."""
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
        return True
    return False
