"""docs/documents.md#heading-ranges heading ranges: the lines under a heading, for `Note#Heading` reads and
appends."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragdown.documents import work
from ragdown.documents.lines import BOM, FenceTracker, match_heading, split_lines

# A trailing `{#id}` / `{: #id .class key=value}` on a heading: an attribute block (Pandoc, mdBook,
# markdown-it-attrs), neither text nor tags: from the last `{`, an optional `:`, words, the first
# `}`, then only whitespace. Found with find and strip: the regex \{:?\s*([^{}]*)\}\s* backtracked
# through `\s*` and `[^{}]*` over a long run of spaces with no `}` (quadratic: `# x {`, 40,000
# spaces and `y` took 44 s).
_ATTR_WORD_RE = re.compile(r"[#.][\w\-:.]+|[\w\-]+=[^\s{}]+")


def split_attributes(heading: str) -> tuple[str, list[str]]:
    """A heading's text without its trailing attribute block, and the block's words (`#id`, `.class`,
    `key=value`); the text as it is and no words when there is none (`# Use {braces}` is text)."""
    work.read(len(heading))
    start = heading.rfind("{")
    close = heading.find("}", start) if start >= 0 else -1
    if close < 0 or heading[close + 1 :].strip():
        return heading, []
    words = heading[start + 1 : close].removeprefix(":").split()
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
