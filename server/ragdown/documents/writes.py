"""Writing and deleting documents: the web-style save and delete (§6.10) and `ragdown_write` (§6.6).

Paths going in are scope-relative; paths coming out are normalised and scope-relative with `/`.
Nothing here indexes: the caller syncs afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ragdown.documents.atomic import create_exclusive, file_hash, hash_matches, write_atomic
from ragdown.documents.errors import Refusal
from ragdown.documents.frontmatter import read_front_matter, read_scalar
from ragdown.documents.headings import heading_range_in_lines
from ragdown.documents.paths import resolve_path

# Undecodable bytes survive a read-modify-write (an append) unchanged instead of becoming U+FFFD.
_ENCODING_ERRORS = "surrogateescape"
# As a read shows a document (§5.3): CRLF or LF; a lone CR stays inside its line.
_LINE_BREAK_RE = re.compile(r"\r?\n")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_CREATED_BY_RE = re.compile(r"^created_by:")

WRITE_TOOL = "ragdown_write"


@dataclass(frozen=True)
class WriteResult:
    """The normalised scope-relative path, whether the file is new, and the SHA-256 of what was written."""

    path: str
    created: bool
    hash: str


def json_string(value: str) -> str:
    """`value` as a JSON string the way JavaScript writes one: non-ASCII kept, lone surrogates escaped."""
    return _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def stamp_provenance(text: str, created_by: str, session: str | None = None) -> str:
    """`text` with `created_by` (and `session`) in its front matter, which is added when it has none.

    A text that already says who created it is returned as it is: the claim it carries is the
    writer's own, and a second one would only contradict it.
    """
    stamp = [f"created_by: {created_by}", *([f"session: {json_string(session)}"] if session else [])]
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = _LINE_BREAK_RE.split(text)
    front = read_front_matter(lines)
    if front.body_start == 0:  # no front matter
        return newline.join(["---", *stamp, "---", text])
    if any(_CREATED_BY_RE.match(line) for line in front.front):
        return text
    closing = front.body_start - 1
    return newline.join([*lines[:closing], *stamp, *lines[closing:]])


def _read_file(full: Path) -> bytes | None:
    """The bytes of a regular file (not through a symlink); None for anything else or nothing."""
    try:
        if not stat.S_ISREG(os.lstat(full).st_mode):
            return None
        return full.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _is_kind(full: Path, kind: int) -> bool:
    try:
        return stat.S_IFMT(os.lstat(full).st_mode) == kind
    except (FileNotFoundError, NotADirectoryError):
        return False


def _encode(text: str) -> bytes:
    return text.encode("utf-8", _ENCODING_ERRORS)


def save(
    root: Path,
    relative: str,
    text: str,
    *,
    overwrite: bool = False,
    base_hash: str | None = None,
    display_path: str | None = None,
) -> WriteResult:
    """Write a Markdown file (§6.10): a new one exclusively, an existing one atomically.

    `base_hash` is the hash of the version the text was made from: the file must still be that
    version (else 409 with code `changed`), and its CRLF line endings, if it has them, are kept.
    `display_path` is how refusals name the file; the path as given by default.
    """
    resolved = resolve_path(root, relative, markdown_only=True)
    shown = display_path or relative
    try:
        mode: int | None = os.lstat(resolved.full).st_mode
    except FileNotFoundError:
        mode = None
    exists = mode is not None
    if mode is not None and not stat.S_ISREG(mode):
        raise Refusal(409, f"not a file: {shown}")
    if exists and not overwrite and base_hash is None:
        raise Refusal(409, f"already exists: {shown}")
    if base_hash is not None:
        current = _read_file(resolved.full) if exists else None
        if current is None or not hash_matches(base_hash, file_hash(current)):
            what = "deleted" if current is None else "changed on disk"
            raise Refusal(409, f"{shown} was {what} since it was opened", "changed")
        if b"\r\n" in current:
            text = _LINE_BREAK_RE.sub("\r\n", text)
    data = _encode(text)
    if exists:
        write_atomic(resolved.full, data)  # renamed over it, so a sync never reads half a file
    else:
        resolve_path(root, relative, markdown_only=True, create=True)
        create_exclusive(resolved.full, data, shown)
    return WriteResult(resolved.relative, not exists, file_hash(data))


def write_document(
    root: Path,
    relative: str,
    text: str,
    *,
    base_hash: str | None = None,
    append: bool = False,
    heading: str | None = None,
    session_id: str | None = None,
    display_path: str | None = None,
) -> WriteResult:
    """`ragdown_write` (§6.6): replace a document's whole text, or append to it or to one section.

    Replacing an existing document needs the `base_hash` a read gave, so an agent never overwrites a
    version it has not read. A document this creates records `created_by: ragdown_write`; one that
    had a `created_by` keeps it; a document the user wrote stays the user's.
    """
    if heading is not None and not append:
        raise Refusal(400, "heading is for append: true")
    resolved = resolve_path(root, relative, markdown_only=True)
    shown = display_path or resolved.relative
    current = _read_file(resolved.full)

    if not append:
        if current is not None and base_hash is None:
            raise Refusal(
                409, f"{shown} exists: pass the hash ragdown_read_doc returned as base_hash to replace it"
            )
        if current is None:
            text = stamp_provenance(text, WRITE_TOOL, session_id)
        else:
            front = read_front_matter(_LINE_BREAK_RE.split(current.decode("utf-8", _ENCODING_ERRORS))).front
            created_by = read_scalar(front, "created_by")
            if created_by:
                text = stamp_provenance(text, created_by, read_scalar(front, "session"))
        return save(root, resolved.relative, text, base_hash=base_hash, display_path=shown)

    if current is None:
        raise Refusal(404, f"no such document: {display_path or relative}")
    read_hash = file_hash(current)
    if base_hash is not None and not hash_matches(base_hash, read_hash):
        raise Refusal(409, f"{shown} was changed on disk since it was opened", "changed")
    lines = _LINE_BREAK_RE.split(current.decode("utf-8", _ENCODING_ERRORS))
    start, end = 0, len(lines)
    if heading:
        found = heading_range_in_lines(lines, heading)
        if found is None:
            raise Refusal(404, f'no heading "{heading}" in {shown}')
        start, end = found  # `start` is the heading's own line, which the step back never passes
    last = end
    while last > start and not lines[last - 1].strip():
        last -= 1
    added = _LINE_BREAK_RE.split(text.rstrip())
    merged = [*lines[:last], *([""] if last > 0 else []), *added, "", *lines[end:]]
    # Against the hash that was read, so a write since then is a conflict rather than lost.
    return save(root, resolved.relative, "\n".join(merged), base_hash=read_hash, display_path=shown)


def delete_document(
    root: Path, relative: str, *, base_hash: str | None = None, display_path: str | None = None
) -> str:
    """Delete one Markdown file (§6.10), only while it is still the `base_hash` version if one is given.

    Returns the normalised scope-relative path.
    """
    resolved = resolve_path(root, relative, markdown_only=True)
    current = _read_file(resolved.full)
    if current is None:
        raise Refusal(404, f"no such document: {display_path or relative}")
    if base_hash is not None and not hash_matches(base_hash, file_hash(current)):
        raise Refusal(
            409,
            f"{display_path or resolved.relative} changed since it was read, so it was not deleted: "
            "read it again and decide on what it says now",
            "changed",
        )
    os.unlink(resolved.full)
    return resolved.relative


def remove(
    root: Path,
    relative: str,
    *,
    recursive: bool = False,
    base_hash: str | None = None,
    display_path: str | None = None,
) -> str:
    """`ragdown_delete`: a document as `delete_document` does, or a subfolder.

    There is no trash, so a subfolder that holds anything goes only with `recursive`, and then with
    everything in it, attachments and skipped files included. Returns the scope-relative path.
    """
    resolved = resolve_path(root, relative, markdown_only=False)
    if not _is_kind(resolved.full, stat.S_IFDIR):
        return delete_document(root, relative, base_hash=base_hash, display_path=display_path)
    shown = display_path or resolved.relative
    if base_hash is not None:
        raise Refusal(
            400,
            f"{shown} is a subfolder: base_hash guards one document, so leave it out to delete a subfolder",
        )
    held = os.listdir(resolved.full)
    if held and not recursive:
        raise Refusal(409, f"{shown} is not empty: pass recursive: true to delete everything in it")
    if held:
        shutil.rmtree(resolved.full)
    else:
        os.rmdir(resolved.full)
    return resolved.relative
