"""Markdown as plain text, for showing a passage where Markdown is not rendered (the web UI's search
snippets, docs/web.md#search): the words a reader sees, without the syntax around them.

Block markers go (heading `#`s and attribute blocks, quote `>`s, list bullets and task boxes, fence
lines, rules, table pipes and separator rows, link definitions); inline syntax keeps its text
(emphasis and strike markers and backticks go, `[text](url)` and `![alt](url)` keep the text,
`[[Target|label]]` keeps the label, `<https://…>` the address, `\\*` the character). Code keeps what
it holds as written. One pass over each line, each character read a bounded number of times
(docs/documents.md#bounded-parsing): no regex here searches forward from every position.
"""

from __future__ import annotations

import re

from ragdown.documents import work
from ragdown.documents.headings import split_attributes
from ragdown.documents.lines import FenceTracker, inline_code_spans, match_heading, split_lines

_QUOTE_RE = re.compile(r" {0,3}> ?")
_BULLET_RE = re.compile(r" {0,3}(?:[-*+]|\d{1,9}[.)])(?: +|$)")
_TASK_RE = re.compile(r"\[[ xX]\] ")
_RULE_CHARS = frozenset("-*_= \t")
_TABLE_RULE_CHARS = frozenset("|:- \t")
_LINK_DEFINITION_RE = re.compile(r" {0,3}\[[^\]\n]{1,999}\]: ")
_ESCAPABLE = frozenset("\\`*_{}[]<>()#+-.!|~")
_EMPHASIS = frozenset("*_~")


def plain_text(markdown: str) -> str:
    """`markdown` as the text a reader sees: one line per non-empty line, the syntax removed."""
    out: list[str] = []
    fence = FenceTracker()
    for line in split_lines(markdown):
        if fence.feed(line):
            continue
        if fence.open:
            out.append(line)
            continue
        text = _plain_line(line)
        if text:
            out.append(text)
    return "\n".join(out)


def _plain_line(line: str) -> str:
    work.read(len(line))
    if _is_rule(line) or _LINK_DEFINITION_RE.match(line):
        return ""
    heading = match_heading(line)
    if heading is not None:
        return _inline(split_attributes(heading.name)[0])
    pos = 0
    while quote := _QUOTE_RE.match(line, pos):  # each match moves on: linear
        pos = quote.end()
    if bullet := _BULLET_RE.match(line, pos):
        pos = bullet.end()
        if task := _TASK_RE.match(line, pos):
            pos = task.end()
    rest = line[pos:].strip()
    if rest.startswith("|") or rest.endswith("|"):
        if set(rest) <= _TABLE_RULE_CHARS:
            return ""
        return " · ".join(cell.strip() for cell in _inline(rest).strip("|").split("|") if cell.strip())
    return _inline(rest)


def _is_rule(line: str) -> bool:
    """A thematic break or a setext underline: three or more of one of `-*_=`, spaces between."""
    marks = line.replace(" ", "").replace("\t", "")
    return len(marks) >= 3 and set(line) <= _RULE_CHARS and len(set(marks)) == 1


def _inline(text: str) -> str:
    """One line's inline syntax removed; code spans kept as they are written inside."""
    out: list[str] = []
    kept = 0
    for start, end in inline_code_spans(text):
        out.append(_prose(text[kept:start]))
        span = text[start:end]
        out.append(span.strip("`").strip() if span.strip("`") else "")
        kept = end
    out.append(_prose(text[kept:]))
    return "".join(out).strip()


def _prose(text: str) -> str:
    """Text without code spans: links, wikilinks, escapes and emphasis markers resolved left to right.

    A link's `](url)` is found by the next `]` and the next `)` after it, looked up in tables built
    once per line (`_next_index`), so a line of `[`s or of `[a](` does the same work per character
    as any other line."""
    n = len(text)
    next_of = {char: _next_index(text, char) for char in "[]()<> "}
    out: list[str] = []
    skip_to: dict[int, int] = {}  # a link's `](url)`: from its `]` to past its `)`
    i = 0
    while i < n:
        if i in skip_to:
            i = skip_to.pop(i)
            continue
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in _ESCAPABLE:
            out.append(text[i + 1])
            i += 2
        elif text.startswith("[[", i) or text.startswith("![[", i):
            i = _wikilink(text, i, next_of, out)
        elif c == "[" or (c == "!" and i + 1 < n and text[i + 1] == "["):
            i = _link(text, i, next_of, skip_to, out)
        elif c == "<" and (end := _autolink_end(text, i, next_of)) > 0:
            out.append(text[i + 1 : end])  # an autolink: its address
            i = end + 1
        elif c in _EMPHASIS:
            i = _emphasis(text, i, out)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _next_index(text: str, char: str) -> list[int]:
    """For each position, where the next `char` at or after it is (len(text) when none)."""
    found = [len(text)] * (len(text) + 1)
    for i in range(len(text) - 1, -1, -1):
        found[i] = i if text[i] == char else found[i + 1]
    return found


Tables = dict[str, list[int]]


def _autolink_end(text: str, i: int, next_of: Tables) -> int:
    """Where `<https://…>` at `i` ends (its `>`), or 0. The `>` must come before any space or other
    `<`, so a failed look reads no character that another `<` would read again."""
    end = next_of[">"][i]
    if end >= len(text) or next_of[" "][i] < end or next_of["<"][i + 1] < end:
        return 0
    return end if "://" in text[i:end] else 0


def _wikilink(text: str, i: int, next_of: Tables, out: list[str]) -> int:
    """`[[Target|label]]` (or `![[…]]`) as its label, else its target; the position after it."""
    start = i + (3 if text[i] == "!" else 2)
    end = next_of["]"][start]
    if not text.startswith("]]", end) or next_of["["][start] < end:
        out.append(text[i:start])  # no wikilink: the brackets are text
        return start
    target = text[start:end]
    out.append(target.rsplit("|", 1)[-1] if "|" in target else target)  # as the page shows it
    return end + 2


def _link(text: str, i: int, next_of: Tables, skip_to: dict[int, int], out: list[str]) -> int:
    """At `[` (or `![`): when `](…)` or `][…]` closes it with no `[` between, the brackets and the
    address go and the text stays (read on by the caller); otherwise the character is text."""
    start = i + (2 if text[i] == "!" else 1)
    end = next_of["]"][start]
    if end < len(text) and next_of["["][start] >= end:
        after = end + 1
        if text.startswith("(", after):
            close = next_of[")"][after]
            if next_of["("][after + 1] < close < len(text):  # one pair inside: `(https://x/a_(b))`
                close = next_of[")"][close + 1]
            if close < len(text):
                skip_to[end] = close + 1
                return start
        if text.startswith("[", after) and next_of["]"][after] < len(text):
            skip_to[end] = next_of["]"][after] + 1
            return start
    out.append(text[i])
    return i + 1


def _emphasis(text: str, i: int, out: list[str]) -> int:
    """A run of `*`, `_` or `~` next to a word on one side only is a marker and goes; inside a word
    (`snake_case`, `2*3`) or alone between spaces it is text."""
    char = text[i]
    end = i
    while end < len(text) and text[end] == char:
        end += 1
    before = text[i - 1] if i else " "
    after = text[end] if end < len(text) else " "
    if (before.isalnum() and after.isalnum()) or (before.isspace() and after.isspace()):
        out.append(text[i:end])
    return end
