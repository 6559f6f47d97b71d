"""The golden file: a folder's own questions and where their answers are (docs/evaluation.md#the-golden-file).

JSON lines, one question per line; blank lines and `//` lines are skipped. Every problem is refused
as one line, `GOLDEN line N: <what is wrong>; <what to do>`, so a person fixes the file in one go
through the editor's line number. `format_golden` writes lines back in the same form, so a file that
`ragdown eval --draft-from-log` or the web UI grows reads the same as one written by hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, ValidationError

from ragdown.atomic import write_atomic
from ragdown.documents.chunks import BREADCRUMB_SEPARATOR
from ragdown.documents.paths import check_path
from ragdown.errors import BadRequestError, CliError
from ragdown.evaluation.options import GOLDEN_NAME as GOLDEN_NAME
from ragdown.search.policy import MAX_QUERY_CHARS

REQUIRED_KEYS = ("id", "query")
SCORED_KEYS = ("id", "query", "expected", "unanswerable")
# Accepted and carried along, never scored: who wrote the line and what a draft proposes.
IGNORED_KEYS = ("note", "source", "candidates", "draft")
KEYS = SCORED_KEYS + IGNORED_KEYS

# `path#Heading`: the path ends at the first Markdown extension followed by `#` or the end, so a
# `#` inside a file name (`C# notes.md`) stays part of the path.
_TARGET_RE = re.compile(r"(?P<path>.*?\.(?:md|markdown|mdx))(?:#(?P<heading>.*))?", re.IGNORECASE | re.DOTALL)


# A golden file that cannot be scored: the message is the one line to print (exit 2, a 400 over HTTP).
# The one error tree lives in errors.py (docs/design.md#errors); this name says where a refusal came from.
GoldenError = CliError


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def own_heading(heading: str) -> str:
    """The last element of a hit's heading path (`Ops › Restore` → `Restore`); "" above any heading."""
    return heading.rsplit(BREADCRUMB_SEPARATOR, 1)[-1].strip()


@dataclass(frozen=True)
class Target:
    """Where an answer is: a whole Markdown file, or one section of it named by its own heading."""

    path: str
    heading: str | None = None

    @classmethod
    def parse(cls, text: str) -> Target:
        """`path` or `path#Heading`; a ValueError says what is wrong in words for a refusal."""
        found = _TARGET_RE.fullmatch(text.strip())
        if found is None:
            raise ValueError("is not a Markdown file (.md, .markdown, .mdx)")
        try:
            path = check_path(found["path"], markdown_only=True).relative
        except BadRequestError as e:
            raise ValueError(f"is not a path inside the folder ({e})") from e
        heading = found["heading"]
        if heading is not None and not heading.strip():
            raise ValueError("has an empty heading after #")
        return cls(path, heading.strip() if heading is not None else None)

    def matches(self, path: str, heading: str) -> bool:
        """Whether a hit at `path` under the heading path `heading` is (in) this target."""
        if path != self.path:
            return False
        return self.heading is None or _fold(own_heading(heading)) == _fold(self.heading)

    def __str__(self) -> str:
        return self.path if self.heading is None else f"{self.path}#{self.heading}"


def matching_target(targets: Sequence[Target], path: str, heading: str) -> int | None:
    """The index of the first target a hit matches, or None: scoring counts each target once."""
    return next((i for i, t in enumerate(targets) if t.matches(path, heading)), None)


class _Fields(BaseModel):
    """The JSON types of a line, strictly: `"true"` is not a bool, `5` is not a string."""

    model_config = ConfigDict(extra="forbid")

    id: StrictStr
    query: StrictStr
    expected: list[StrictStr] = []
    unanswerable: StrictBool = False
    note: StrictStr | None = None
    source: StrictStr | None = None
    candidates: list[StrictStr] = []
    draft: StrictBool = False


@dataclass(frozen=True)
class GoldenLine:
    """One question of a golden set. `line` is its 1-based line in the file (0 when built in code)."""

    id: str
    query: str
    expected: tuple[Target, ...] = ()
    unanswerable: bool = False
    note: str | None = None
    source: str | None = None
    candidates: tuple[Target, ...] = ()
    draft: bool = False
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        """The line as the file holds it: the scored keys always, the optional ones when set."""
        data: dict[str, Any] = {
            "id": self.id,
            "query": self.query,
            "expected": [str(t) for t in self.expected],
            "unanswerable": self.unanswerable,
        }
        if self.note is not None:
            data["note"] = self.note
        if self.source is not None:
            data["source"] = self.source
        if self.candidates:
            data["candidates"] = [str(t) for t in self.candidates]
        if self.draft:
            data["draft"] = True
        return data


def _refuse(number: int, what: str, todo: str) -> GoldenError:
    return GoldenError(f"GOLDEN line {number}: {what}; {todo}")


def _object(text: str, number: int) -> dict[str, Any]:
    def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise _refuse(number, f'key "{key}" appears twice', "keep one")
            seen[key] = value
        return seen

    try:
        value = json.loads(text, object_pairs_hook=no_repeats)
    except json.JSONDecodeError as e:
        raise _refuse(
            number, f"not valid JSON ({e.msg} at column {e.colno})", "write one object per line"
        ) from e
    if not isinstance(value, dict):
        raise _refuse(number, f"a JSON {type(value).__name__}, not an object", "write one object per line")
    return value


def _fields(value: dict[str, Any], number: int) -> _Fields:
    unknown = [k for k in value if k not in KEYS]
    if unknown:
        raise _refuse(number, f'unknown key "{unknown[0]}"', f"the keys are {', '.join(KEYS)}")
    missing = [k for k in REQUIRED_KEYS if k not in value]
    if missing:
        raise _refuse(number, f'"{missing[0]}" is missing', 'every line needs "id" and "query"')
    try:
        return _Fields.model_validate(value)
    except ValidationError as e:
        key = str(e.errors()[0]["loc"][0])
        raise _refuse(number, f'"{key}" must be {_KINDS[key]}', f"got {json.dumps(value[key])[:80]}") from e


_KINDS = {
    "id": "a string",
    "query": "a string",
    "expected": "a list of strings (path or path#Heading)",
    "candidates": "a list of strings (path or path#Heading)",
    "unanswerable": "true or false",
    "draft": "true or false",
    "note": "a string",
    "source": "a string",
}


def _targets(values: list[str], key: str, number: int) -> tuple[Target, ...]:
    targets: list[Target] = []
    for text in values:
        try:
            target = Target.parse(text)
        except ValueError as e:
            raise _refuse(
                number,
                f'"{key}" target "{text[:80]}" {e}',
                "give a path relative to the folder, or path#Heading",
            ) from e
        if target not in targets:
            targets.append(target)
    return tuple(targets)


def parse_line(text: str, number: int) -> GoldenLine:
    """One line of the file (not blank, not a comment) as a GoldenLine, or a GoldenError."""
    fields = _fields(_object(text, number), number)
    if not fields.id.strip():
        raise _refuse(number, '"id" is empty', "give each question a short name")
    if not fields.query.strip():
        raise _refuse(number, '"query" is empty', "write the question as a person would ask it")
    if len(fields.query) > MAX_QUERY_CHARS:
        raise _refuse(
            number,
            f'"query" has {len(fields.query):,} characters (at most {MAX_QUERY_CHARS:,})',
            "ask a question, not a document",
        )
    expected = _targets(fields.expected, "expected", number)
    if fields.unanswerable and expected:
        raise _refuse(number, '"expected" lists targets but "unanswerable" is true', "remove one of them")
    if not fields.unanswerable and not expected:
        raise _refuse(
            number,
            '"expected" is empty',
            'list the path or path#Heading that answers it, or set "unanswerable": true',
        )
    return GoldenLine(
        id=fields.id,
        query=fields.query,
        expected=expected,
        unanswerable=fields.unanswerable,
        note=fields.note,
        source=fields.source,
        candidates=_targets(fields.candidates, "candidates", number),
        draft=fields.draft,
        line=number,
    )


def parse_golden(text: str) -> list[GoldenLine]:
    """Every question of a golden file's text, in file order; the first problem is a GoldenError."""
    lines: list[GoldenLine] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("//"):
            continue
        line = parse_line(stripped, number)
        if line.id in first_line:
            raise _refuse(
                number,
                f'id "{line.id}" is already used on line {first_line[line.id]}',
                "give each question its own id",
            )
        first_line[line.id] = number
        lines.append(line)
    return lines


def read_golden(path: Path) -> list[GoldenLine]:
    """A golden file from disk; a missing or unreadable file is a one-line GoldenError too."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise GoldenError(
            f"GOLDEN: no file at {path}; write one question per line (docs/evaluation.md)"
        ) from e
    except OSError as e:
        raise GoldenError(
            f"GOLDEN: cannot read {path} ({e.strerror}); check the path and its permissions"
        ) from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        number = data[: e.start].count(b"\n") + 1
        raise _refuse(number, "not UTF-8", "save the file as UTF-8") from e
    return parse_golden(text)


def format_line(line: GoldenLine) -> str:
    """One line as the file holds it: compact JSON, non-ASCII kept, no newline."""
    return json.dumps(line.to_json(), ensure_ascii=False, separators=(", ", ": "))


def format_golden(lines: Iterable[GoldenLine]) -> str:
    return "".join(format_line(line) + "\n" for line in lines)


def write_golden(path: Path, lines: Iterable[GoldenLine]) -> None:
    """Replace the file whole (never half-written), in the form `parse_golden` reads. Comment lines
    of the old file are not kept: `append_golden` adds to a file a person also edits."""
    write_atomic(path, format_golden(lines).encode("utf-8"))


def append_golden(path: Path, lines: Iterable[GoldenLine]) -> None:
    """Add lines at the end, starting a new line if the file does not end with one."""
    text = format_golden(lines)
    with path.open("a+b") as f:
        if f.tell() > 0:
            f.seek(-1, 2)
            if f.read(1) != b"\n":
                text = "\n" + text
        f.write(text.encode("utf-8"))
