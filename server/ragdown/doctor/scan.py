"""One walk of the folders, each Markdown file read and parsed once, as the sync parses it: what the
content checks look at (docs/doctor.md). Linear in the files; nothing is embedded or written."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ragdown.documents import files
from ragdown.documents.files import MAX_WALK_DEPTH, Root
from ragdown.documents.link_finder import find_links
from ragdown.documents.metadata import parse_document, supersedes_boundary
from ragdown.documents.paths import is_markdown, is_skipped_entry, is_utf8
from ragdown.errors import NotAFolderError, Refusal
from ragdown.indexing.sync import content_hash

# The chunk size when no index says which the embedder uses (the default embedder's).
DEFAULT_MAX_CHARS = 500


@dataclass(frozen=True)
class Doc:
    """One Markdown file as the index would hold it: `path` is root-relative (`folder/…` when the
    root holds folders), `folder` the first name of it there ("" for a single folder)."""

    path: str
    folder: str
    sections: int
    mtime_ns: int
    size: int
    # What the sync compares with the index's (indexing/sync.py content_hash).
    hash: str = ""
    supersedes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    wikilinks: tuple[str, ...] = ()


@dataclass
class Scan:
    docs: dict[str, Doc] = field(default_factory=dict)
    symlinks: list[str] = field(default_factory=list)
    not_utf8: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    too_deep: list[str] = field(default_factory=list)
    # Other files, which a wikilink may name (`![[diagram.png]]`).
    attachments: list[str] = field(default_factory=list)


def scan_folders(root: Path, *, folders_mode: bool, max_chars: int = DEFAULT_MAX_CHARS) -> Scan:
    """Every file the sync would index below `root`, parsed; and what it passes over, with why.
    `folders_mode`: `root` holds folders, and Markdown at its top belongs to none (not read here)."""
    found = Scan()
    base = Root.at(root)
    stack: list[tuple[str, ...]] = [()]
    while stack:
        prefix = stack.pop()
        try:
            entries = files.scan(base, prefix)
        except (FileNotFoundError, NotADirectoryError, NotAFolderError, PermissionError) as error:
            found.unreadable.append(("/".join(prefix), type(error).__name__))
            continue
        for entry in reversed(entries):
            if not is_skipped_entry(entry.name):
                _entry(found, base, prefix, entry, stack, folders_mode, max_chars)
    found.symlinks.sort()
    return found


def _entry(
    found: Scan,
    base: Root,
    prefix: tuple[str, ...],
    entry: files.Entry,
    stack: list[tuple[str, ...]],
    folders_mode: bool,
    max_chars: int,
) -> None:
    """One directory entry: a symlink noted, a folder queued, a Markdown file read, another file kept
    as an attachment a wikilink may name."""
    parts = (*prefix, entry.name)
    path = "/".join(parts)
    if entry.stat is not None and stat.S_ISLNK(entry.stat.st_mode):
        found.symlinks.append(path)
    elif entry.is_dir:
        if len(parts) < MAX_WALK_DEPTH:
            stack.append(parts)
        else:
            found.too_deep.append(path)
    elif not entry.is_file or (folders_mode and not prefix):
        return
    elif is_markdown(entry.name):
        _read(found, base, parts, entry.stat, folders_mode, max_chars)
    elif is_utf8(path):
        found.attachments.append(path)


def _read(
    found: Scan,
    base: Root,
    parts: tuple[str, ...],
    info: os.stat_result | None,
    folders_mode: bool,
    max_chars: int,
) -> None:
    path = "/".join(parts)
    if not is_utf8(path):
        found.not_utf8.append(path)
        return
    try:
        data = files.read_file(base, parts)
    except (OSError, Refusal) as error:
        found.unreadable.append((path, str(error)))
        return
    if data is None or info is None:  # gone meanwhile
        return
    text = data.decode("utf-8", errors="replace")
    parsed = parse_document(text, path, max_chars, supersedes_boundary(path, folders_mode))
    links: tuple[str, ...] = ()
    with contextlib.suppress(ValueError):
        links = tuple(link.raw for link in find_links(text, wiki_only=True))
    found.docs[path] = Doc(
        path=path,
        folder=parts[0] if folders_mode else "",
        sections=len(parsed.chunks),
        mtime_ns=info.st_mtime_ns,
        size=info.st_size,
        hash=content_hash(text),
        supersedes=tuple(parsed.meta.supersedes),
        aliases=tuple(parsed.meta.aliases),
        wikilinks=links,
    )
