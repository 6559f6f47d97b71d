"""Who wrote a document, as the server records it (docs/documents.md#provenance).

An agent's write is stamped by the server, never by the text the agent sends: a new document gets
`created_by: <tool> (<caller>)`, where the caller is what the server knows of the request (the
agents' token, a folder token's name, the admin token); a changed document keeps the provenance
lines it had on disk, so a document a person wrote stays theirs and one an agent created keeps its
stamp. Any `created_by` or `session` line an agent puts in its text is replaced by what the server
decided (docs/security.md#tenants: agents cannot pass their writes off as a person's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragdown.documents.frontmatter import read_front_matter
from ragdown.documents.metadata import escaping_supersedes
from ragdown.documents.paths import shown
from ragdown.errors import BadRequestError

_LINE_BREAK_RE = re.compile(r"\r?\n")
# The keys whose lines are provenance; a line indented under one (a block scalar) belongs to it.
_PROVENANCE_RE = re.compile(r"^(created_by|session)\s*:")


@dataclass(frozen=True)
class Writer:
    """An agent's write as the server knows it: `caller` labels the credential ("" when the server
    knows no more than "an agent": stdio, a test), `boundary` is where the document's `supersedes`
    may point (documents/metadata.supersedes_boundary)."""

    caller: str = ""
    boundary: str = ""

    def created_by(self, tool: str) -> str:
        return f"{tool} ({self.caller})" if self.caller else tool


def provenance_lines(text: str) -> list[str]:
    """The provenance lines of `text`'s front matter (with their indented continuation lines)."""
    front = read_front_matter(_LINE_BREAK_RE.split(text)).front
    return [front[i] for i in _provenance_indexes(front)]


def _provenance_indexes(front: list[str]) -> list[int]:
    found: list[int] = []
    inside = False
    for i, line in enumerate(front):
        if _PROVENANCE_RE.match(line):
            inside = True
        elif not line[:1].isspace():
            inside = False
        if inside:
            found.append(i)
    return found


def with_provenance(text: str, stamp: list[str]) -> str:
    """`text` whose front matter holds exactly the provenance lines `stamp` (added before its
    closing marker; front matter is added when there is none and `stamp` is not empty). A text that
    already holds exactly them comes back unchanged, byte for byte."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = _LINE_BREAK_RE.split(text)
    front = read_front_matter(lines)
    if front.body_start == 0:
        return newline.join(["---", *stamp, "---", text]) if stamp else text
    indexes = _provenance_indexes(front.front)
    if [front.front[i] for i in indexes] == stamp:
        return text
    dropped = {i + 1 for i in indexes}  # front.front starts at line 1
    closing = front.body_start - 1
    kept = [line for i, line in enumerate(lines[:closing]) if i not in dropped]
    return newline.join([*kept, *stamp, *lines[closing:]])


def as_agent(text: str, before: str | None, writer: Writer, tool: str, stamp: list[str], path: str) -> str:
    """`text` as an agent's write leaves it: `stamp` for a new document (`before` None), else the
    provenance `before` had; refused when it adds a `supersedes` entry that leaves `writer.boundary`.
    `path` is the document's root-relative path, for resolving `supersedes`."""
    added = set(escaping_supersedes(text, path, writer.boundary)) - set(
        escaping_supersedes(before, path, writer.boundary) if before is not None else []
    )
    if added:
        entry = sorted(added)[0]
        raise BadRequestError(
            f"supersedes leaves this folder: {shown(entry)}; a document can only supersede documents "
            f"in its own folder ({tool})",
        )
    return with_provenance(text, stamp if before is None else provenance_lines(before))
