"""A hit as a golden line names it (docs/evaluation.md#the-golden-file): `path#Heading`, the heading
being the last element of the hit's heading path, or `path` for the text above the first heading."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdown.evaluation.golden import Target, own_heading

if TYPE_CHECKING:  # the search stack loads LanceDB; a hit is only passed through here
    from ragdown.search.hybrid import Hit

# How many of a query's first hits a draft line offers as candidates.
CANDIDATES = 5


def target_of(path: str, heading: str) -> Target:
    own = own_heading(heading) if heading else ""
    return Target(path, own or None)


def hit_targets(hits: list[Hit], count: int = CANDIDATES) -> list[Target]:
    """The first `count` distinct targets of `hits`, best first (two chunks of one section are one)."""
    out: list[Target] = []
    for hit in hits:
        target = target_of(hit.path, hit.heading)
        if target not in out:
            out.append(target)
        if len(out) == count:
            break
    return out


def normalised(query: str) -> str:
    """A query as two askings of it compare: case and runs of whitespace do not count."""
    return " ".join(query.split()).casefold()
