"""Line splitting, and the fence and heading rules shared by the chunker, the tag scanner, link
finding and heading ranges."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ragdown.documents import work

FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
# The opening of a heading: up to 3 spaces, 1 to 6 `#`s, then whitespace (see `match_heading`).
_HEADING_START_RE = re.compile(r"\s{0,3}(#{1,6})(?=\s)")
# A run of N backticks, the shortest text without a backtick, then the same N backticks: the rule
# `inline_code_spans` follows. As a regex, (`+)[^`]*?\1, it backtracks through every shorter
# opening run and takes time quadratic in a run of backticks; the scan reads each character a
# bounded number of times.
_BACKTICKS_RE = re.compile(r"`+")
_NEWLINES_RE = re.compile(r"\r\n?")
# U+FEFF, the byte-order mark some editors put first in a UTF-8 file, is no part of line 1: the
# reference (JavaScript, whose trim and \s include it) sees front matter, a heading or a fence behind
# it, and Python's strip and \s would not.
BOM = "\ufeff"


def inline_code_spans(line: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each inline code span, left to right, not overlapping.

    At a backtick starting a run of N (counted from there, mid-run too), the span closes at the
    next backtick if N backticks start there; failing that, the shortest opening that closes at
    once is N // 2 (its closer the next N // 2 backticks), so N >= 2 makes an empty span; a lone
    backtick with no other after it is text. Exactly what the regex above matches.
    """
    pos = 0
    while (start := line.find("`", pos)) >= 0:
        backticks = _BACKTICKS_RE.match(line, start)
        assert backticks is not None  # `start` is a backtick
        run_end = backticks.end()
        run = run_end - start
        close = line.find("`", run_end)
        work.read(run + (close if close >= 0 else len(line)) - run_end + run)
        if close >= 0 and line.startswith("`" * run, close):
            pos = close + run
        elif run >= 2:
            pos = start + run // 2 * 2
        else:
            pos = start + 1
            continue
        yield start, pos


def blank_inline_code(line: str) -> str:
    """Inline code spans replaced by as many spaces, so offsets in the line stay valid."""
    return replace_inline_code(line, lambda span: " " * len(span))


def replace_inline_code(line: str, replace: Callable[[str], str]) -> str:
    """`line` with each inline code span replaced by `replace(span)`."""
    out: list[str] = []
    kept = 0
    for start, end in inline_code_spans(line):
        out += (line[kept:start], replace(line[start:end]))
        kept = end
    if not out:
        return line
    out.append(line[kept:])
    return "".join(out)


class HeadingLine(NamedTuple):
    """A heading line's level (its number of `#`s) and name."""

    level: int
    name: str


def match_heading(line: str) -> HeadingLine | None:
    """The heading a line is, by docs/documents.md#sections-and-breadcrumbs's rule
    `^\\s{0,3}(#{1,6})\\s+(.+?)\\s*#*\\s*$`, or None.

    Worked out step by step rather than by that regex: its backtracking takes time cubic in a run
    of whitespace inside the line (`# a`, 4,000 spaces, `b` took 85 s of CPU), so one such line
    in one file would stall a whole sync. The results are the regex's, to the character.
    """
    work.read(len(line))
    start = _HEADING_START_RE.match(line)
    if start is None:
        return None
    level = len(start.group(1))
    rest = line[start.end() :]
    text = rest.lstrip()  # `\s+` takes all the whitespace it can...
    if not text:
        # ...but gives the last one back when nothing else is left for `(.+?)`, which needs one.
        return HeadingLine(level, rest[-1]) if len(rest) > 1 else None
    # `(.+?)` is as short as it can be while whitespace, `#`s and whitespace are all that follow it.
    return HeadingLine(level, text.rstrip().rstrip("#").rstrip() or text[0])


def split_lines(text: str) -> list[str]:
    """Normalise CRLF and lone CR to LF, then split. A trailing newline makes an empty last line.

    A leading byte-order mark is dropped; line numbers are unchanged.
    """
    work.read(len(text))
    return _NEWLINES_RE.sub("\n", text.removeprefix(BOM)).split("\n")


class FenceTracker:
    """Follows fenced code blocks line by line (``` or ~~~, closed by the same character, as long)."""

    __slots__ = ("marker",)

    def __init__(self) -> None:
        self.marker: str | None = None

    @property
    def open(self) -> bool:
        return self.marker is not None

    def feed(self, line: str) -> bool:
        """Update the state with one line; True when the line is itself a fence line."""
        match = FENCE_RE.match(line)
        if not match:
            return False
        marker = match.group(1)
        if self.marker is None:
            self.marker = marker
        elif marker[0] == self.marker[0] and len(marker) >= len(self.marker):
            self.marker = None
        return True
