"""Writing and deleting documents: the web-style save and delete (docs/documents.md#how-a-change-is-written),
`ragdown_write` (docs/documents.md#write) and
`ragdown_edit` (docs/documents.md#edit).

Paths going in are scope-relative and pass the path rule; paths coming out are normalised and
scope-relative with `/`. Each change is decided on the file as it is under its lock
(`files.update`), so a `base_hash` check and the write are one step. Nothing here indexes: the
caller syncs afterwards.
"""

from __future__ import annotations

import json
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.hashes import file_hash, hash_matches, short_hash
from ragdown.documents.headings import heading_range_in_lines
from ragdown.documents.paths import DocPath, check_path
from ragdown.documents.paths import shown as shown_input
from ragdown.documents.provenance import Writer, as_agent
from ragdown.documents.text_edits import Edit, apply_edits
from ragdown.errors import BadRequestError, Code, ConflictError, NotAFileError, NotFoundError

# Undecodable bytes survive a read-modify-write (an append) unchanged instead of becoming U+FFFD.
_ENCODING_ERRORS = "surrogateescape"
# As a read shows a document (docs/tools.md#ragdown_read_doc): CRLF or LF; a lone CR stays inside its line.
_LINE_BREAK_RE = re.compile(r"\r?\n")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")

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


def provenance_stamp(created_by: str, session: str | None) -> list[str]:
    """The front matter lines the server writes for a new agent document."""
    return [f"created_by: {created_by}", *([f"session: {json_string(session)}"] if session else [])]


def encode_text(text: str) -> bytes:
    """UTF-8 of a document's text. Undecodable bytes read from the file come back as they were; a
    lone surrogate sent by a client (JSON allows `\\ud800`) is no text and is refused."""
    try:
        return text.encode("utf-8", _ENCODING_ERRORS)
    except UnicodeEncodeError as error:
        char = error.object[error.start]
        raise BadRequestError(
            f"the text holds a lone surrogate (U+{ord(char):04X}), which is not Unicode text: remove it"
        ) from None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", _ENCODING_ERRORS)


def now_hash(current: bytes) -> str:
    """How a `changed` refusal names the version on disk now, so the writer can read it again."""
    return f" (hash now {short_hash(file_hash(current))})"


def _require(base_hash: str | None, current: bytes, shown: str) -> None:
    """409 `changed` unless `current` is still the `base_hash` version (or none was given)."""
    if base_hash is not None and not hash_matches(base_hash, file_hash(current)):
        raise ConflictError(
            f"{shown} was changed on disk since it was opened{now_hash(current)}", Code.CHANGED
        )


def _against(base_hash: str, current: bytes | None, text: str, shown: str) -> bytes:
    """`text` as it replaces `current`, which must still be the `base_hash` version (else 409
    `changed`); CRLF line endings, if the file has them, are kept."""
    if current is None:
        raise ConflictError(f"{shown} was deleted since it was opened", Code.CHANGED)
    _require(base_hash, current, shown)
    if b"\r\n" in current:
        text = _LINE_BREAK_RE.sub("\r\n", text)
    return encode_text(text)


def _result(path: DocPath, updated: files.Updated) -> WriteResult:
    assert updated.after is not None
    return WriteResult(path.relative, updated.before is None, file_hash(updated.after))


def save(
    root: Root | Path,
    relative: str,
    text: str,
    *,
    overwrite: bool = False,
    base_hash: str | None = None,
    display_path: str | None = None,
) -> WriteResult:
    """Write a Markdown file (docs/documents.md#how-a-change-is-written): a new one exclusively, an existing
    one atomically.

    `base_hash` is the hash of the version the text was made from: the file must still be that
    version (else 409 with code `changed`), and its CRLF line endings, if it has them, are kept.
    `display_path` is how refusals name the file; the path as given by default.
    """
    path = check_path(relative, markdown_only=True)
    shown = display_path or relative

    def change(current: bytes | None) -> bytes:
        if base_hash is not None:
            return _against(base_hash, current, text, shown)
        if current is not None and not overwrite:
            raise ConflictError(f"already exists: {shown}")
        return encode_text(text)

    return _result(path, files.update(Root.at(root), path.parts, change, display=shown))


def _root_path(root: Root, path: DocPath) -> str:
    return "/".join((*root.parts, *path.parts))


def write_document(
    root: Root | Path,
    relative: str,
    text: str,
    *,
    base_hash: str | None = None,
    append: bool = False,
    heading: str | None = None,
    session_id: str | None = None,
    display_path: str | None = None,
    writer: Writer | None = None,
) -> WriteResult:
    """`ragdown_write` (docs/documents.md#write): replace a document's whole text, or append to it or to one
    section.

    Replacing an existing document needs the `base_hash` a read gave, so an agent never overwrites a
    version it has not read. A document this creates is stamped `created_by: ragdown_write (<caller>)`
    whatever its text says; a changed one keeps the provenance it had (documents/provenance.py). The
    decision is made on the file as it is under its lock, so two writers never both succeed against
    one version.
    """
    if heading is not None and not append:
        raise BadRequestError("heading is for append: true")
    path = check_path(relative, markdown_only=True)
    shown = display_path or path.relative
    at = Root.at(root)
    agent = writer or Writer()
    stamp = [
        f"created_by: {agent.created_by(WRITE_TOOL)}",
        *([f"session: {json_string(session_id)}"] if session_id else []),
    ]

    def vetted(after: str, before: str | None) -> str:
        return as_agent(after, before, agent, WRITE_TOOL, stamp, _root_path(at, path))

    def replace(current: bytes | None) -> bytes:
        if current is None:
            if base_hash is not None:
                return _against(base_hash, current, text, shown)  # refused: it was deleted
            return encode_text(vetted(text, None))
        if base_hash is None:
            raise ConflictError(
                f"{shown} exists: pass the hash ragdown_read_doc returned as base_hash to replace it"
            )
        _require(base_hash, current, shown)
        return _against(base_hash, current, vetted(text, _decode(current)), shown)

    def add(current: bytes | None) -> bytes:
        if current is None:
            raise NotFoundError(f"no such document: {display_path or shown_input(relative)}")
        _require(base_hash, current, shown)
        before = _decode(current)
        lines = _LINE_BREAK_RE.split(before)
        start, end = 0, len(lines)
        if heading:
            found = heading_range_in_lines(lines, heading)
            if found is None:
                raise NotFoundError(f'no heading "{heading}" in {shown}')
            start, end = found  # `start` is the heading's own line, which the step back never passes
        last = end
        while last > start and not lines[last - 1].strip():
            last -= 1
        added = _LINE_BREAK_RE.split(text.rstrip())
        merged = [*lines[:last], *([""] if last > 0 else []), *added, "", *lines[end:]]
        return _against(file_hash(current), current, vetted("\n".join(merged), before), shown)

    updated = files.update(at, path.parts, add if append else replace, display=shown)
    return _result(path, updated)


def edit_document(
    root: Root | Path,
    relative: str,
    edits: list[Edit],
    *,
    base_hash: str | None = None,
    display_path: str | None = None,
    writer: Writer | None = None,
) -> tuple[WriteResult, int]:
    """`ragdown_edit` (docs/documents.md#edit): the exact passages replaced, all or none, on the file as it is
    under its lock; returns the write and the number of replacements. The document keeps the
    provenance it had, whatever the edits say (documents/provenance.py)."""
    path = check_path(relative, markdown_only=True)
    shown = display_path or relative
    at = Root.at(root)
    agent = writer or Writer()
    replaced = 0

    def change(current: bytes | None) -> bytes:
        nonlocal replaced
        if current is None:
            raise NotFoundError(f"no such document: {shown}")
        _require(base_hash, current, shown)
        before = _decode(current)
        outcome = apply_edits(before, edits)
        replaced = outcome.replaced
        after = as_agent(outcome.text, before, agent, "ragdown_edit", [], _root_path(at, path))
        return _against(file_hash(current), current, after, shown)

    try:
        updated = files.update(at, path.parts, change, display=shown)
    except NotAFileError:
        raise NotFoundError(f"no such document: {shown}") from None
    return _result(path, updated), replaced


def delete_document(
    root: Root | Path, relative: str, *, base_hash: str | None = None, display_path: str | None = None
) -> str:
    """Delete one Markdown file (docs/documents.md#how-a-change-is-written), only while it is still the
    `base_hash` version if one is given.

    Returns the normalised scope-relative path.
    """
    path = check_path(relative, markdown_only=True)

    def change(current: bytes | None) -> files.Delete:
        if current is None:
            raise NotFoundError(f"no such document: {display_path or shown_input(relative)}")
        if base_hash is not None and not hash_matches(base_hash, file_hash(current)):
            raise ConflictError(
                f"{display_path or path.relative} changed since it was read, so it was not deleted: "
                f"read it again and decide on what it says now{now_hash(current)}",
                Code.CHANGED,
            )
        return files.DELETE

    try:
        files.update(Root.at(root), path.parts, change, display=display_path or relative)
    except NotAFileError:  # a symlink or a folder is no document
        raise NotFoundError(f"no such document: {display_path or shown_input(relative)}") from None
    return path.relative


def remove(
    root: Root | Path,
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
    path = check_path(relative, markdown_only=False)
    at = Root.at(root)
    info = files.lstat(at, path.parts, display=relative)
    if info is None or not stat.S_ISDIR(info.st_mode):
        return delete_document(root, relative, base_hash=base_hash, display_path=display_path)
    shown = display_path or path.relative
    if base_hash is not None:
        raise BadRequestError(
            f"{shown} is a subfolder: base_hash guards one document, so leave it out to delete a subfolder",
        )
    held = files.scan(at, path.parts)
    if held and not recursive:
        raise ConflictError(f"{shown} is not empty: pass recursive: true to delete everything in it")
    if held:
        files.remove_tree(at, path.parts)
    else:
        files.remove_empty_dir(at, path.parts)
    return path.relative
