"""What a document's front matter and inline tags say about it, beside its text."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from ragdown.documents.chunks import Chunk, chunk_lines
from ragdown.documents.frontmatter import read_front_matter, read_list, read_scalar
from ragdown.documents.lines import split_lines
from ragdown.documents.tags import FRONT_MATTER_SPLIT, collect_tags

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


def resolve_supersedes(entries: list[str], path: str) -> list[str]:
    """Front matter `supersedes` entries as root-relative paths; absolute or escaping ones dropped."""
    directory = posixpath.dirname(path.replace("\\", "/"))
    out: list[str] = []
    for entry in entries:
        relative = entry.replace("\\", "/")
        if relative.startswith("/"):
            continue  # checked before the join, which would turn /etc/passwd into notes/etc/passwd
        resolved = posixpath.normpath(posixpath.join(directory, relative))
        if resolved == ".." or resolved.startswith("../"):
            continue
        out.append(resolved)
    return out


def read_meta(lines: list[str], path: str) -> DocumentMeta:
    front = read_front_matter(lines)
    aliases = list(dict.fromkeys(a for a in read_list(front.front, "aliases") if a))
    return DocumentMeta(
        tags=collect_tags(read_list(front.front, "tags", FRONT_MATTER_SPLIT), lines, front.body_start),
        aliases=aliases,
        supersedes=resolve_supersedes(read_list(front.front, "supersedes", _COMMA), path),
        description=read_scalar(front.front, "description"),
        created_by=read_scalar(front.front, "created_by"),
        session=read_scalar(front.front, "session"),
    )


def read_document_meta(source: str, path: str = "") -> DocumentMeta:
    return read_meta(split_lines(source), path)


def parse_document(source: str, path: str, max_chars: int) -> ParsedDocument:
    lines = split_lines(source)
    return ParsedDocument(path, chunk_lines(lines, path, max_chars), read_meta(lines, path))
