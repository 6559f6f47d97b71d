"""Root `/mcp` (docs/tools.md#root-mcp, with `RAGDOWN_ROOT_MCP`): one server over every folder with MCP on.

Each folder tool takes `folder`. Tools that act on one document need it; searches, lists, the hook
and stats cover every MCP folder without it, each line or hit marked `[<folder>] `.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field

from ragdown.bounds import HookOverrides, MaxChars, MinRatio, MinScore, TopK
from ragdown.catalog import DocEntry, list_line, listing, select
from ragdown.documents.paths import shown
from ragdown.engine import Engine
from ragdown.errors import BadRequestError, ForbiddenError, NotFoundError
from ragdown.folders.manage import create_folder
from ragdown.folders.registry import Folder, list_folders, read_folder
from ragdown.folders.scope import Scope
from ragdown.search.filters import SearchFilters, normalised_tag
from ragdown.search.format import format_hit
from ragdown.serving.admission import Admission
from ragdown.serving.formats import NO_MATCHES, compact, hit_json
from ragdown.serving.tool_server import ToolServer
from ragdown.serving.tools import (
    READ,
    WRITE,
    Endpoint,
    Forward,
    WrittenBy,
    folder_tools,
    guarded,
    report_in_view,
    stats_json,
    tools_by_name,
)

# Tools only the root endpoint has: a reader forwards them to the primary's root server.
ROOT_ONLY_TOOLS = frozenset({"ragdown_create_folder"})
NEEDS_FOLDER = frozenset(
    {
        "ragdown_read_doc",
        "ragdown_backlinks",
        "ragdown_remember",
        "ragdown_write",
        "ragdown_edit",
        "ragdown_move",
        "ragdown_delete",
    }
)


@dataclass
class RootEndpoint:
    engine: Engine
    read_only: bool = False
    disabled: frozenset[str] = field(default_factory=frozenset)
    admission: Admission = field(default_factory=Admission)
    # On a reader: the primary runs the writes, as for a folder endpoint (tools.Endpoint.forward).
    forward: Forward | None = None
    # Which folders the caller's token reaches (serving/auth.py); the others are as if missing.
    reaches: Callable[[Folder], bool] = lambda _folder: True
    # A folder's own token reaches that folder only: it makes no new ones.
    can_create: bool = True
    # The caller kind (serving/auth.py): the root hook's session memory is its own per kind.
    caller: str = ""

    def folders(self, tool: str | None = None) -> list[Folder]:
        """The MCP folders this caller reaches (and, with `tool`, that have not turned it off)."""
        return [
            f
            for f in list_folders(self.engine.docs_dir)
            if f.mcp and self.reaches(f) and (tool is None or tool not in f.disabled_tools)
        ]

    def folder(self, name: str) -> Endpoint:
        found = read_folder(self.engine.docs_dir, name)
        if found is None or not found.mcp or not self.reaches(found):
            raise NotFoundError(f'no folder with MCP turned on named "{shown(name)}"')
        return Endpoint(
            engine=self.engine,
            scope=Scope(name),
            name=f"ragdown-{name}",
            title=found.title,
            read_only=self.read_only or found.read_only,
            disabled=self.disabled | found.disabled_tools,
            admission=self.admission,
            forward=self.forward,
        )

    def within(self, tool: str | None = None) -> tuple[str, ...]:
        return tuple(f"{f.name}/" for f in self.folders(tool))


def _with_folder(tool: Callable[..., str], run: Callable[..., str]) -> Callable[..., str]:
    """`run` under `tool`'s name, docstring and arguments, plus an optional `folder`."""
    signature = inspect.signature(tool, eval_str=True)  # real types: the tools' annotations are strings
    folder = inspect.Parameter("folder", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=str | None)
    run.__name__ = tool.__name__
    run.__doc__ = (tool.__doc__ or "") + "\n\n`folder`: which folder (see ragdown_folders)."
    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in signature.parameters.values()]
        + [folder]
    )
    run.__annotations__ = {
        **{name: p.annotation for name, p in signature.parameters.items()},
        "folder": str | None,
        "return": str,
    }
    return run


def build_root_server(root: RootEndpoint) -> ToolServer:
    engine = root.engine
    server = ToolServer(
        name="ragdown",
        title="ragdown",
        instructions="Search the user's Markdown folders (ragdown_folders lists them). Call ragdown_recall "
        "before answering a question the documents might cover, then ragdown_read_doc (with its folder) "
        "to read around a hit before relying on it.",
    )
    template = Endpoint(engine=engine, scope=Scope(), name="ragdown", title="ragdown")

    def tenant(arguments: dict[str, Any]) -> str:
        """Whose admission share a root call takes: the folder it names, else the caller's own."""
        named = arguments.get("folder")
        return named if isinstance(named, str) and named else f"/{root.caller}"

    def in_folders(path: str) -> bool:
        """A path in a folder this caller reaches."""
        return path.startswith(root.within())

    def names() -> str:
        return ", ".join(f.name for f in root.folders()) or "(none: create one with ragdown_create_folder)"

    def everywhere(name: str, kwargs: dict[str, Any]) -> str:
        if name in NEEDS_FOLDER:
            raise BadRequestError(f"folder is required: one of {names()}")
        if name == "ragdown_recall":
            return recall_all(**kwargs)
        if name == "ragdown_list":
            return list_all(**kwargs)
        if name == "ragdown_context":
            return context_all(**kwargs)
        if name == "ragdown_stats":
            return stats_all(**kwargs)
        if name == "ragdown_reindex":
            if root.forward is not None:
                text, is_error = root.forward(name, None, "", kwargs)
                if is_error:
                    raise BadRequestError(text)
                return text
            if kwargs.get("full"):
                engine.claim_full_reindex()
            report = engine.sync(full=bool(kwargs.get("full")))
            return compact(report_in_view(report, in_folders, lambda path: path))
        raise BadRequestError(f"{name} needs a folder: one of {names()}")

    def recall_all(
        query: str,
        top_k: int = 8,
        path_prefix: str = "",
        tag: str = "",
        written_by: WrittenBy | None = None,
        format: Literal["text", "json"] = "text",
        max_chars: int | None = None,
    ) -> str:
        within = root.within("ragdown_recall")
        filters = SearchFilters(path_prefix=path_prefix, tag=tag, written_by=written_by, within=within)
        hits = engine.recall(query, top_k, filters)
        split = [(h.path.split("/", 1)[0], h) for h in hits]
        if format == "json":
            out = []
            for folder, hit in split:
                data = hit_json(hit)
                data["path"] = Scope(folder).relative(hit.path)
                out.append({"folder": folder, **data})
            return compact({"hits": out})
        if not hits:
            return NO_MATCHES
        limit = engine.settings.text_limit if max_chars is None else max_chars
        blocks = []
        for n, (folder, hit) in enumerate(split, start=1):
            local = type(hit)(**{**hit.__dict__, "path": Scope(folder).relative(hit.path)})
            blocks.append(f"[{n}] [{folder}] {format_hit(local, limit)}")
        return "\n\n".join(blocks)

    def list_all(
        path_prefix: str = "",
        tag: str = "",
        written_by: WrittenBy | None = None,
        session_id: str | None = None,
        sort: Literal["path", "recent"] = "path",
        limit: int = 100,
    ) -> str:
        folders = root.folders("ragdown_list")
        entries = select(
            engine.documents().values(),
            tuple(Scope(f.name).search_prefix(path_prefix) for f in folders),
            tag=normalised_tag(SearchFilters(tag=tag)),
            written_by=written_by,
            session=session_id or None,
            recent=sort == "recent",  # across folders, not folder by folder
        )

        def line(entry: DocEntry) -> str:
            folder = entry.path.split("/", 1)[0]
            return f"[{folder}] {list_line(entry, Scope(folder))}"

        return listing(entries, limit, line)

    def context_all(
        prompt: str = "",
        session_id: str | None = None,
        reset: bool = False,
        format: Literal["text", "claude-code"] = "text",
        top_k: TopK | None = None,
        min_score: MinScore | None = None,
        min_ratio: MinRatio | None = None,
        max_chars: MaxChars | None = None,
    ) -> str:
        overrides = HookOverrides(
            top_k=top_k, min_score=min_score, min_ratio=min_ratio, max_chars=max_chars
        ).given()
        result = engine.context(
            prompt,
            session_id=session_id or None,
            reset=reset,
            output=format,
            overrides=overrides,
            within=root.within("ragdown_context"),
            source="/mcp",
            caller=root.caller,
        )
        return result.text

    def stats_all(include_files: bool = False) -> str:
        inside = root.within("ragdown_stats")
        entries = [e for e in engine.documents().values() if e.path.startswith(inside)] if inside else []
        return stats_json(
            engine,
            entries,
            docs_dir=None,
            scope=None,
            local=False,
            reader=False,
            read_only=root.read_only,
            in_view=in_folders,
            shown_as=lambda path: path,
            include_files=include_files,
        )

    def make(tool: Callable[..., str]) -> Callable[..., str]:
        def run(**kwargs: Any) -> str:
            folder = kwargs.pop("folder", None)
            if folder:
                endpoint = root.folder(folder)
                if not endpoint.enabled(tool.__name__):
                    raise ForbiddenError(f"{tool.__name__} is turned off for folder {folder}")
                return tools_by_name(endpoint)[tool.__name__](**kwargs)
            return everywhere(tool.__name__, kwargs)

        return _with_folder(tool, run)

    for tool, hints in folder_tools(template):
        if tool.__name__ in root.disabled or (
            root.read_only and hints is not READ and tool.__name__ != "ragdown_context"
        ):
            continue
        wrapped = make(tool)
        if tool.__name__ == "ragdown_reindex":
            wrapped = tool_without_folder(tool, lambda **kw: everywhere("ragdown_reindex", kw))
        server.add_tool(
            guarded(wrapped, root.admission, folder=tenant), annotations=hints, structured_output=False
        )

    def ragdown_folders() -> str:
        """The folders with MCP turned on: name, title and how many documents each holds."""
        folders = root.folders()
        if not folders:
            return "No folders with MCP turned on."
        entries = engine.documents()
        lines = []
        for f in folders:
            count = sum(1 for p in entries if p.startswith(f.name + "/"))
            lines.append(f"{f.name} — {f.title} ({count} documents)")
        return "\n".join(lines)

    def ragdown_create_folder(name: Annotated[str, Field(min_length=1)], title: str | None = None) -> str:
        """Create a new folder with MCP turned on (for notes of a new project or team)."""
        if root.forward is not None:  # a reader: the primary creates it, as it runs every write
            text, is_error = root.forward("ragdown_create_folder", None, "", {"name": name, "title": title})
            if is_error:
                raise BadRequestError(text)
            return text
        create_folder(
            engine.docs_dir, name, {"title": title, "mcp": True}, created_by="ragdown_create_folder"
        )
        return f"created folder {name} (/mcp/{name})"

    server.add_tool(
        guarded(ragdown_folders, root.admission, folder=tenant), annotations=READ, structured_output=False
    )
    if root.can_create and not root.read_only and "ragdown_create_folder" not in root.disabled:
        server.add_tool(
            guarded(ragdown_create_folder, root.admission, folder=tenant),
            annotations=WRITE,
            structured_output=False,
        )
    return server


def tool_without_folder(tool: Callable[..., str], run: Callable[..., str]) -> Callable[..., str]:
    run.__name__ = tool.__name__
    run.__doc__ = tool.__doc__
    signature = inspect.signature(tool, eval_str=True)
    run.__signature__ = signature  # type: ignore[attr-defined]
    run.__annotations__ = {name: p.annotation for name, p in signature.parameters.items()}
    return run
