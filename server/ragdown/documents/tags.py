"""Tags: front matter `tags` and inline `#tags` outside code, normalised and nested with `/`.

Python's `\\w` (letters, digits and underscore, Unicode-aware) stands in for `[\\p{L}\\p{N}_]`.
"""

from __future__ import annotations

import re
import unicodedata

from ragdown.documents import work
from ragdown.documents.headings import split_attributes
from ragdown.documents.lines import FenceTracker, match_heading, replace_inline_code

_TAG_BODY_RE = re.compile(r"^[\w\-/]+$")
_INLINE_TAG_RE = re.compile(r"(?:^|\s)#([\w\-/]+)")
_INDENTED_CODE_RE = re.compile(r"^( {4}|\t)")
# `[summary]: #summary`: a link reference definition, whose destination is no tag (CommonMark 4.7).
_LINK_DEFINITION_RE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*\S")
FRONT_MATTER_SPLIT = re.compile(r"[\s,]+")


def _is_number(char: str) -> bool:
    """`\\p{N}`: a number by general category; `str.isnumeric` also takes CJK numeral letters like 一."""
    return unicodedata.category(char).startswith("N")


def normalise_tag(raw: str) -> str | None:
    """`#Infra/DB/` → `infra/db`; None for what is not a tag (empty, punctuation, digits only)."""
    # rstrip, not the regex /+$: that one retries from every `/` of a long run, quadratic in it.
    work.read(len(raw))
    tag = raw.strip().lstrip("#").rstrip("/").lower()
    if not tag or not _TAG_BODY_RE.match(tag) or all(c == "/" or _is_number(c) for c in tag):
        return None
    return tag


def inline_tags(lines: list[str], body_start: int) -> list[str]:
    """Candidate tags in the body: not in fences, indented code or inline code spans, not in link
    reference definitions, and not in a heading's trailing attribute block (`## Summary { #summary }`)."""
    found: list[str] = []
    fence = FenceTracker()
    for line in lines[body_start:]:
        work.read(len(line))
        if fence.feed(line) or fence.open or _INDENTED_CODE_RE.match(line) or _LINK_DEFINITION_RE.match(line):
            continue
        if match_heading(line) is not None:
            line = split_attributes(line.rstrip())[0]
        prose = replace_inline_code(line, lambda _: " ")
        found.extend(match.group(1) for match in _INLINE_TAG_RE.finditer(prose))
    return found


def collect_tags(front_tags: list[str], lines: list[str], body_start: int) -> list[str]:
    """The sorted, de-duplicated union of front matter and inline tags."""
    tags = {t for t in (normalise_tag(raw) for raw in [*front_tags, *inline_tags(lines, body_start)]) if t}
    return sorted(tags)
