"""docs/documents.md#remember `ragdown_remember`: write a new document with its front matter, never over an
existing file."""

from __future__ import annotations

import posixpath
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import DRIVE_RE, OUTSIDE, RELATIVE_ONLY, DocPath, check_path, shown
from ragdown.documents.paths import notes_dir as normalise_notes_dir
from ragdown.documents.provenance import Writer
from ragdown.documents.writes import encode_text, json_string, provenance_stamp
from ragdown.errors import BadRequestError, NotAFolderError, NotFoundError, Refusal

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
    return posixpath.relpath(f"/{target}", f"/{start}")


def _checked(relative: str, *, markdown_only: bool, escapes: str, otherwise: str) -> DocPath:
    """`relative` through the path rule; a path that leaves the folder is refused with `escapes`, any
    other refusal with its own reason after `otherwise`."""
    try:
        return check_path(relative, markdown_only=markdown_only)
    except Refusal as refusal:
        if refusal.message.startswith((OUTSIDE, RELATIVE_ONLY)):
            raise BadRequestError(escapes) from None
        raise BadRequestError(f"{otherwise}: {refusal.message}") from None


def _superseded(root: Root, entry: str) -> str:
    """The scope-relative document `entry` names; refused unless it is a document inside the scope."""
    escapes = f"supersedes is outside the documents folder: {shown(entry)}"
    path = _checked(entry, markdown_only=False, escapes=escapes, otherwise="supersedes")
    try:
        info = files.lstat(root, path.parts, display=entry)
    except NotAFolderError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        raise NotFoundError(f"supersedes names no document in this folder: {shown(entry)}")
    return path.relative


def _candidate(sub: str, base: str, number: int) -> DocPath:
    """`<notes dir>/<base>[-n].md` through the path rule, and inside the notes dir."""
    escapes = f"document name escapes the documents folder: {shown(base)}"
    if base.replace("\\", "/").startswith("/") or DRIVE_RE.match(base):
        raise BadRequestError(escapes)
    relative = "/".join(p for p in (sub, f"{base}{'' if number == 1 else f'-{number}'}.md") if p)
    path = _checked(relative, markdown_only=True, escapes=escapes, otherwise="name is not usable")
    inside = tuple(sub.split("/")) if sub else ()
    if path.parts[: len(inside)] != inside or len(path.parts) == len(inside):
        raise BadRequestError(escapes)
    return path


def remember(
    root: Root | Path,
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
    writer: Writer | None = None,
) -> RememberResult:
    """Write `content` as a new document and return where it went.

    At a folder's own scope (`at_folder_root`) it goes under `notes_dir` (RAGDOWN_NOTES_DIR); at a
    subfolder scope, in the subfolder itself, already where that project's documents live. The file
    is `<name>.md`, else `<UTC date>-<slug(title)>.md`, then `-2`, `-3`… : each candidate is created
    exclusively, so an existing file is never overwritten. The name passes the path rule like any
    path an agent sends.
    """
    at = Root.at(root)
    sub = normalise_notes_dir(notes_dir) if at_folder_root else ""
    day = (today or datetime.now(UTC).date()).isoformat()
    # An empty name would make `.md`, a dot file the indexer never reads.
    base = name or f"{day}-{slug(title)}"

    # Checked before anything is written: a dangling `supersedes` would silently hide nothing, and
    # the agent that got the path wrong should hear about it rather than believe it replaced a
    # document.
    replaced = [_superseded(at, entry) for entry in supersedes]

    number = 1
    while True:
        path = _candidate(sub, base, number)
        parent = posixpath.dirname(path.relative)
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
            *provenance_stamp((writer or Writer()).created_by(REMEMBER_TOOL), session_id),
            "---",
            "",
        ]
        data = encode_text("\n".join(front) + content.rstrip() + "\n")
        if files.create_file(at, path.parts, data, display=path.relative):
            break
        number += 1
    return RememberResult(path.relative, replaced)
