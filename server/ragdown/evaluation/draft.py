"""`ragdown eval --draft-from-log` (docs/evaluation.md#a-draft-from-the-query-log): a golden file
drafted from what people asked, so nobody starts from an empty one.

The query log records each search's hit paths and line ranges but no headings, and its hits are
those of the moment: each distinct query is searched again, as `ragdown eval` will search it, and
its first hits become the line's candidates. A search proposes its top hit as `expected`; a hook
prompt that injected nothing, or a search that finds nothing, is written `unanswerable` with a note
asking the person to confirm that or name the answer. Every line is `"draft": true`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ragdown.evaluation.golden import GoldenLine, format_golden
from ragdown.evaluation.options import DEFAULT_LIMIT
from ragdown.evaluation.targets import hit_targets, normalised

if TYPE_CHECKING:  # the search stack loads LanceDB; a hit is only passed through here
    from ragdown.search.hybrid import Hit
from ragdown.search.usage import SEARCH_KINDS

# Searches a person or agent asked: the server's kinds, and `ragdown search` with the log on.
ASKED_KINDS = (*SEARCH_KINDS, "cli")
HASHED = "sha256:"  # a hook prompt logged without its words (RAGDOWN_QUERY_LOG_PROMPTS off)
NOTE_HOOK = (
    "the hook found nothing to add for this prompt: confirm it is unanswerable, or put the right "
    "target in expected and set unanswerable to false"
)
NOTE_NOTHING = (
    "the search finds nothing: confirm it is unanswerable, or put the right target in expected "
    "and set unanswerable to false"
)
NOTE_SEARCH = "expected holds the top hit as a proposal: confirm it, or pick from candidates, then drop draft"
_ID_WORDS = re.compile(r"[a-z0-9]+")
ID_CHARS = 48


@dataclass
class Asked:
    """One distinct query: its latest wording, how often and when last it was asked, and whether
    any of those was a search (else only hook prompts that injected nothing)."""

    query: str
    count: int
    last: str  # the latest event's `ts`
    searched: bool
    order: int = 0  # the latest event's place in the log: recency within one second


@dataclass
class Gathered:
    asked: list[Asked]
    hashed: int  # hook prompts that injected nothing but were logged as hashes only


def in_folder(logged: object, folder: str) -> bool:
    """Whether an event's `folder` is this folder, one of its sub-folders, or no folder at all (the
    root endpoint, stdio, `ragdown search`)."""
    if not isinstance(logged, str) or not logged:
        return True
    return logged.split("/")[0] == folder


def gather(
    events: Iterable[dict[str, Any]], folder: str, *, since_days: int | None, now: datetime | None = None
) -> Gathered:
    """The distinct queries of `folder`'s searches and empty hook calls, most asked first, then
    most recent; events older than `since_days` days are left out."""
    cutoff = None
    if since_days is not None:
        cutoff = ((now or datetime.now(UTC)) - timedelta(days=since_days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    found: dict[str, Asked] = {}
    hashed = 0
    for order, event in enumerate(events):
        kind, query, ts = event.get("kind"), event.get("query"), event.get("ts")
        if not isinstance(query, str) or not query.strip() or not isinstance(ts, str):
            continue
        if (cutoff is not None and ts < cutoff) or not in_folder(event.get("folder"), folder):
            continue
        searched = kind in ASKED_KINDS
        if not searched:
            if kind != "context" or event.get("injected"):
                continue
            if query.startswith(HASHED):
                hashed += 1
                continue
        key = normalised(query)
        seen = found.get(key)
        if seen is None:
            found[key] = Asked(" ".join(query.split()), 1, ts, searched, order)
            continue
        seen.count += 1
        seen.searched = seen.searched or searched
        seen.last, seen.query, seen.order = ts, " ".join(query.split()), order
    ordered = sorted(found.values(), key=lambda a: (a.count, a.order), reverse=True)
    return Gathered(ordered, hashed)


def line_id(query: str, taken: set[str]) -> str:
    """A readable id from the query's words, unique in the file (`-2`, `-3` … on a clash)."""
    words = _ID_WORDS.findall(query.casefold())
    base = "-".join(words)[:ID_CHARS].strip("-") or "query"
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}-{number}"
    taken.add(name)
    return name


def draft_line(asked: Asked, hits: list[Hit], name: str) -> GoldenLine:
    candidates = tuple(hit_targets(hits))
    proposed = asked.searched and bool(candidates)
    note = NOTE_SEARCH if proposed else NOTE_NOTHING if asked.searched else NOTE_HOOK
    return GoldenLine(
        id=name,
        query=asked.query,
        expected=candidates[:1] if proposed else (),
        unanswerable=not proposed,
        note=note,
        source=f"query log {asked.last[:10]}",
        candidates=candidates,
        draft=True,
    )


def draft(
    gathered: Gathered,
    search: Callable[[str], list[Hit]],
    *,
    limit: int = DEFAULT_LIMIT,
    known: Iterable[str] = (),
    taken_ids: Iterable[str] = (),
) -> list[GoldenLine]:
    """Up to `limit` draft lines, skipping queries `known` already holds (normalised)."""
    skip = {normalised(q) for q in known}
    taken = set(taken_ids)
    lines: list[GoldenLine] = []
    for asked in gathered.asked:
        if len(lines) == limit:
            break
        if normalised(asked.query) in skip:
            continue
        lines.append(draft_line(asked, search(asked.query), line_id(asked.query, taken)))
    return lines


def draft_text(lines: list[GoldenLine]) -> str:
    return format_golden(lines)
