"""Document changes as agents ask for them, on a scope, each indexed before it answers
(docs/documents.md#how-a-change-is-written).

The rules live in `documents/`; this module points them at the scope's directory, maps paths
between the scope and the folder (links resolve within the folder), and syncs after each change.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.hashes import short_hash
from ragdown.documents.links import LinkIndex, backlinks
from ragdown.documents.move import MoveResult, move
from ragdown.documents.paths import check_path, notes_dir
from ragdown.documents.provenance import Writer
from ragdown.documents.remember import remember
from ragdown.documents.text_edits import Edit
from ragdown.documents.writes import edit_document, remove, write_document
from ragdown.engine import Engine
from ragdown.errors import NotAFolderError, NotFoundError
from ragdown.folders.scope import Scope

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Place:
    """Where a scope sits: its directory, and the folder (root for links) that holds it."""

    engine: Engine
    scope: Scope

    @property
    def root(self) -> Root:
        """The scope's directory: the docs dir (trusted) and the scope's parts, walked like any path."""
        return Root(self.engine.docs_dir, tuple(self.scope.dir.split("/")) if self.scope.dir else ())

    @property
    def folder(self) -> str:
        """The folder's root-relative prefix ("" when the docs dir is served as one folder)."""
        return self.scope.dir.split("/", 1)[0] if self.engine.folders_mode and self.scope.dir else ""

    def writer(self, caller: str) -> Writer:
        """An agent's write here: stamped with `caller`, its `supersedes` kept inside the folder."""
        return Writer(caller, self.folder)

    def to_folder(self, scope_path: str) -> str:
        root_path = self.scope.absolute(scope_path)
        return root_path[len(self.folder) + 1 :] if self.folder else root_path

    def from_folder(self, folder_path: str) -> str:
        return self.scope.relative(f"{self.folder}/{folder_path}" if self.folder else folder_path)


def indexed(place: Place, changed: list[str]) -> str:
    """Index a change that is on disk, to the scope-relative `changed` paths alone (a folder among
    them is walked; Engine.sync_changed). If that fails the change still happened, and the answer
    must say so: an agent told "failed" would retry, and an append retried is an append made twice."""
    try:
        place.engine.sync_changed([place.scope.absolute(path) for path in changed])
    except Exception as error:
        log.exception("the sync after a write failed; the next sync indexes it")
        return f"; it is on disk but not indexed yet ({type(error).__name__}): the next sync indexes it"
    return ""


def write(
    place: Place,
    path: str,
    text: str,
    *,
    base_hash: str | None,
    append: bool,
    heading: str | None,
    session_id: str | None,
    caller: str = "",
) -> str:
    result = write_document(
        place.root,
        path,
        text,
        base_hash=base_hash,
        append=append,
        heading=heading,
        session_id=session_id,
        writer=place.writer(caller),
    )
    pending = indexed(place, [result.path])
    verb = "created" if result.created else "wrote"
    return f"{verb} {result.path} (hash {short_hash(result.hash)}){pending}"


def edit(place: Place, path: str, edits: list[Edit], base_hash: str | None, caller: str = "") -> str:
    result, replaced = edit_document(
        place.root, path, edits, base_hash=base_hash, writer=place.writer(caller)
    )
    pending = indexed(place, [result.path])
    return f"edited {result.path} (replaced {replaced}, hash {short_hash(result.hash)}){pending}"


def remember_note(
    place: Place,
    *,
    title: str,
    content: str,
    tags: list[str],
    name: str | None,
    supersedes: list[str],
    session_id: str | None,
    caller: str = "",
) -> str:
    at_folder_root = not place.scope.dir or (place.engine.folders_mode and "/" not in place.scope.dir)
    result = remember(
        place.root,
        title=title,
        content=content,
        notes_dir=notes_dir(place.engine.settings.notes_dir),
        at_folder_root=at_folder_root,
        tags=tags,
        name=name,
        supersedes=supersedes,
        session_id=session_id,
        writer=place.writer(caller),
    )
    pending = indexed(place, [result.path])
    also = f" (supersedes {', '.join(result.supersedes)})" if result.supersedes else ""
    return f"saved {result.path}{also}{pending}"


def moved(place: Place, source: str, target: str) -> tuple[MoveResult, str]:
    """Move a document or subfolder inside the scope, links in its folder rewritten; the result in
    scope paths, and what `indexed` said."""
    folder_root = Root(place.engine.docs_dir, (place.folder,) if place.folder else ())
    # Both pass the path rule inside the scope before they become folder-relative.
    from_path, to_path = (check_path(given, markdown_only=False).relative for given in (source, target))
    result = move(folder_root, place.to_folder(from_path), place.to_folder(to_path))
    scoped = MoveResult(
        place.from_folder(result.from_path),
        place.from_folder(result.to_path),
        [place.from_folder(p) for p in result.updated],
    )
    return scoped, indexed(place, [scoped.from_path, scoped.to_path, *scoped.updated])


def move_document(place: Place, source: str, target: str) -> str:
    result, pending = moved(place, source, target)
    links = f"; links updated in {', '.join(result.updated)}" if result.updated else ""
    return f"moved {result.from_path} to {result.to_path}{links}{pending}"


def delete(place: Place, path: str, *, recursive: bool, base_hash: str | None) -> str:
    removed = remove(place.root, path, recursive=recursive, base_hash=base_hash)
    pending = indexed(place, [removed])
    return f"deleted {removed}{pending}"


def backlinks_of(place: Place, path: str) -> dict[str, object]:
    """The documents in the scope whose links resolve (within the folder) to `path`."""
    entries = place.engine.documents()
    target = place.scope.absolute(check_path(path, markdown_only=False).relative)
    if target not in entries:
        raise NotFoundError(f"not an indexed document: {path}")
    prefix = f"{place.folder}/" if place.folder else ""
    index = LinkIndex.of_folder({p: e.aliases for p, e in entries.items()}, prefix)
    sources: dict[str, str] = {}
    docs = Root(place.engine.docs_dir)
    for root_path in entries:
        if root_path != target and place.scope.contains(root_path):
            try:
                data = files.read_file(docs, root_path.split("/"))
            except (OSError, NotAFolderError):
                continue
            if data is not None:
                sources[root_path[len(prefix) :]] = data.decode("utf-8", errors="replace")
    found = backlinks(target[len(prefix) :], sources, index)
    return {
        "path": place.scope.relative(target),
        "backlinks": [
            {
                "path": place.scope.relative(prefix + b.path),
                "title": entries[prefix + b.path].title,
                "lines": [{"line": line.line, "text": line.text} for line in b.lines],
            }
            for b in found
        ],
    }
