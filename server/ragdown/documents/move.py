"""docs/documents.md#move moving a document or a subfolder within one folder, rewriting the links the move
would break.

Paths are relative to the folder root (where links resolve), with `/` separators. `plan_move`
validates and computes every rewrite before anything is written; `execute_move` then moves and
writes. `move` does both.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.frontmatter import read_front_matter, read_list
from ragdown.documents.lines import split_lines
from ragdown.documents.links import (
    Link,
    LinkIndex,
    find_links,
    resolve_link,
    resolve_wikilink,
)
from ragdown.documents.paths import (
    MARKDOWN_RE,
    MAX_DEPTH,
    MAX_PATH_BYTES,
    check_path,
    is_skipped_entry,
    is_utf8,
    shown,
)
from ragdown.errors import (
    BadRequestError,
    ConflictError,
    NotAFileError,
    NotAFolderError,
    NotFoundError,
)

# What JavaScript's encodeURI leaves alone, beyond quote()'s always-safe `A-Za-z0-9_.-~`.
_URI_SAFE = ";,/?:@&=+$!*'()#"


@dataclass(frozen=True)
class Rewrite:
    """A document's text as read (`original`, bytes on disk) and with its links rewritten."""

    path: str
    new_path: str
    original: bytes
    text: str


@dataclass(frozen=True)
class MovePlan:
    """A validated move and every rewrite it needs, computed before anything is written."""

    root: Root
    """The folder."""
    from_path: str
    to_path: str
    is_folder: bool
    same_file: bool
    """The destination is the source itself: a case-only rename on a case-insensitive disk."""
    rewrites: tuple[Rewrite, ...]
    """The moved document's own (always, for a document move) and every other changed document."""

    @property
    def source(self) -> tuple[str, ...]:
        return tuple(self.from_path.split("/"))

    @property
    def destination(self) -> tuple[str, ...]:
        return tuple(self.to_path.split("/"))


@dataclass(frozen=True)
class MoveResult:
    """Where it was, where it is, and the documents rewritten, at their new paths, sorted."""

    from_path: str
    to_path: str
    updated: list[str]


def move(folder_root: Root | Path, from_rel: str, to_rel: str) -> MoveResult:
    """Move `from_rel` to `to_rel` inside `folder_root` and fix the links in the folder."""
    return execute_move(plan_move(folder_root, from_rel, to_rel))


# --- planning ---------------------------------------------------------------------------------


def plan_move(folder_root: Root | Path, from_rel: str, to_rel: str) -> MovePlan:
    """Validate the move and compute every document's rewritten text; nothing is written.

    Raises `Refusal`: 400 for a bad path, a move onto itself or into itself, 404 for a missing
    source, 409 for a taken destination.
    """
    root = Root.at(folder_root)
    source_info, from_path = _resolve(root, from_rel, markdown_only=False)
    is_folder = source_info is not None and stat.S_ISDIR(source_info.st_mode)
    if not is_folder:
        source_info, from_path = _resolve(root, from_rel, markdown_only=True)
    occupied, to_path = _resolve(root, to_rel, markdown_only=not is_folder)
    if source_info is None or not (is_folder or stat.S_ISREG(source_info.st_mode)):
        raise NotFoundError(f"no such document or folder: {from_rel}")
    if from_path == to_path:
        raise BadRequestError(f"{from_rel} is already there")
    if is_folder and to_path.startswith(f"{from_path}/"):
        raise BadRequestError(f"cannot move {from_rel} into itself")
    same_file = occupied is not None and _same_inode(occupied, source_info)
    if occupied is not None and not same_file:
        raise ConflictError(f"already exists: {to_rel}")

    moved = _mover(from_path, to_path, is_folder)
    documents, attachments = folder_files(root)
    if not is_folder and from_path not in documents:
        documents.append(from_path)
    for path in (*documents, *attachments):
        _check_fits(moved(path), from_rel, to_rel)
    texts: dict[str, tuple[bytes, str]] = {}
    aliases: dict[str, list[str]] = {}
    for path in documents:
        read = _read_text(root, path)
        if read is not None:
            texts[path] = read
            aliases[path] = _aliases(read[1])
    before = LinkIndex(documents, aliases, attachments)
    after = LinkIndex(
        [moved(path) for path in documents],
        {moved(path): names for path, names in aliases.items()},
        [moved(path) for path in attachments],
    )

    rewrites: list[Rewrite] = []
    for path, (original, text) in texts.items():
        own = not is_folder and path == from_path
        if not own and "[[" not in text and "](" not in text:
            continue  # links nothing, so nothing to fix
        rewritten = _rewrite_links(text, path, moved, before, after)
        if rewritten != text or own:
            rewrites.append(Rewrite(path, moved(path), original, rewritten))
    return MovePlan(root, from_path, to_path, is_folder, same_file, tuple(rewrites))


def _check_fits(path: str, from_rel: str, to_rel: str) -> None:
    """A folder moved deeper must not carry a file past the bounds every path is held to."""
    if path.count("/") + 1 > MAX_DEPTH or len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise BadRequestError(
            f"moving {shown(from_rel)} to {shown(to_rel)} would make {shown(path)} longer or deeper "
            f"than a path may be ({MAX_PATH_BYTES:,} bytes, {MAX_DEPTH} names)",
        )


def _mover(from_path: str, to_path: str, is_folder: bool) -> Callable[[str], str]:
    """Where a folder path is after the move: itself, unless it is what moves or is under it."""

    def moved(path: str) -> str:
        if path == from_path:
            return to_path
        if is_folder and path.startswith(f"{from_path}/"):
            return to_path + path[len(from_path) :]
        return path

    return moved


def _rewrite_links(
    text: str, path: str, moved: Callable[[str], str], before: LinkIndex, after: LinkIndex
) -> str:
    """`text` with each link the move breaks pointed at its target's new place; only targets change."""
    at = moved(path)
    edits: list[tuple[int, int, str]] = []
    for link in find_links(text):
        was = resolve_link(before, link, path)
        if was is None:
            continue
        want = moved(was)
        if resolve_link(after, link, at) == want:
            continue
        edits.append((link.start, link.end, _link_target(link, want, at, after)))
    for start, end, target in reversed(edits):
        text = text[:start] + target + text[end:]
    return text


def _link_target(link: Link, want: str, at: str, after: LinkIndex) -> str:
    """What to write as a link's target so it names `want` from the document at `at`.

    A Markdown link gets the relative path, URI-encoded; a wikilink the shortest trailing run of
    segments that resolves to `want`, keeping `.md` only if the link had it.
    """
    if link.kind == "markdown":
        # Rooted at "/" so relpath never consults the working directory.
        relative = posixpath.relpath(f"/{want}", f"/{posixpath.dirname(at)}")
        return quote(relative, safe=_URI_SAFE).replace("(", "%28").replace(")", "%29")
    is_document = bool(MARKDOWN_RE.search(want))
    keep_extension = is_document and bool(MARKDOWN_RE.search(link.target))
    bare = MARKDOWN_RE.sub("", want) if is_document and not keep_extension else want
    segments = bare.split("/")
    for count in range(1, len(segments) + 1):
        candidate = "/".join(segments[-count:])
        resolved = resolve_wikilink(after, candidate, at)
        if resolved is not None and resolved.path == want:
            return candidate
    return bare


def _aliases(text: str) -> list[str]:
    front = read_front_matter(split_lines(text)).front
    return [alias for alias in read_list(front, "aliases") if alias]


def _read_text(root: Root, path: str) -> tuple[bytes, str] | None:
    """The bytes and text of a document, or None when it is gone or not UTF-8 (left as it is)."""
    data = files.read_file(root, path.split("/"))
    if data is None:
        return None
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def folder_files(root: Root) -> tuple[list[str], list[str]]:
    """The folder's documents and attachments, skipping what the indexer skips
    (docs/design.md#listing-files), and names that are not UTF-8: no link can name one."""
    documents: list[str] = []
    attachments: list[str] = []
    for parts, _info in files.walk_files(root, is_skipped_entry):
        path = "/".join(parts)
        if not is_utf8(path):
            continue
        (documents if MARKDOWN_RE.search(path) else attachments).append(path)
    return documents, attachments


# --- path validation (docs/documents.md#the-path-rule) ------------------------------------------------------


def _resolve(root: Root, path: str, *, markdown_only: bool) -> tuple[os.stat_result | None, str]:
    """What is at `path` now (None: nothing) and its normalised folder-relative form; the path rule
    refuses with a 400."""
    checked = check_path(path, markdown_only=markdown_only)
    return files.lstat(root, checked.parts, display=path), checked.relative


def _same_inode(a: os.stat_result, b: os.stat_result) -> bool:
    return a.st_ino == b.st_ino and a.st_dev == b.st_dev


# --- executing --------------------------------------------------------------------------------


def execute_move(plan: MovePlan) -> MoveResult:
    """Move on disk, then write each rewritten document whose content is still what was read.

    A document changed since the plan was made keeps its own version (its links are not fixed).
    """
    rewrites = list(plan.rewrites)
    if plan.is_folder:
        # Checked again: rename() would quietly replace an empty directory made since the plan.
        occupied = files.lstat(plan.root, plan.destination)
        source_info = files.lstat(plan.root, plan.source)
        if source_info is None:
            raise NotFoundError(f"no such document or folder: {plan.from_path}")
        if occupied is not None and not _same_inode(occupied, source_info):
            raise ConflictError(f"already exists: {plan.to_path}")
        # One rename carries the documents, the attachments and whatever else is in there.
        files.rename(plan.root, plan.source, plan.destination, display=plan.to_path)
    else:
        own = next((rewrite for rewrite in rewrites if rewrite.path == plan.from_path), None)
        if own is not None:
            rewrites.remove(own)
        _move_document(plan, own)

    updated: list[str] = []
    for rewrite in rewrites:
        if _write_if_unchanged(plan.root, rewrite.new_path, rewrite):
            updated.append(rewrite.new_path)
    return MoveResult(plan.from_path, plan.to_path, sorted(updated, key=lambda p: (p.casefold(), p)))


def _move_document(plan: MovePlan, own: Rewrite | None) -> None:
    """Move the document with its own links rewritten; `own` is None when it is not UTF-8 text."""
    if plan.same_file:
        # Case-only rename on a case-insensitive disk: the destination *is* the source.
        files.rename(plan.root, plan.source, plan.destination, display=plan.to_path)
        if own is not None:
            _write_if_unchanged(plan.root, plan.to_path, own)
        return

    def content(current: bytes) -> bytes:
        # Edited since it was read: it moves as it is now, keeping its own version.
        return own.text.encode("utf-8") if own is not None and current == own.original else current

    try:
        moved = files.move_file(plan.root, plan.source, plan.destination, content, display=plan.to_path)
    except (FileNotFoundError, NotAFileError):
        raise NotFoundError(f"no such document or folder: {plan.from_path}") from None
    if not moved:  # a move keeps the file's permissions, and never replaces what is there
        raise ConflictError(f"already exists: {plan.to_path}")


def _write_if_unchanged(root: Root, path: str, rewrite: Rewrite) -> bool:
    """Write the rewritten links if the document still holds what the plan read (under its lock)."""
    new = rewrite.text.encode("utf-8")

    def change(current: bytes | None) -> bytes | None:
        if current != rewrite.original or new == current:
            return None
        return new

    try:
        updated = files.update(root, path.split("/"), change)
    except (NotAFileError, NotAFolderError):
        return False
    return updated.before == rewrite.original
