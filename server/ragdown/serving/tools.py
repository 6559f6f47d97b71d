"""The MCP tools of one endpoint (a folder, a subfolder, or the stdio folder), over the engine.

Each tool parses its arguments, calls the engine or a document operation, and formats; a refusal
becomes a tool result with `isError` and the refusal's own sentence, never a transport error.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ragdown.catalog import documents, list_line, read_document
from ragdown.documents.errors import Refusal
from ragdown.engine import Engine
from ragdown.folders.scope import Scope, ScopeError
from ragdown.search.filters import FilterError, SearchFilters, normalised_tag
from ragdown.serving.formats import compact, hit_json, hits_text

log = logging.getLogger(__name__)

WRITE_TOOLS = frozenset(
    {
        "ragdown_remember",
        "ragdown_write",
        "ragdown_edit",
        "ragdown_move",
        "ragdown_delete",
        "ragdown_reindex",
        "ragdown_create_folder",
    }
)
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


@dataclass
class Endpoint:
    """What one MCP server answers for: its scope and the server-wide switches."""

    engine: Engine
    scope: Scope
    name: str
    title: str
    read_only: bool = False
    disabled: frozenset[str] = field(default_factory=frozenset)

    def enabled(self, tool: str) -> bool:
        return tool not in self.disabled and not (self.read_only and tool in WRITE_TOOLS)

    def instructions(self) -> str:
        return (
            f'Search the "{self.title}" folder of the user\'s Markdown documents. Call ragdown_recall '
            "before answering a question the documents might cover (notes, runbooks, decisions, "
            "how-tos), then ragdown_read_doc to read around a hit before relying on it."
        )


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def guarded(tool: Callable[..., str]) -> Callable[..., Any]:
    """Refusals become `isError` results carrying their sentence; anything else is logged."""

    @functools.wraps(tool)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except (Refusal, ScopeError, FilterError) as error:
            return _error(str(error))
        except Exception:
            log.exception("tool %s failed", tool.__name__)
            return _error(f"{tool.__name__} failed unexpectedly; the server log has the details")

    return run


def _session(value: str | None) -> str | None:
    return value or None  # an empty session_id counts as absent


def build_server(endpoint: Endpoint) -> MCPServer:
    """A fresh MCP server for `endpoint`; every state it needs lives in the engine."""
    engine, scope = endpoint.engine, endpoint.scope
    server = MCPServer(name=endpoint.name, title=endpoint.title, instructions=endpoint.instructions())

    def register(tool: Callable[..., str], annotations: ToolAnnotations) -> None:
        if endpoint.enabled(tool.__name__):
            server.add_tool(guarded(tool), annotations=annotations, structured_output=False)

    def ragdown_recall(
        query: Annotated[str, Field(min_length=1, description="what to search for")],
        top_k: Annotated[int, Field(ge=1, le=50)] = 8,
        path_prefix: str = "",
        tag: str = "",
        written_by: WrittenBy | None = None,
        format: Literal["text", "json"] = "text",
        max_chars: Annotated[int | None, Field(ge=0)] = None,
    ) -> str:
        """Search the documents (BM25 + embeddings) and return the best sections, each with its path
        and line range. Use ragdown_read_doc to read around a hit."""
        filters = SearchFilters(path_prefix=path_prefix, tag=tag, written_by=written_by)
        hits = engine.recall(query, top_k, filters, scope=scope)
        if format == "json":
            return compact({"hits": [hit_json(h) for h in hits]})
        limit = engine.settings.text_limit if max_chars is None else max_chars
        return hits_text(hits, limit)

    def ragdown_context(
        prompt: str = "",
        session_id: str | None = None,
        reset: bool = False,
        format: Literal["text", "claude-code"] = "text",
        top_k: Annotated[int | None, Field(ge=1, le=50)] = None,
        min_score: Annotated[float | None, Field(ge=0, le=1)] = None,
        min_ratio: Annotated[float | None, Field(ge=0, le=1)] = None,
        max_chars: Annotated[int | None, Field(ge=1)] = None,
    ) -> str:
        """For prompt hooks: the sections related to a prompt as a <ragdown-context> block, or empty
        text. Never repeats a section for the same session_id until reset: true."""
        overrides = {
            key: value
            for key, value in (
                ("top_k", top_k),
                ("min_score", min_score),
                ("min_ratio", min_ratio),
                ("max_chars", max_chars),
            )
            if value is not None
        }
        result = engine.context(
            prompt,
            session_id=_session(session_id),
            reset=reset,
            output=format,
            overrides=overrides,
            scope=scope,
        )
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
        read = read_document(
            engine.docs_dir, engine.store, scope, path, start_line, end_line, folders_mode=engine.folders_mode
        )
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
        prefix = scope.search_prefix(path_prefix)
        session = _session(session_id)
        wanted = normalised_tag(SearchFilters(tag=tag))
        entries = [
            e
            for e in documents(engine.store).values()
            if e.path.startswith(prefix)
            and (wanted is None or any(t == wanted or t.startswith(wanted + "/") for t in e.tags))
            and (written_by is None or (written_by == "agent") == bool(e.created_by))
            and (session is None or e.session == session)
        ]
        if sort == "recent":
            entries.sort(key=lambda e: e.mtime_ms, reverse=True)
        if not entries:
            return "No documents."
        shown = entries[:limit]
        header = (
            f"documents: {len(entries)}"
            if len(shown) == len(entries)
            else f"documents: {len(shown)} of {len(entries)}"
        )
        return "\n".join([header, *(list_line(e, scope) for e in shown)])

    def ragdown_stats(include_files: bool = False) -> str:
        """Index statistics for this folder: files, chunks, embedder, last sync."""
        entries = [e for e in documents(engine.store).values() if scope.contains(e.path)]
        last = engine.syncer.last_sync
        stats: dict[str, Any] = {
            "docs_dir": str(engine.docs_dir / scope.dir) if scope.dir else str(engine.docs_dir),
            "data_dir": str(engine.data_dir),
            "role": "primary",
            "embedder": engine.embedder.name,
            "read_only": endpoint.read_only,
            "files": len(entries),
            "chunks": sum(e.chunks for e in entries),
            "syncing": engine.syncer.syncing,
            "last_sync": last.model_dump() if last else None,
            "scope": scope.dir or None,
        }
        if include_files:
            stats["file_list"] = [{"path": scope.relative(e.path), "chunks": e.chunks} for e in entries]
        return compact(stats)

    def ragdown_reindex(full: bool = False) -> str:
        """Sync the index with the files now (full: re-embed everything)."""
        return compact(engine.sync(full=full).model_dump())

    register(ragdown_context, READ)
    register(ragdown_recall, READ)
    register(ragdown_read_doc, READ)
    register(ragdown_list, READ)
    register(ragdown_stats, READ)
    register(ragdown_reindex, IDEMPOTENT)
    return server
