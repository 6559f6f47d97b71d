"""docs/documents.md#heading-ranges heading ranges: the lines under a heading, for `Note#Heading` reads and
appends."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragdown.documents.lines import BOM, FenceTracker, match_heading, split_lines

# A trailing `{#id}` / `{: #id .class key=value}` on a heading: an attribute block (Pandoc, mdBook,
# markdown-it-attrs), neither text nor tags. Matched from the last `{` only, so a heading full of
# braces costs one pass.
_HEADING_ATTRS_RE = re.compile(r"\{:?\s*([^{}]*)\}\s*")
_ATTR_WORD_RE = re.compile(r"[#.][\w\-:.]+|[\w\-]+=[^\s{}]+")


def split_attributes(heading: str) -> tuple[str, list[str]]:
    """A heading's text without its trailing attribute block, and the block's words (`#id`, `.class`,
    `key=value`); the text as it is and no words when there is none (`# Use {braces}` is text)."""
    start = heading.rfind("{")
    match = _HEADING_ATTRS_RE.fullmatch(heading, start) if start >= 0 else None
    words = match.group(1).split() if match else []
    if not words or not all(_ATTR_WORD_RE.fullmatch(word) for word in words):
        return heading, []
    return heading[:start].rstrip(), words


def heading_range_in_lines(lines: Sequence[str], anchor: str) -> tuple[int, int] | None:
    """The 1-based inclusive lines from the heading `anchor` names to the line before the next
    heading of its level or above (or the last line). None when no heading outside a fence matches.

    In `A#B` only the last part, `B`, is matched: the first heading with that text wins, whatever
    section it sits under. The comparison trims and lowercases both sides.
    """
    if lines and lines[0].startswith(BOM):  # from a caller that split the text itself (reads, writes)
        lines = [lines[0].removeprefix(BOM), *lines[1:]]
    wanted = anchor.rsplit("#", 1)[-1].strip().lower()
    if not wanted:
        return None  # an empty anchor names no heading; the caller reads the whole document
    fence = FenceTracker()
    start: int | None = None
    level = 0
    for number, line in enumerate(lines, start=1):
        if fence.feed(line) or fence.open:
            continue
        heading = match_heading(line)
        if heading is None:
            continue
        if start is None:
            if heading.name.strip().lower() == wanted:
                start, level = number, heading.level
        elif heading.level <= level:
            return start, number - 1
    return None if start is None else (start, len(lines))


def heading_range(text: str, anchor: str) -> tuple[int, int] | None:
    """`heading_range_in_lines` over a document's text, split as docs/documents.md#lines-fences-and-headings
    splits it."""
    return heading_range_in_lines(split_lines(text), anchor)
