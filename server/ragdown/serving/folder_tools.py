"""The folder tools (docs/tools.md#tool-lists), each defined once and listed by every endpoint: a folder,
a sub-folder, the stdio folder, and root `/mcp` (which adds `folder`; serving/root.py).

Each tool parses its arguments, calls the engine or a document operation, and formats. What differs
between endpoints — the documents a call covers, how it names them, what it counts — is asked of the
`Reach` it runs at (serving/reach.py), never decided here by the kind of endpoint.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from ragdown.bounds import HookOverrides, MaxChars, MinRatio, MinScore, TopK
from ragdown.documents.text_edits import Edit
from ragdown.search.hit_shapes import compact, hit_json, hits_text
from ragdown.search.policy import MAX_QUERY_CHARS
from ragdown.serving.auth import CALLER
from ragdown.serving.reach import Reach
from ragdown.serving.tool_registry import DESTRUCTIVE, IDEMPOTENT, READ, WRITE, ToolRegistry
from ragdown.serving.tool_server import ONE_OR_MANY, Strings

# The engine's stack (numpy, pyarrow, the index, the editor) is imported by the tools when they
# first run, not with this module: `ragdown stdio` answers the MCP handshake before it has loaded
# (docs/design.md#start-up).
if TYPE_CHECKING:
    from ragdown.catalog import DocEntry
    from ragdown.engine import Engine
    from ragdown.hook.context import ContextResult
    from ragdown.indexing.sync import SyncReport
    from ragdown.search.hybrid import Hit

TOOLS = ToolRegistry()
WrittenBy = Literal["agent", "user"]


class EditArgument(BaseModel):
    """One exact-passage replacement."""

    old_text: Annotated[str, Field(min_length=1)]
    new_text: str
    replace_all: bool = False


def _session(value: str | None) -> str | None:
    return value or None  # an empty session_id counts as absent


def report_in_view(
    report: SyncReport, in_view: Callable[[str], bool], shown_as: Callable[[str], str]
) -> dict[str, Any]:
    """A sync report as one caller sees it: only the failed files it could look at, named as it
    names them (the counts are the whole index's). Another folder's file names are not its business."""
    data = report.model_dump()
    data["failed"] = [{"path": shown_as(f.path), "error": f.error} for f in report.failed if in_view(f.path)]
    return data


def _in_view(at: Reach) -> Callable[[str], bool]:
    """Whether a root-relative path lies where the caller may look (any folder it reaches on root)."""
    prefixes = at.prefixes()
    return lambda path: path.startswith(prefixes)


def _labelled_hits(at: Reach, hits: list[Hit]) -> list[tuple[str | None, Hit]]:
    """Hits (paths relative to the reach's scope) with the folder each is shown under, its path
    relative to that folder: root `/mcp` marks each hit `[<folder>]`."""
    labelled = []
    for hit in hits:
        label, scope = at.split(at.scope.absolute(hit.path))
        labelled.append((label, replace(hit, path=scope.relative(at.scope.absolute(hit.path)))))
    return labelled


def _count_search(at: Reach, kind: str, started: float, result: ContextResult | None = None) -> None:
    """Per-folder counts of a search (and a hook call's outcome) where the reach is counted."""
    if at.counts is None:
        return
    at.counts.observe_search(at.counted_as, kind, time.perf_counter() - started)
    if result is not None:
        at.counts.observe_hook(at.counted_as, len(result.injected), Counter(result.dropped.values()))


@TOOLS.tool(READ, on_root="every")
def ragdown_context(
    at: Reach,
    prompt: str = "",
    session_id: str | None = None,
    reset: bool = False,
    format: Literal["text", "claude-code"] = "text",
    top_k: TopK | None = None,
    min_score: MinScore | None = None,
    min_ratio: MinRatio | None = None,
    max_chars: MaxChars | None = None,
) -> str:
    """For prompt hooks: the sections related to a prompt as a <ragdown-context> block, or empty
    text. Never repeats a section for the same session_id until reset: true."""
    overrides = HookOverrides(
        top_k=top_k, min_score=min_score, min_ratio=min_ratio, max_chars=max_chars
    ).given()
    started = time.perf_counter()
    result = at.engine.context(
        prompt,
        session_id=_session(session_id),
        reset=reset,
        output=format,
        overrides=overrides,
        scope=at.scope,
        within=at.within("ragdown_context"),
        source=at.source,
        caller=at.caller,
    )
    if result.searched:
        _count_search(at, "context", started, result)
    return result.text


@TOOLS.tool(READ, on_root="every")
def ragdown_recall(
    at: Reach,
    query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="what to search for")],
    top_k: Annotated[int, Field(ge=1, le=50)] = 8,
    path_prefix: str = "",
    tag: str = "",
    written_by: WrittenBy | None = None,
    format: Literal["text", "json"] = "text",
    max_chars: Annotated[int | None, Field(ge=0)] = None,
) -> str:
    """Search the documents (BM25 + embeddings) and return the best sections, each with its path
    and line range. Use ragdown_read_doc to read around a hit."""
    from ragdown.search.filters import SearchFilters

    within = at.within("ragdown_recall")
    filters = SearchFilters(path_prefix=path_prefix, tag=tag, written_by=written_by, within=within)
    started = time.perf_counter()
    hits = at.engine.recall(query, top_k, filters, scope=at.scope)
    _count_search(at, "recall", started)
    labelled = _labelled_hits(at, hits)
    if format == "json":
        shown = [({"folder": label} if label else {}) | hit_json(hit) for label, hit in labelled]
        return compact({"hits": shown})
    return hits_text(labelled, at.engine.settings.text_limit if max_chars is None else max_chars)


@TOOLS.tool(READ)
def ragdown_read_doc(
    at: Reach,
    path: Annotated[
        str, Field(min_length=1, description="a path, a wikilink target like Note#Heading, or a title")
    ],
    start_line: Annotated[int | None, Field(ge=1)] = None,
    end_line: Annotated[int | None, Field(ge=1)] = None,
) -> str:
    """Read a document (or the lines start_line-end_line of it). The header line gives the range,
    the total and the hash to pass as base_hash when writing it."""
    engine, scope = at.engine, at.place().scope
    read = engine.read(scope, path, start_line, end_line)
    if engine.query_log is not None:
        engine.query_log.read(scope.absolute(read.path), read.start, read.end)
    return f"{read.header()}\n{read.text}"


@TOOLS.tool(READ, on_root="every")
def ragdown_list(
    at: Reach,
    path_prefix: str = "",
    tag: str = "",
    written_by: WrittenBy | None = None,
    session_id: str | None = None,
    sort: Literal["path", "recent"] = "path",
    limit: Annotated[int, Field(ge=1, le=1000)] = 100,
) -> str:
    """List the documents (path, title, tags, when changed, provenance), filtered."""
    from ragdown.catalog import list_line, listing, select
    from ragdown.search.filters import SearchFilters, normalised_tag

    entries = select(
        at.engine.documents().values(),
        at.prefixes("ragdown_list", path_prefix),
        tag=normalised_tag(SearchFilters(tag=tag)),
        written_by=written_by,
        session=_session(session_id),
        recent=sort == "recent",  # on root, across folders, not folder by folder
    )

    def line(entry: DocEntry) -> str:
        label, scope = at.split(entry.path)
        return (f"[{label}] " if label else "") + list_line(entry, scope)

    return listing(entries, limit, line)


def stats_json(at: Reach, entries: list[DocEntry], include_files: bool = False) -> str:
    """`ragdown_stats`: counts of `entries` (the documents in view) and the index's state; with
    `include_files`, each document too. Over HTTP (`local` false) `docs_dir` is the scope as a path
    inside the docs (none on root) and `data_dir` is left out: a remote client has no use for the
    server's own paths."""
    engine: Engine = at.engine
    scope, reader = at.scope, at.forward is not None
    last = engine.last_sync
    local_dir = str(engine.docs_dir / scope.dir) if scope.dir else str(engine.docs_dir)
    stats: dict[str, Any] = {
        "docs_dir": local_dir if at.local else scope.dir or None,
        "data_dir": str(engine.data_dir) if at.local else None,
        "role": "reader" if reader else "primary",
        "embedder": engine.embedder.name,
        "read_only": at.read_only,
        "files": len(entries),
        "chunks": sum(e.chunks for e in entries),
        "syncing": None if reader else engine.syncing,
        "last_sync": report_in_view(last, _in_view(at), scope.relative) if last else None,
        "scope": scope.dir or None,
    }
    if include_files:
        stats["file_list"] = [{"path": scope.relative(e.path), "chunks": e.chunks} for e in entries]
    return compact(stats)


@TOOLS.tool(READ, on_root="every")
def ragdown_stats(at: Reach, include_files: bool = False) -> str:
    """Index statistics for this folder: files, chunks, embedder, last sync."""
    inside = at.prefixes("ragdown_stats")
    entries = [e for e in at.engine.documents().values() if e.path.startswith(inside)]
    return stats_json(at, entries, include_files)


@TOOLS.tool(READ)
def ragdown_backlinks(at: Reach, path: Annotated[str, Field(min_length=1)]) -> str:
    """The documents that link to `path` (wikilinks, aliases, relative links), with the lines."""
    from ragdown.scoped_changes import backlinks_of

    return compact(backlinks_of(at.place(), path))


@TOOLS.tool(WRITE)
def ragdown_remember(
    at: Reach,
    title: Annotated[str, Field(min_length=1)],
    content: Annotated[str, Field(min_length=1)],
    tags: Strings | None = None,
    name: str | None = None,
    supersedes: Strings | None = None,
    session_id: str | None = None,
) -> str:
    """Save a new note (a decision, a finding, a summary) under the folder's notes directory.
    It never overwrites: a taken name gets -2, -3. `supersedes` hides older notes from search."""
    from ragdown.scoped_changes import remember_note

    return remember_note(
        at.place(),
        title=title,
        content=content,
        tags=tags or [],
        name=name or None,
        supersedes=supersedes or [],
        session_id=_session(session_id),
        caller=CALLER.get(),
    )


@TOOLS.tool(WRITE)
def ragdown_write(
    at: Reach,
    path: Annotated[str, Field(min_length=1)],
    text: Annotated[str, Field(min_length=1)],
    base_hash: str | None = None,
    append: bool = False,
    heading: str | None = None,
    session_id: str | None = None,
) -> str:
    """Create a document, replace one (pass base_hash from ragdown_read_doc: a person's edit is
    never overwritten), or append to it (under `heading` if given)."""
    from ragdown.scoped_changes import write

    return write(
        at.place(),
        path,
        text,
        base_hash=base_hash,
        append=append,
        heading=heading,
        session_id=_session(session_id),
        caller=CALLER.get(),
    )


@TOOLS.tool(WRITE)
def ragdown_edit(
    at: Reach,
    path: Annotated[str, Field(min_length=1)],
    edits: Annotated[list[EditArgument], ONE_OR_MANY, Field(min_length=1)],
    base_hash: str | None = None,
) -> str:
    """Replace exact passages (all edits or none). Copy old_text from ragdown_read_doc exactly;
    a passage found more than once needs more context or replace_all: true."""
    from ragdown.scoped_changes import edit

    changes = [Edit(e.old_text, e.new_text, e.replace_all) for e in edits]
    return edit(at.place(), path, changes, base_hash, caller=CALLER.get())


@TOOLS.tool(DESTRUCTIVE)
def ragdown_move(
    at: Reach,
    from_: Annotated[str, Field(min_length=1, alias="from")],
    to: Annotated[str, Field(min_length=1)],
) -> str:
    """Move or rename a document or subfolder; every link that pointed at it is rewritten."""
    from ragdown.scoped_changes import move_document

    return move_document(at.place(), from_, to)


@TOOLS.tool(DESTRUCTIVE)
def ragdown_delete(
    at: Reach,
    path: Annotated[str, Field(min_length=1)],
    recursive: bool = False,
    base_hash: str | None = None,
) -> str:
    """Delete a document (or a subfolder with recursive: true)."""
    from ragdown.scoped_changes import delete

    return delete(at.place(), path, recursive=recursive, base_hash=base_hash)


@TOOLS.tool(IDEMPOTENT, on_root="whole")
def ragdown_reindex(at: Reach, full: bool = False) -> str:
    """Sync the index with the files now (full: rebuild it from every file, reusing the vectors of
    unchanged text; at most every ten minutes)."""
    if full:
        at.engine.claim_full_reindex()
    return compact(report_in_view(at.engine.sync(full=full), _in_view(at), at.scope.relative))
