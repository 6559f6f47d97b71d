"""A person's verdict on a query's hits, kept in the folder's golden file
(docs/evaluation.md#marking-hits-in-the-web-ui).

Marking a hit right puts its target in the query's line (a draft's proposal is replaced, a confirmed
line gains it) and confirms the line; marking "none is right" makes it unanswerable. The line is found
by its query (case and spacing aside); every other line, comments and blank lines included, stays as
written. The file must parse before and after: a person fixes a broken one first.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ragdown.errors import ConflictError
from ragdown.evaluation.draft import line_id
from ragdown.evaluation.golden import GOLDEN_NAME, GoldenError, GoldenLine, Target, format_line, parse_golden
from ragdown.evaluation.targets import normalised

SOURCE = "web UI"


def _parsed(text: str, folder: str) -> list[GoldenLine]:
    try:
        return parse_golden(text)
    except GoldenError as error:
        raise ConflictError(
            f"{folder}/{GOLDEN_NAME} cannot be read, so nothing was marked: {error} (fix the file first)"
        ) from None


def marked_line(before: GoldenLine | None, query: str, target: Target | None, name: str) -> GoldenLine:
    """The line a mark leaves: `target` right, or (None) no hit right."""
    source = f"{SOURCE} {datetime.now(UTC).date().isoformat()}"
    if target is None:
        expected: tuple[Target, ...] = ()
    elif before is None or before.draft or before.unanswerable:
        expected = (target,)
    else:
        expected = before.expected + (() if target in before.expected else (target,))
    return GoldenLine(
        id=before.id if before else name,
        query=before.query if before else " ".join(query.split()),
        expected=expected,
        unanswerable=target is None,
        note=before.note if before and not before.draft else None,
        source=source,
        candidates=before.candidates if before else (),
        draft=False,
    )


def mark(text: str, folder: str, query: str, target: Target | None) -> tuple[str, GoldenLine]:
    """The golden file's new text and the line the mark changed or added."""
    lines = _parsed(text, folder)
    wanted = normalised(query)
    before = next((line for line in lines if normalised(line.query) == wanted), None)
    after = marked_line(before, query, target, line_id(query, {line.id for line in lines}))
    written = format_line(after)
    rows = text.removeprefix("\ufeff").splitlines()
    if before is not None:
        rows[before.line - 1] = written
    else:
        rows.append(written)
    new = "".join(row + "\n" for row in rows)
    _parsed(new, folder)  # what is written reads back
    return new, after
