"""What a document's front matter and inline tags say about it, beside its text."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from ragdown.documents.chunks import Chunk, chunk_lines
from ragdown.documents.frontmatter import read_front_matter, read_list, read_scalar
from ragdown.documents.lines import split_lines
from ragdown.documents.paths import check_path
from ragdown.documents.tags import FRONT_MATTER_SPLIT, collect_tags
from ragdown.errors import Refusal

_COMMA = re.compile(r",")


@dataclass(frozen=True)
class DocumentMeta:
    """Tags (sorted), aliases (first-seen order), and the provenance the write tools record.

    `created_by` and `session` say who a document claims wrote it, not proof of it; "" when absent.
    """

    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)
    description: str = ""
    created_by: str = ""
    session: str = ""


@dataclass(frozen=True)
class ParsedDocument:
    """A document read once: its chunks and its metadata."""

    path: str
    chunks: list[Chunk]
    meta: DocumentMeta

    @property
    def title(self) -> str:
        return self.chunks[0].title


def supersedes_boundary(path: str, folders_mode: bool) -> str:
    """The directory a document's `supersedes` must stay inside (docs/security.md#tenants): its folder
    (the first name of its root-relative path) when the docs dir holds folders, else the whole docs dir
    (""). One folder's document can never hide another folder's."""
    return path.split("/", 1)[0] if folders_mode and "/" in path else ""


def within(boundary: str, target: str) -> bool:
    return not boundary or target.startswith(boundary + "/")


def resolve_supersedes(entries: list[str], path: str, boundary: str = "") -> list[str]:
    """Front matter `supersedes` entries as root-relative paths. Entries that are absolute, climb out
    of `boundary` (see supersedes_boundary), or that the path rule refuses are dropped."""
    directory = posixpath.dirname(path.replace("\\", "/"))
    out: list[str] = []
    for entry in entries:
        relative = entry.replace("\\", "/")
        if relative.startswith("/"):
            continue  # checked before the join, which would turn /etc/passwd into notes/etc/passwd
        resolved = posixpath.normpath(posixpath.join(directory, relative))
        if resolved == ".." or resolved.startswith("../") or not within(boundary, resolved):
            continue
        try:
            out.append(check_path(resolved, markdown_only=False).relative)
        except Refusal:
            continue
    return out


def escaping_supersedes(text: str, path: str, boundary: str) -> list[str]:
    """The `supersedes` entries of `text`'s front matter that `resolve_supersedes` would drop, as
    written: what an agent's write is refused for (documents/writes.py)."""
    front = read_front_matter(split_lines(text)).front
    return [e for e in read_list(front, "supersedes", _COMMA) if not resolve_supersedes([e], path, boundary)]


def meta_from_lines(lines: list[str], path: str, boundary: str = "") -> DocumentMeta:
    front = read_front_matter(lines)
    aliases = list(dict.fromkeys(a for a in read_list(front.front, "aliases") if a))
    return DocumentMeta(
        tags=collect_tags(read_list(front.front, "tags", FRONT_MATTER_SPLIT), lines, front.body_start),
        aliases=aliases,
        supersedes=resolve_supersedes(read_list(front.front, "supersedes", _COMMA), path, boundary),
        description=read_scalar(front.front, "description"),
        created_by=read_scalar(front.front, "created_by"),
        session=read_scalar(front.front, "session"),
    )


def read_document_meta(source: str, path: str = "") -> DocumentMeta:
    return meta_from_lines(split_lines(source), path)


def parse_document(source: str, path: str, max_chars: int, boundary: str = "") -> ParsedDocument:
    """`boundary`: where the document's `supersedes` may point (supersedes_boundary)."""
    lines = split_lines(source)
    return ParsedDocument(path, chunk_lines(lines, path, max_chars), meta_from_lines(lines, path, boundary))
