"""§6.8 `ragdown_remember`: write a new document with its front matter, never over an existing file."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from ragdown.documents.atomic import create_new
from ragdown.documents.errors import Refusal
from ragdown.documents.paths import is_inside
from ragdown.documents.paths import notes_dir as normalise_notes_dir
from ragdown.documents.writes import json_string

REMEMBER_TOOL = "ragdown_remember"
SLUG_CHARS = 60


@dataclass(frozen=True)
class RememberResult:
    """The written document and the documents it supersedes, scope-relative with `/`."""

    path: str
    supersedes: list[str] = field(default_factory=list)


def slug(title: str) -> str:
    """Lowercase, NFKD, each run of non-letters/non-digits (combining marks too) a `-`, cut to 60."""
    decomposed = unicodedata.normalize("NFKD", title.lower())
    mapped = "".join(c if unicodedata.category(c)[0] in "LN" else "-" for c in decomposed)
    collapsed = "-".join(part for part in mapped.split("-") if part)
    return collapsed[:SLUG_CHARS] or "note"


def _posix_relative(target: str, start: str) -> str:
    return os.path.relpath(target, start).replace(os.sep, "/")


def remember(
    root: Path,
    *,
    title: str,
    content: str,
    notes_dir: str,
    at_folder_root: bool,
    tags: Sequence[str] = (),
    name: str | None = None,
    supersedes: Sequence[str] = (),
    session_id: str | None = None,
    today: date | None = None,
) -> RememberResult:
    """Write `content` as a new document and return where it went.

    At a folder's own scope (`at_folder_root`) it goes under `notes_dir` (RAGDOWN_NOTES_DIR); at a
    subfolder scope, in the subfolder itself, already where that project's documents live. The file
    is `<name>.md`, else `<UTC date>-<slug(title)>.md`, then `-2`, `-3`… : each candidate is created
    exclusively, so an existing file is never overwritten.
    """
    scope = os.path.realpath(root)
    sub = normalise_notes_dir(notes_dir) if at_folder_root else ""
    directory = os.path.join(scope, sub) if sub else scope
    day = (today or datetime.now(UTC).date()).isoformat()
    # An empty name would make `.md`, a dot file the indexer never reads.
    base = name or f"{day}-{slug(title)}"

    # Checked before anything is written: a dangling `supersedes` would silently hide nothing, and
    # the agent that got the path wrong should hear about it rather than believe it replaced a
    # document.
    replaced: list[str] = []
    for entry in supersedes:
        target = os.path.normpath(os.path.join(scope, entry))
        if not is_inside(scope, target):
            raise Refusal(400, f"supersedes is outside the documents folder: {entry}")
        if not os.path.isfile(target):
            raise Refusal(404, f"supersedes names no document in this folder: {entry}")
        replaced.append(target)

    number = 1
    while True:
        full = os.path.normpath(os.path.join(directory, f"{base}{'' if number == 1 else f'-{number}'}.md"))
        if not is_inside(directory, full):
            raise Refusal(400, f"document name escapes the documents folder: {base}")
        parent = os.path.dirname(full)
        front = [
            "---",
            f"title: {json_string(title)}",
            f"date: {day}",
            *([f"tags: [{', '.join(json_string(t) for t in tags)}]"] if tags else []),
            # Relative to the new document's own folder, which is how the indexer reads them back.
            *(
                [f"supersedes: [{', '.join(json_string(_posix_relative(t, parent)) for t in replaced)}]"]
                if replaced
                else []
            ),
            # Provenance: whoever reads the document later can tell an agent wrote it, not the user.
            f"created_by: {REMEMBER_TOOL}",
            *([f"session: {json_string(session_id)}"] if session_id else []),
            "---",
            "",
        ]
        os.makedirs(parent, exist_ok=True)
        data = ("\n".join(front) + content.rstrip() + "\n").encode("utf-8", "surrogateescape")
        if create_new(Path(full), data):
            break
        number += 1
    return RememberResult(_posix_relative(full, scope), [_posix_relative(t, scope) for t in replaced])
