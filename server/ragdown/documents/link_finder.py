"""Finding links in a document's text (docs/documents.md#finding-links): every wikilink and every
Markdown link to a relative path, with its offsets, read in time linear in the text. Resolving them
is `links.py`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ragdown.documents import work
from ragdown.documents.lines import BOM, FenceTracker, blank_inline_code

# Linear: the inside stops at the first bracket, and a start is only a `[[` or `![[`.
WIKILINK_RE = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
# [text](url), ![alt](url), [text](<url>), [text](url "title") follow the rule
# \[[^\]\n]*\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\), the url being its group 1; `markdown_link_urls`
# finds what that regex finds. The regex itself retried from every `[` and rescanned the same url
# from every `](` inside it: quadratic (`[` x 200,000 took 75 s).
_URL_END_RE = re.compile(r"[)\s>]")
_SPACES_RE = re.compile(r"\s*")
_SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
_WIKI_TARGET_END_RE = re.compile(r"[|#]")

LinkKind = Literal["wiki", "markdown"]


@dataclass(frozen=True)
class Link:
    """A link as written: `raw` is a wikilink's inside or a Markdown link's url; `target` is the part
    before any `#heading` (or `|shown`), and `start`/`end` are its offsets in the text, so a move can
    replace just it. `line` is 1-based, counted as docs/documents.md#lines-fences-and-headings counts lines.
    """

    kind: LinkKind
    raw: str
    target: str
    start: int
    end: int
    line: int


def find_links(text: str, *, wiki_only: bool = False) -> list[Link]:
    """Every wikilink, and every Markdown link to a relative path, in text order.

    Links in fenced code or inline code are left out, as a renderer leaves them.
    """
    links: list[Link] = []
    fence = FenceTracker()
    for number, offset, line in _lines_with_offsets(text):
        if fence.feed(line) or fence.open:
            continue
        visible = blank_inline_code(line)  # blanked, not removed: offsets stay offsets in the text
        found = _wikilinks(visible, offset, number)
        if not wiki_only:
            found += _markdown_links(visible, offset, number)
        links += sorted(found, key=lambda link: link.start)
    return links


def _lines_with_offsets(text: str) -> Iterator[tuple[int, int, str]]:
    """(line number, offset of the line in text, line), lines as `split_lines` makes them."""
    work.read(len(text))
    start = len(BOM) if text.startswith(BOM) else 0
    number = 1
    for line_break in _LINE_BREAK_RE.finditer(text):
        yield number, start, text[start : line_break.start()]
        start = line_break.end()
        number += 1
    yield number, start, text[start:]


def _wikilinks(line: str, offset: int, number: int) -> list[Link]:
    work.read(len(line))
    links: list[Link] = []
    for match in WIKILINK_RE.finditer(line):
        inner = match.group(1)
        target = _WIKI_TARGET_END_RE.split(inner, maxsplit=1)[0]
        start = offset + match.start(1)
        links.append(Link("wiki", inner, target, start, start + len(target), number))
    return links


def _markdown_links(line: str, offset: int, number: int) -> list[Link]:
    links: list[Link] = []
    for url_start, url in markdown_link_urls(line):
        if is_external_url(url):
            continue
        target = url.split("#", 1)[0]
        start = offset + url_start
        links.append(Link("markdown", url, target, start, start + len(target), number))
    return links


class _NextMatch:
    """The first match of `pattern` at or after a position, remembered: asked for positions that only
    grow, it reads the line once in all."""

    __slots__ = ("asked", "found", "line", "pattern")

    def __init__(self, pattern: re.Pattern[str], line: str) -> None:
        self.pattern, self.line = pattern, line
        self.asked, self.found = 1, 0  # nothing remembered yet

    def at(self, pos: int) -> int:
        """The position of the first match at or after `pos`, or the line's length when none."""
        if not self.asked <= pos <= self.found:
            match = self.pattern.search(self.line, pos)
            self.asked, self.found = pos, match.start() if match else len(self.line)
            work.read(self.found - pos + 1)
        return self.found


class _LinkEnd:
    """Where a link ends when its url (and any `>`) ends at a position: after `"title")` or `)`,
    None when neither follows. Remembered per position; the title's closing quote is searched
    forward from the last one found."""

    __slots__ = ("closed", "line", "quote")

    def __init__(self, line: str) -> None:
        self.line = line
        self.quote = _NextMatch(re.compile('"'), line)
        self.closed: dict[int, int | None] = {}  # the end of the link after a url ending here

    def after(self, pos: int) -> int | None:
        line = self.line
        if pos not in self.closed:
            spaces = _SPACES_RE.match(line, pos)
            assert spaces is not None  # \s* always matches
            work.read(spaces.end() - pos + 1)
            title = spaces.end()
            end: int | None = None
            if title > pos and line.startswith('"', title):
                title_end = self.quote.at(title + 1)
                if line.startswith(")", title_end + 1):
                    end = title_end + 2
            if end is None and line.startswith(")", pos):
                end = pos + 1
            self.closed[pos] = end
        return self.closed[pos]


def markdown_link_urls(line: str) -> Iterator[tuple[int, str]]:
    """(offset, url) of each Markdown link in one line (no newline in it), in order.

    Each `[` starts a link text that runs to the first `]` after it, so every `[` before that `]`
    leads to the same outcome: decided once per `]`. The url then runs to the first `)`, space or
    `>`; a `"title"` or `)` must follow (after one `>` when the url opened with `<`; without the
    `<`, it is the url's first character). Each search goes forward from the last, so the line is
    read a bounded number of times whatever it holds.
    """
    url_end = _NextMatch(_URL_END_RE, line)
    after_url = _LinkEnd(line).after
    length = len(line)
    pos = 0
    close = -1
    while (start := line.find("[", pos)) >= 0:
        if close <= start:
            close = line.find("]", start + 1)
            work.read((close if close >= 0 else length) - start)
            if close < 0:
                return
        pos = close + 1  # a link that fails from this `[` fails from every `[` before `close`
        if not line.startswith("(", close + 1):
            continue
        first = close + 2
        end = url_end.at(first)
        # After the url: one `>` if there is one (never nothing then: `>` is no space nor `)`).
        stop = after_url(end + 1) if line.startswith(">", end) else after_url(end)
        if stop is None or end == first:
            continue
        # `<` opens `<url>` when a url follows it; else it is the url's first character.
        url = first + 1 if line.startswith("<", first) and end > first + 1 else first
        pos = stop
        yield url, line[url:end]


def is_external_url(url: str) -> bool:
    """A url a Markdown link does not point into the folder with: a scheme, `#…` or `/…`."""
    return bool(_SCHEME_RE.match(url)) or url.startswith(("#", "/"))
