"""What the index holds, as agents read it: documents listed, one read, counts
(docs/tools.md#ragdown_read_doc).

Reads go to the files on disk (the text exactly as written, its hash); the index supplies what
is known about each document (title, tags, provenance, supersedes).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.compute as pc

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.hashes import file_hash, short_hash
from ragdown.documents.headings import heading_range_in_lines
from ragdown.documents.links import LinkIndex, Resolved, resolve_wikilink
from ragdown.documents.metadata import supersedes_boundary, within
from ragdown.documents.paths import check_path, is_markdown, shown
from ragdown.errors import BadRequestError, ConflictError, NotFoundError
from ragdown.folders.scope import Scope
from ragdown.search.hit_shapes import changed_date

if TYPE_CHECKING:  # LanceDB's store: a list from the search snapshot never loads it
    from ragdown.indexing.store import ChunkStore

DOC_COLUMNS = [
    "path",
    "title",
    "tags",
    "aliases",
    "description",
    "created_by",
    "session",
    "supersedes",
    "mtime_ms",
]


@dataclass
class DocEntry:
    """One indexed document as `ragdown_list` shows it (paths root-relative)."""

    path: str
    title: str
    tags: list[str]
    aliases: list[str]
    description: str
    created_by: str
    session: str
    mtime_ms: float
    chunks: int = 0
    superseded_by: list[str] = field(default_factory=list)


def documents(store: ChunkStore, folders_mode: bool = False) -> dict[str, DocEntry]:
    """Every indexed document with its metadata and the documents that supersede it (inside their
    boundary, as ChunkStore.superseded_paths); read once per table version, since reads, lists and
    stats all need it (callers must not mutate it)."""
    store.refresh()
    return store.memo(f"documents:{folders_mode}", lambda: _scan_documents(store, folders_mode))


def _scan_documents(store: ChunkStore, folders_mode: bool) -> dict[str, DocEntry]:
    # Every row of a document carries its metadata: one row per document (its first chunk) becomes
    # Python objects, and the chunks are counted in Arrow (30,546 rows in 10,004 documents: 95 ms,
    # where turning every row into a dict took 150 ms; the entries are the same).
    table = store.chunks([*DOC_COLUMNS, "chunk_index"], "true")
    counts = pc.value_counts(table.column("path"))
    chunks = dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True))
    entries: dict[str, DocEntry] = {}
    supersedes: dict[str, list[str]] = {}
    first = table.filter(pc.equal(table.column("chunk_index"), 0))
    columns = (first.column(name).to_pylist() for name in DOC_COLUMNS)  # no dict per row
    for path, title, tags, aliases, description, created_by, session, targets, mtime_ms in zip(
        *columns, strict=True
    ):
        entries[path] = DocEntry(
            path=path,
            title=title,
            tags=tags.split(),
            aliases=[a for a in aliases.split("\n") if a],
            description=description,
            created_by=created_by,
            session=session,
            mtime_ms=float(mtime_ms),
            chunks=chunks[path],
        )
        supersedes[path] = [p for p in targets.split("\n") if p]
    for path, targets in supersedes.items():
        boundary = supersedes_boundary(path, folders_mode)
        for target in targets:
            if target in entries and within(boundary, target):
                entries[target].superseded_by.append(path)
    for entry in entries.values():
        entry.superseded_by.sort()
    return dict(sorted(entries.items()))


def select(
    entries: Iterable[DocEntry],
    prefixes: tuple[str, ...],
    *,
    tag: str | None = None,
    written_by: str | None = None,
    session: str | None = None,
    recent: bool = False,
) -> list[DocEntry]:
    """`ragdown_list`'s filters (docs/tools.md#ragdown_list): under one of `prefixes` (root-relative,
    "" for all), the tag or a nested one, agent- or user-written, one session; by path or most
    recently changed first."""
    chosen = [
        e
        for e in entries
        if e.path.startswith(prefixes)
        and (tag is None or any(t == tag or t.startswith(tag + "/") for t in e.tags))
        and (written_by is None or (written_by == "agent") == bool(e.created_by))
        and (session is None or e.session == session)
    ]
    if recent:
        chosen.sort(key=lambda e: e.mtime_ms, reverse=True)
    return chosen


def listing(entries: list[DocEntry], limit: int, line: Callable[[DocEntry], str]) -> str:
    """The list as `ragdown_list` shows it: a count, then a line per document, at most `limit`."""
    if not entries:
        return "No documents."
    shown = entries[:limit]
    count = f"{len(shown)} of {len(entries)}" if len(shown) < len(entries) else str(len(entries))
    return "\n".join([f"documents: {count}", *(line(e) for e in shown)])


def list_line(entry: DocEntry, scope: Scope) -> str:
    tags = f" [{' '.join('#' + t for t in entry.tags)}]" if entry.tags else ""
    details = [f"changed {changed_date(entry.mtime_ms)}"]
    if entry.created_by:
        details.append(f"written by an agent with {entry.created_by}")
    if entry.session:
        details.append(f"session {entry.session}")
    if entry.aliases:
        details.append(f"aliases {', '.join(entry.aliases)}")
    superseded = superseded_note(entry.superseded_by, scope)
    if superseded:
        details.append(f"{superseded} (hidden from search)")
    description = f": {entry.description}" if entry.description else ""
    return f"{scope.relative(entry.path)} — {entry.title}{tags} ({', '.join(details)}){description}"


def superseded_note(superseding: list[str], scope: Scope) -> str:
    """What hides a document from search, as this scope may see it: the superseding documents inside
    the scope by path, the others (in the same folder, outside a sub-folder scope) by count."""
    inside = [scope.relative(p) for p in superseding if scope.contains(p)]
    outside = len(superseding) - len(inside)
    named = [
        *inside,
        *([f"{outside} document{'s' if outside > 1 else ''} outside this scope"] if outside else []),
    ]
    return f"superseded by {', '.join(named)}" if named else ""


@dataclass(frozen=True)
class DocRead:
    path: str  # scope-relative
    start: int
    end: int
    total: int
    hash: str  # full hex
    text: str
    resolved_from: str | None
    superseded: str  # superseded_note, "" when nothing supersedes it

    def header(self) -> str:
        extras = f", resolved from {_json(self.resolved_from)}" if self.resolved_from is not None else ""
        if self.superseded:
            extras += f", {self.superseded}"
        return f"{self.path}:{self.start}-{self.end} of {self.total} (hash {short_hash(self.hash)}{extras})"


def _json(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def read_document(
    docs_dir: Path,
    store: ChunkStore,
    scope: Scope,
    path: str,
    start_line: int | None = None,
    end_line: int | None = None,
    *,
    folders_mode: bool = False,
) -> DocRead:
    """`ragdown_read_doc`: a Markdown path inside the scope, else a wikilink target resolved in the
    folder. The path passes the path rule first, and the file is opened through `documents/files`
    like every other, so nothing outside the scope is ever read."""
    checked = check_path(path, markdown_only=False)
    docs = Root(docs_dir)
    scope_parts = tuple(scope.dir.split("/")) if scope.dir else ()
    anchor: str | None = None
    resolved_from: str | None = None
    root_path = scope.absolute(checked.relative)
    markdown = is_markdown(checked.name)
    data = files.read_file(docs, (*scope_parts, *checked.parts), display=path) if markdown else None
    entries = documents(store, folders_mode)
    if data is None:
        data, root_path, anchor = _by_name(docs, entries, scope, path, folders_mode)
        resolved_from = path
    lines = data.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines = lines[:-1]
    total = len(lines)
    start, end = _line_range(lines, anchor, start_line, end_line, scope.relative(root_path))
    entry = entries.get(root_path)
    superseded = superseded_note(entry.superseded_by if entry else [], scope)
    return DocRead(
        path=scope.relative(root_path),
        start=start,
        end=end,
        total=total,
        hash=file_hash(data),
        text="\n".join(lines[start - 1 : end]),
        resolved_from=resolved_from,
        superseded=superseded,
    )


def _by_name(
    docs: Root, entries: dict[str, DocEntry], scope: Scope, path: str, folders_mode: bool
) -> tuple[bytes, str, str | None]:
    """The document a wikilink target names: its bytes, its path from the docs dir and the heading
    the target names. Links resolve within the folder; a target outside this scope counts as not
    found."""
    prefix = scope.dir.split("/", 1)[0] + "/" if folders_mode and scope.dir else ""
    index = LinkIndex.of_folder({p: e.aliases for p, e in entries.items()}, prefix)
    resolved = resolve_wikilink(index, path)
    found = prefix + resolved.path if resolved else None
    if resolved is None:
        titled = by_title(entries.values(), scope, path)
        if titled is not None:
            found, anchor = titled
            resolved = Resolved(found[len(prefix) :], anchor)
    data = None
    if found is not None and scope.contains(found) and is_markdown(found):
        data = files.read_file(docs, found.split("/"))
    if resolved is None or found is None or data is None:
        raise NotFoundError(
            f"no such document: {shown(path)} (not a path, and no document by that name, alias or title)"
        )
    return data, found, resolved.anchor


# How many of the documents sharing a title a refusal names.
AMBIGUOUS_SHOWN = 10
BREADCRUMB = " › "


def by_title(entries: Iterable[DocEntry], scope: Scope, target: str) -> tuple[str, str | None] | None:
    """The document inside `scope` whose title `target` names, and the heading it names, as
    `ragdown_read_doc` resolves a name that is no path, file name or alias
    (docs/tools.md#ragdown_read_doc): `Title`, `Title#Heading`, or a hit's breadcrumb
    `Title › … › Heading`; trimmed and case-insensitive. A title several documents share is refused
    (409), naming them, rather than guessed."""
    text = target.strip().removeprefix("!")
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    text = text.split("|", 1)[0].strip()
    readings: list[tuple[str, str | None]] = [(text, None)]
    name, hash_sign, heading = text.partition("#")
    if hash_sign:
        readings.append((name, heading))
    if BREADCRUMB in text:
        first, *_, last = text.split(BREADCRUMB)
        readings.append((first, last))
    inside = [e for e in entries if scope.contains(e.path) and is_markdown(e.path)]
    for title, anchor in readings:
        wanted = title.strip().casefold()
        if not wanted:
            continue
        matches = sorted(e.path for e in inside if e.title.strip().casefold() == wanted)
        if len(matches) > 1:
            shown_paths = ", ".join(scope.relative(p) for p in matches[:AMBIGUOUS_SHOWN])
            more = f" and {len(matches) - AMBIGUOUS_SHOWN} more" if len(matches) > AMBIGUOUS_SHOWN else ""
            raise ConflictError(
                f"{_json(title.strip())} is the title of {len(matches)} documents ({shown_paths}{more}): "
                "read one by its path"
            )
        if matches:
            kept = anchor.strip() if anchor is not None else None
            return matches[0], kept if kept and not kept.startswith("^") else None
    return None


def _line_range(
    lines: list[str], anchor: str | None, start_line: int | None, end_line: int | None, shown_as: str
) -> tuple[int, int]:
    """The lines to read, 1-based and inclusive: those asked for, else the section `anchor` names,
    else all."""
    total = len(lines)
    start, end = 1, total
    if anchor and start_line is None and end_line is None:
        found_range = heading_range_in_lines(lines, anchor)
        if found_range is not None:
            start, end = found_range
    if start_line is not None and start_line > total:
        raise BadRequestError(
            f"start_line {start_line} is past the end of {shown_as}, which has {total} "
            f"line(s): read from 1 to {total}",
        )
    if start_line is not None and end_line is not None and end_line < start_line:
        raise BadRequestError(
            f"end_line {end_line} is before start_line {start_line}: give a range that runs forward"
        )
    start = max(1, start_line if start_line is not None else start)
    end = min(total, end_line if end_line is not None else end)
    return start, end
