"""One hit per section (docs/search.md#one-hit-per-section): a long section is stored as several chunks,
and without this rule its chunks could fill several of the first slots with one file and heading."""

from __future__ import annotations

from dataclasses import replace

from ragdown.search.fusion import Candidate

# Two chunks of one section are adjacent when at most this many lines lie between them: the chunker
# packs paragraphs, so consecutive chunks are parted by the blank line(s) between two paragraphs.
ADJACENT_GAP = 2


def section_of(candidate: Candidate) -> tuple[str, str]:
    """A section is a path and its heading path (the breadcrumb below the title)."""
    return candidate.path, str(candidate.row["heading"])


def one_per_section(candidates: list[Candidate], merge: bool = False) -> list[Candidate]:
    """Each section once, where its best chunk ranks; its other chunks leave the list, so the next
    sections move up. With `merge`, the chunks adjacent to the best one (and to each other) join it:
    their text in line order, the union of their lines, the best chunk's scores."""
    groups: dict[tuple[str, str], list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault(section_of(candidate), []).append(candidate)
    kept = [group[0] for group in groups.values()]
    if not merge:
        return kept
    return [_merged(group) for group in groups.values()]


def _line(candidate: Candidate, key: str) -> int:
    return int(candidate.row[key])


def _adjacent(first: Candidate, second: Candidate) -> bool:
    """`second` starts at most ADJACENT_GAP lines after `first` ends."""
    return _line(second, "line_start") - _line(first, "line_end") - 1 <= ADJACENT_GAP


def _merged(group: list[Candidate]) -> Candidate:
    """The best chunk (the group's first) with the run of adjacent chunks around it."""
    best = group[0]
    if len(group) == 1:
        return best
    ordered = sorted(group, key=lambda c: _line(c, "line_start"))
    low = high = ordered.index(best)
    while low > 0 and _adjacent(ordered[low - 1], ordered[low]):
        low -= 1
    while high + 1 < len(ordered) and _adjacent(ordered[high], ordered[high + 1]):
        high += 1
    run = ordered[low : high + 1]
    if len(run) == 1:
        return best
    row = {
        **best.row,
        "text": "\n\n".join(str(c.row["text"]) for c in run),
        "line_start": _line(run[0], "line_start"),
        "line_end": _line(run[-1], "line_end"),
    }
    sources = list(dict.fromkeys(s for c in run for s in c.sources))
    return replace(best, row=row, sources=sources)
