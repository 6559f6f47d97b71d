"""docs/documents.md#edit exact-passage edits: a pure function from a text and its edits to the new text.

Nothing here reads or writes files; the caller checks the base hash, and writes the result back
(through docs/documents.md#how-a-change-is-written, after `with_line_endings_of` has restored a CRLF file's
line endings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragdown.errors import Refusal

_NOT_FOUND_FALLBACK = (
    "It must match character for character, whitespace included: "
    "read the document again and copy the passage from it"
)


@dataclass(frozen=True)
class Edit:
    """Replace the exact passage `old_text` (once, unless `replace_all`) with `new_text`."""

    old_text: str
    new_text: str
    replace_all: bool = False


@dataclass(frozen=True)
class EditOutcome:
    """The edited text, with LF line endings, and how many passages were replaced in all."""

    text: str
    replaced: int


@dataclass(frozen=True)
class Passage:
    """Part of a text and the 1-based, inclusive lines it is on."""

    start: int
    end: int
    text: str


def apply_edits(text: str, edits: Sequence[Edit]) -> EditOutcome:
    """`text` with each edit applied in order, each to the result of the one before.

    CRLF is compared as LF in the text and in every edit, and the result has LF.
    Raises `Refusal` (400 same text, 404 not found, 409 ambiguous) at the first edit that fails.
    """
    current = to_lf(text)
    replaced = 0
    count = len(edits)
    for number, edit in enumerate(edits, start=1):
        which = f"edit {number} of {count}"
        old_text = to_lf(edit.old_text)
        new_text = to_lf(edit.new_text)
        if old_text == new_text:
            raise Refusal(400, f"{which}: old_text and new_text are the same, so nothing was written")
        # An empty old_text is found nowhere (str.count("") would count every gap between characters).
        occurrences = current.count(old_text) if old_text else 0
        if occurrences == 0:
            raise Refusal(
                404,
                f"{which}: old_text is not in the document, so nothing was written. "
                + _fix(current, old_text, first=number == 1),
            )
        if occurrences > 1 and not edit.replace_all:
            raise Refusal(
                409,
                f"{which}: old_text is in the document {occurrences} times, so nothing was written. "
                "Add the text around the one you mean until it matches once, or pass replace_all: true",
            )
        # str.replace is literal: `$&`, `$1` and backslashes in new_text stay as they are.
        current = current.replace(old_text, new_text)
        replaced += occurrences
    return EditOutcome(current, replaced)


def _fix(text: str, old_text: str, *, first: bool) -> str:
    nearest = nearest_passage(text, old_text)
    if nearest is None:
        return _NOT_FOUND_FALLBACK
    # Line numbers are the file's only until an earlier edit has shifted them.
    lines = f" (lines {nearest.start}-{nearest.end})" if first else ""
    return f"The nearest passage{lines} follows; copy old_text from it exactly:\n{nearest.text}"


def nearest_passage(text: str, old_text: str) -> Passage | None:
    """The passage an `old_text` that matched nothing most likely meant.

    First the passage with the same words spaced differently; else as many lines as `old_text` has,
    from the first line equal (trimmed) to its trimmed first line; else None.
    """
    words = old_text.split()
    if not words:
        return None
    spaced = re.search(r"\s+".join(map(re.escape, words)), text)
    if spaced:
        start = text.count("\n", 0, spaced.start()) + 1
        return Passage(start, start + spaced.group(0).count("\n"), spaced.group(0))

    old_lines = old_text.strip().split("\n")
    first_line = old_lines[0].strip()
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.strip() == first_line:
            passage = lines[index : index + len(old_lines)]
            return Passage(index + 1, index + len(passage), "\n".join(passage))
    return None


def to_lf(text: str) -> str:
    """CRLF line endings as LF; a lone CR is left alone, as the reference leaves it."""
    return text.replace("\r\n", "\n")


def with_line_endings_of(original: str, text: str) -> str:
    """`text` (LF) with CRLF line endings when `original`, the file as read, had any CRLF."""
    if "\r\n" not in original:
        return text
    return to_lf(text).replace("\n", "\r\n")
