"""The MCP tools of one endpoint (a folder, a subfolder, or the stdio folder), over the engine.

Each tool parses its arguments, calls the engine or a document operation, and formats; a refusal
becomes a tool result with `isError` and the refusal's own sentence, never a transport error.
"""

from __future__ import annotations

import errno
import functools
import keyword
import logging
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python

from ragdown.bounds import HookOverrides, MaxChars, MinRatio, MinScore, TopK
from ragdown.documents.edits import Edit
from ragdown.errors import BadRequestError, OverloadedError, RagdownError
from ragdown.folders.manage import FOLDER_WRITE_TOOLS
from ragdown.folders.scope import Scope
from ragdown.search.policy import MAX_QUERY_CHARS
from ragdown.serving.admission import Admission
from ragdown.serving.auth import CALLER
from ragdown.serving.formats import compact, hit_json, hits_text
from ragdown.serving.metrics import Metrics
from ragdown.serving.tool_server import ONE_OR_MANY, Strings, ToolServer

# The engine's stack (numpy, pyarrow, the index, the editor) is imported by the tools when they
# first run, not with this module: `ragdown stdio` answers the MCP handshake before it has loaded
# (docs/design.md#start-up).
if TYPE_CHECKING:
    from ragdown.catalog import DocEntry
    from ragdown.editing import Place
    from ragdown.engine import Engine
    from ragdown.indexing.sync import SyncReport

log = logging.getLogger(__name__)

WRITE_TOOLS = frozenset({*FOLDER_WRITE_TOOLS, "ragdown_create_folder"})
READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

WrittenBy = Literal["agent", "user"]
# How a reader runs a write tool on the primary: (tool, folder — None for the root endpoint — the
# sub-folder path inside it, arguments) -> (text, is_error), the answer unchanged. The call names a
# folder and a place inside it, never a filesystem path (serving/internal.py).
Forward = Callable[[str, str | None, str, dict[str, Any]], tuple[str, bool]]


class EditArgument(BaseModel):
    """One exact-passage replacement."""

    old_text: Annotated[str, Field(min_length=1)]
    new_text: str
    replace_all: bool = False


@dataclass
class Endpoint:
    """What one MCP server answers for: its scope and the server-wide switches."""

    engine: Engine
    scope: Scope
    name: str
    title: str
    read_only: bool = False
    disabled: frozenset[str] = field(default_factory=frozenset)
    admission: Admission = field(default_factory=Admission)
    # On a reader: the primary runs the write tools (Forward); None on the primary itself.
    forward: Forward | None = None
    metrics: Metrics | None = None
    # stdio: the client is the local user, so server paths may be shown; over HTTP they never are.
    local: bool = False

    @property
    def folder(self) -> str:
        """The folder label for metrics ("" when the docs dir is served as one folder)."""
        return self.scope.dir.split("/", 1)[0]

    def enabled(self, tool: str) -> bool:
        return tool not in self.disabled and not (self.read_only and tool in WRITE_TOOLS)

    @property
    def source(self) -> str | None:
        """How the hook's block names the scope: its absolute path locally, its MCP path over HTTP."""
        return None if self.local else f"/mcp/{self.scope.dir}"

    def instructions(self) -> str:
        return (
            f'Search the "{self.title}" folder of the user\'s Markdown documents. Call ragdown_recall '
            "before answering a question the documents might cover (notes, runbooks, decisions, "
            "how-tos), then ragdown_read_doc to read around a hit before relying on it."
        )


def _error(message: str, meta: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True, _meta=meta)


MAX_RESULT_BYTES = 512 * 1024  # about 128k tokens: more than any agent should take in at once


def capped(text: str, limit: int = MAX_RESULT_BYTES) -> str:
    """The text, or as many whole lines as fit in `limit` bytes and a note saying how to get the rest."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    head = data[:limit].decode("utf-8", errors="ignore")
    head = head[: head.rfind("\n")] if "\n" in head else head
    return (
        f"{head}\n… [cut: the result is {len(data):,} bytes, over the {limit:,}-byte limit of one tool "
        "result; ask for less (a line range with start_line/end_line, a smaller top_k or limit)]"
    )


def guarded(
    tool: Callable[..., str],
    admission: Admission,
    metrics: Metrics | None = None,
    folder: str | Callable[[dict[str, Any]], str] = "",
) -> Callable[..., Any]:
    """Refusals become `isError` results carrying their sentence; a full queue an "overloaded" one
    with its retry hint in words, in `_meta` and, over HTTP, as `Retry-After`; anything else is
    logged. Results are capped in size. `folder` (or a function of the call's arguments giving it)
    is whose share of the admission the call takes (serving/admission.py)."""

    def count(outcome: str) -> None:
        if metrics is not None:
            metrics.observe_tool(tool.__name__, outcome)
            if outcome == "overloaded":
                metrics.rejected()

    @functools.wraps(tool)
    async def run(*args: Any, **kwargs: Any) -> Any:
        # An argument named like a Python keyword (`from`) arrives under its alias.
        kwargs = {f"{k}_" if keyword.iskeyword(k) else k: v for k, v in kwargs.items()}
        tenant = folder if isinstance(folder, str) else folder(kwargs)
        try:
            # Waits for a slot on the event loop; only the tool itself takes a worker thread.
            text = await admission.run(lambda: capped(tool(*args, **kwargs)), tenant)
        except OverloadedError as error:
            count("overloaded")
            return _error(str(error), error.meta)
        except RagdownError as error:  # every refusal and outage: its own sentence (ragdown/errors.py)
            count("error")
            return _error(str(error))
        except OSError as error:  # a permission or a full disk: say so, without the server's paths
            count("error")
            log.warning("tool %s: %s", tool.__name__, error)
            reason = error.strerror or type(error).__name__
            said = f"{tool.__name__}: the server could not read or write a file ({reason})"
            if error.errno in (errno.EACCES, errno.EPERM):  # e.g. a host folder mounted into the image
                said += (
                    f"; it runs as user id {os.geteuid()}: give that user access to the folder's files "
                    "and its data directory"
                )
            return _error(said)
        except Exception:
            count("error")
            log.exception("tool %s failed", tool.__name__)
            return _error(f"{tool.__name__} failed unexpectedly; the server log has the details")
        count("ok")
        return text

    return run


def _session(value: str | None) -> str | None:
    return value or None  # an empty session_id counts as absent


ToolSet = list[tuple[Callable[..., str], ToolAnnotations]]


def forwarded(tool: Callable[..., str], forward: Forward, scope: Scope) -> Callable[..., str]:
    """`tool` as a reader serves it: executed by the primary, its answer (errors too) unchanged."""
    folder, _, sub = scope.dir.partition("/")

    @functools.wraps(tool)
    def run(**kwargs: Any) -> str:
        arguments = {
            k.removesuffix("_") if keyword.iskeyword(k.removesuffix("_")) else k: v for k, v in kwargs.items()
        }
        text, is_error = forward(tool.__name__, folder, sub, to_jsonable_python(arguments))
        if is_error:
            raise BadRequestError(text)
        return text

    return run


def build_server(endpoint: Endpoint) -> ToolServer:
    """A fresh MCP server for `endpoint`; every state it needs lives in the engine."""
    server = ToolServer(name=endpoint.name, title=endpoint.title, instructions=endpoint.instructions())
    for tool, hints in endpoint_tools(endpoint):
        if endpoint.enabled(tool.__name__):
            run = guarded(tool, endpoint.admission, endpoint.metrics, endpoint.folder)
            server.add_tool(run, annotations=hints, structured_output=False)
    return server


def endpoint_tools(endpoint: Endpoint) -> ToolSet:
    """The folder tools as this process runs them: on a reader the write tools go to the primary."""
    if endpoint.forward is None:
        return folder_tools(endpoint)
    forward = endpoint.forward
    return [
        (forwarded(tool, forward, endpoint.scope) if tool.__name__ in WRITE_TOOLS else tool, hints)
        for tool, hints in folder_tools(endpoint)
    ]


def tools_by_name(endpoint: Endpoint) -> dict[str, Callable[..., str]]:
    return {tool.__name__: tool for tool, _ in endpoint_tools(endpoint)}


def report_in_view(
    report: SyncReport, in_view: Callable[[str], bool], shown_as: Callable[[str], str]
) -> dict[str, Any]:
    """A sync report as one caller sees it: only the failed files it could look at, named as it
    names them (the counts are the whole index's). Another folder's file names are not its business."""
    data = report.model_dump()
    data["failed"] = [{"path": shown_as(f.path), "error": f.error} for f in report.failed if in_view(f.path)]
    return data


def stats_json(
    engine: Engine,
    entries: list[DocEntry],
    *,
    docs_dir: str | None,
    scope: str | None,
    local: bool,
    reader: bool,
    read_only: bool,
    in_view: Callable[[str], bool],
    shown_as: Callable[[str], str],
    include_files: bool = False,
) -> str:
    """`ragdown_stats`: counts of `entries` (the documents in view) and the index's state; with
    `include_files`, each document too. Paths are shown as `shown_as` gives them. Over HTTP (`local`
    false) `docs_dir` is the scope as a path inside the docs and `data_dir` is left out: a remote
    client has no use for the server's own paths."""
    last = engine.last_sync
    stats: dict[str, Any] = {
        "docs_dir": docs_dir,
        "data_dir": str(engine.data_dir) if local else None,
        "role": "reader" if reader else "primary",
        "embedder": engine.embedder.name,
        "read_only": read_only,
        "files": len(entries),
        "chunks": sum(e.chunks for e in entries),
        "syncing": None if reader else engine.syncing,
        "last_sync": report_in_view(last, in_view, shown_as) if last else None,
        "scope": scope,
    }
    if include_files:
        stats["file_list"] = [{"path": shown_as(e.path), "chunks": e.chunks} for e in entries]
    return compact(stats)


def folder_tools(endpoint: Endpoint) -> ToolSet:
    """The tools of one folder, subfolder or stdio endpoint, with their annotations."""
    engine, scope = endpoint.engine, endpoint.scope

    def ragdown_recall(
        query: Annotated[
            str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="what to search for")
        ],
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

        filters = SearchFilters(path_prefix=path_prefix, tag=tag, written_by=written_by)
        started = time.perf_counter()
        hits = engine.recall(query, top_k, filters, scope=scope)
        if endpoint.metrics is not None:
            endpoint.metrics.observe_search(endpoint.folder, "recall", time.perf_counter() - started)
        if format == "json":
            return compact({"hits": [hit_json(h) for h in hits]})
        limit = engine.settings.text_limit if max_chars is None else max_chars
        return hits_text(hits, limit)

    def ragdown_context(
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
        result = engine.context(
            prompt,
            session_id=_session(session_id),
            reset=reset,
            output=format,
            overrides=overrides,
            scope=scope,
            source=endpoint.source,
        )
        if endpoint.metrics is not None and result.searched:
            endpoint.metrics.observe_search(endpoint.folder, "context", time.perf_counter() - started)
            drops = Counter(result.dropped.values())
            endpoint.metrics.observe_hook(endpoint.folder, len(result.injected), drops)
        return result.text

    def ragdown_read_doc(
        path: Annotated[
            str, Field(min_length=1, description="a path, or a wikilink target like Note#Heading")
        ],
        start_line: Annotated[int | None, Field(ge=1)] = None,
        end_line: Annotated[int | None, Field(ge=1)] = None,
    ) -> str:
        """Read a document (or the lines start_line-end_line of it). The header line gives the range,
        the total and the hash to pass as base_hash when writing it."""
        read = engine.read(scope, path, start_line, end_line)
        if engine.query_log is not None:
            engine.query_log.read(scope.absolute(read.path), read.start, read.end)
        return f"{read.header()}\n{read.text}"

    def ragdown_list(
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
            engine.documents().values(),
            (scope.search_prefix(path_prefix),),
            tag=normalised_tag(SearchFilters(tag=tag)),
            written_by=written_by,
            session=_session(session_id),
            recent=sort == "recent",
        )
        return listing(entries, limit, lambda e: list_line(e, scope))

    def ragdown_stats(include_files: bool = False) -> str:
        """Index statistics for this folder: files, chunks, embedder, last sync."""
        entries = [e for e in engine.documents().values() if scope.contains(e.path)]
        local = str(engine.docs_dir / scope.dir) if scope.dir else str(engine.docs_dir)
        return stats_json(
            engine,
            entries,
            docs_dir=local if endpoint.local else scope.dir,
            scope=scope.dir or None,
            local=endpoint.local,
            reader=endpoint.forward is not None,
            read_only=endpoint.read_only,
            in_view=scope.contains,
            shown_as=scope.relative,
            include_files=include_files,
        )

    def ragdown_reindex(full: bool = False) -> str:
        """Sync the index with the files now (full: re-embed everything, at most every ten minutes)."""
        if full:
            engine.claim_full_reindex()
        return compact(report_in_view(engine.sync(full=full), scope.contains, scope.relative))

    @functools.cache
    def place() -> Place:
        from ragdown.editing import Place

        return Place(engine, scope)

    def ragdown_backlinks(path: Annotated[str, Field(min_length=1)]) -> str:
        """The documents that link to `path` (wikilinks, aliases, relative links), with the lines."""
        from ragdown.editing import backlinks_of

        return compact(backlinks_of(place(), path))

    def ragdown_remember(
        title: Annotated[str, Field(min_length=1)],
        content: Annotated[str, Field(min_length=1)],
        tags: Strings | None = None,
        name: str | None = None,
        supersedes: Strings | None = None,
        session_id: str | None = None,
    ) -> str:
        """Save a new note (a decision, a finding, a summary) under the folder's notes directory.
        It never overwrites: a taken name gets -2, -3. `supersedes` hides older notes from search."""
        from ragdown.editing import remember_note

        return remember_note(
            place(),
            title=title,
            content=content,
            tags=tags or [],
            name=name or None,
            supersedes=supersedes or [],
            session_id=_session(session_id),
            caller=CALLER.get(),
        )

    def ragdown_write(
        path: Annotated[str, Field(min_length=1)],
        text: Annotated[str, Field(min_length=1)],
        base_hash: str | None = None,
        append: bool = False,
        heading: str | None = None,
        session_id: str | None = None,
    ) -> str:
        """Create a document, replace one (pass base_hash from ragdown_read_doc: a person's edit is
        never overwritten), or append to it (under `heading` if given)."""
        from ragdown.editing import write

        return write(
            place(),
            path,
            text,
            base_hash=base_hash,
            append=append,
            heading=heading,
            session_id=_session(session_id),
            caller=CALLER.get(),
        )

    def ragdown_edit(
        path: Annotated[str, Field(min_length=1)],
        edits: Annotated[list[EditArgument], ONE_OR_MANY, Field(min_length=1)],
        base_hash: str | None = None,
    ) -> str:
        """Replace exact passages (all edits or none). Copy old_text from ragdown_read_doc exactly;
        a passage found more than once needs more context or replace_all: true."""
        from ragdown.editing import edit

        changes = [Edit(e.old_text, e.new_text, e.replace_all) for e in edits]
        return edit(place(), path, changes, base_hash, caller=CALLER.get())

    def ragdown_move(
        from_: Annotated[str, Field(min_length=1, alias="from")],
        to: Annotated[str, Field(min_length=1)],
    ) -> str:
        """Move or rename a document or subfolder; every link that pointed at it is rewritten."""
        from ragdown.editing import move_document

        return move_document(place(), from_, to)

    def ragdown_delete(
        path: Annotated[str, Field(min_length=1)],
        recursive: bool = False,
        base_hash: str | None = None,
    ) -> str:
        """Delete a document (or a subfolder with recursive: true)."""
        from ragdown.editing import delete

        return delete(place(), path, recursive=recursive, base_hash=base_hash)

    return [
        (ragdown_context, READ),
        (ragdown_recall, READ),
        (ragdown_read_doc, READ),
        (ragdown_list, READ),
        (ragdown_stats, READ),
        (ragdown_backlinks, READ),
        (ragdown_remember, WRITE),
        (ragdown_write, WRITE),
        (ragdown_edit, WRITE),
        (ragdown_move, DESTRUCTIVE),
        (ragdown_delete, DESTRUCTIVE),
        (ragdown_reindex, IDEMPOTENT),
    ]
