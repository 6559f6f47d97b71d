"""§6.5 moving a document or a subfolder within one folder, rewriting the links the move would break.

Paths are relative to the folder root (where links resolve), with `/` separators. `plan_move`
validates and computes every rewrite before anything is written; `execute_move` then moves and
writes. `move` does both.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ragdown.documents.atomic import create_exclusive, write_atomic
from ragdown.documents.errors import Refusal
from ragdown.documents.frontmatter import read_front_matter, read_list
from ragdown.documents.lines import split_lines
from ragdown.documents.links import (
    Link,
    LinkIndex,
    find_links,
    resolve_link,
    resolve_wikilink,
)
from ragdown.documents.paths import MARKDOWN_RE, resolve_path

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

    root: Path
    """The folder's real path."""
    from_path: str
    to_path: str
    is_folder: bool
    same_file: bool
    """The destination is the source itself: a case-only rename on a case-insensitive disk."""
    rewrites: tuple[Rewrite, ...]
    """The moved document's own (always, for a document move) and every other changed document."""

    @property
    def source(self) -> Path:
        return self.root / self.from_path

    @property
    def destination(self) -> Path:
        return self.root / self.to_path


@dataclass(frozen=True)
class MoveResult:
    """Where it was, where it is, and the documents rewritten, at their new paths, sorted."""

    from_path: str
    to_path: str
    updated: list[str]


def move(folder_root: Path, from_rel: str, to_rel: str) -> MoveResult:
    """Move `from_rel` to `to_rel` inside `folder_root` and fix the links in the folder."""
    return execute_move(plan_move(folder_root, from_rel, to_rel))


# --- planning ---------------------------------------------------------------------------------


def plan_move(folder_root: Path, from_rel: str, to_rel: str) -> MovePlan:
    """Validate the move and compute every document's rewritten text; nothing is written.

    Raises `Refusal`: 400 for a bad path, a move onto itself or into itself, 404 for a missing
    source, 409 for a taken destination.
    """
    root = Path(os.path.realpath(folder_root))
    source, from_path = _resolve(root, from_rel, markdown_only=False)
    source_info = _lstat(source)
    is_folder = source_info is not None and stat.S_ISDIR(source_info.st_mode)
    if not is_folder:
        source, from_path = _resolve(root, from_rel, markdown_only=True)
    destination, to_path = _resolve(root, to_rel, markdown_only=not is_folder)
    if source_info is None or not (is_folder or stat.S_ISREG(source_info.st_mode)):
        raise Refusal(404, f"no such document or folder: {from_rel}")
    if from_path == to_path:
        raise Refusal(400, f"{from_rel} is already there")
    if is_folder and to_path.startswith(f"{from_path}/"):
        raise Refusal(400, f"cannot move {from_rel} into itself")
    occupied = _lstat(destination)
    same_file = occupied is not None and _same_inode(occupied, source_info)
    if occupied is not None and not same_file:
        raise Refusal(409, f"already exists: {to_rel}")

    moved = _mover(from_path, to_path, is_folder)
    documents, attachments = _list_files(root)
    if not is_folder and from_path not in documents:
        documents.append(from_path)
    texts: dict[str, tuple[bytes, str]] = {}
    aliases: dict[str, list[str]] = {}
    for path in documents:
        read = _read_text(root / path)
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


def _read_text(path: Path) -> tuple[bytes, str] | None:
    """The bytes and text of a document, or None when it is gone or not UTF-8 (left as it is)."""
    try:
        data = path.read_bytes()
        return data, data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _list_files(root: Path) -> tuple[list[str], list[str]]:
    """The folder's documents and attachments, skipping what the indexer skips (§2.4)."""
    documents: list[str] = []
    attachments: list[str] = []
    for path in _walk(root, ""):
        (documents if MARKDOWN_RE.search(path) else attachments).append(path)
    return documents, attachments


def _walk(directory: Path, prefix: str) -> Iterator[str]:
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        # follow_symlinks=False: a symlink is neither a directory nor a file to the indexer.
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), f"{prefix}{entry.name}/")
        elif entry.is_file(follow_symlinks=False):
            yield f"{prefix}{entry.name}"


# --- path validation (§6.9) -------------------------------------------------------------------


def _resolve(root: Path, path: str, *, markdown_only: bool) -> tuple[Path, str]:
    """The absolute path and the normalised folder-relative path, or a 400 `Refusal`."""
    resolved = resolve_path(root, path, markdown_only=markdown_only)
    return resolved.full, resolved.relative


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _same_inode(a: os.stat_result, b: os.stat_result) -> bool:
    return a.st_ino == b.st_ino and a.st_dev == b.st_dev


# --- executing --------------------------------------------------------------------------------


def execute_move(plan: MovePlan) -> MoveResult:
    """Move on disk, then write each rewritten document whose content is still what was read.

    A document changed since the plan was made keeps its own version (its links are not fixed).
    """
    source, destination = plan.source, plan.destination
    destination.parent.mkdir(parents=True, exist_ok=True)
    rewrites = list(plan.rewrites)
    if plan.is_folder:
        # Checked again: rename() would quietly replace an empty directory made since the plan.
        occupied = _lstat(destination)
        source_info = _lstat(source)
        if source_info is None:
            raise Refusal(404, f"no such document or folder: {plan.from_path}")
        if occupied is not None and not _same_inode(occupied, source_info):
            raise Refusal(409, f"already exists: {plan.to_path}")
        # One rename carries the documents, the attachments and whatever else is in there.
        os.rename(source, destination)
    else:
        own = next((rewrite for rewrite in rewrites if rewrite.path == plan.from_path), None)
        if own is not None:
            rewrites.remove(own)
        _move_document(plan, own)

    updated: list[str] = []
    for rewrite in rewrites:
        if _write_if_unchanged(plan.root / rewrite.new_path, rewrite):
            updated.append(rewrite.new_path)
    return MoveResult(plan.from_path, plan.to_path, sorted(updated, key=lambda p: (p.casefold(), p)))


def _move_document(plan: MovePlan, own: Rewrite | None) -> None:
    """Move the document with its own links rewritten; `own` is None when it is not UTF-8 text."""
    source, destination = plan.source, plan.destination
    if plan.same_file:
        # Case-only rename on a case-insensitive disk: the destination *is* the source.
        os.rename(source, destination)
        if own is not None:
            _write_if_unchanged(destination, own)
        return
    try:
        current = source.read_bytes()
        mode = stat.S_IMODE(os.stat(source).st_mode)
    except FileNotFoundError:
        raise Refusal(404, f"no such document or folder: {plan.from_path}") from None
    # Edited since it was read: it moves as it is now, keeping its own version.
    content = own.text.encode("utf-8") if own is not None and current == own.original else current
    create_exclusive(destination, content, plan.to_path, mode=mode)  # a move keeps the file's permissions
    os.unlink(source)


def _write_if_unchanged(path: Path, rewrite: Rewrite) -> bool:
    try:
        if path.read_bytes() != rewrite.original:
            return False
    except OSError:
        return False
    if rewrite.text.encode("utf-8") != rewrite.original:
        write_atomic(path, rewrite.text.encode("utf-8"))
    return True
