"""Which ranking rules a search applies: one value object, so benchmarks can switch rules off."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SearchPolicy:
    """The ranking rules of BEHAVIOUR §3 and abstention.

    `max_per_document` (0 = no cap) and `follow_links` (0 = off) come from `RAGDOWN_MAX_PER_DOCUMENT`
    and `RAGDOWN_FOLLOW_LINKS`; the switches exist so benchmarks can measure each rule's effect.
    """

    route_identifiers: bool = True
    alias_boost: bool = True
    max_per_document: int = 0
    follow_links: int = 0
    abstain: bool = True
