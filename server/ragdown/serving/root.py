"""Root `/mcp` (docs/tools.md#root-mcp, with `RAGDOWN_ROOT_MCP`): one server over every folder with MCP on.

It lists the folder tools, each as defined once (serving/folder_tools.py) plus an optional `folder`,
and the root's own (serving/root_tools.py). A call naming a folder runs as on `/mcp/<folder>`; one
naming none runs at the `RootEndpoint` itself, which covers every MCP folder the caller reaches and
marks each line or hit `[<folder>] `. Tools that act on one document need a folder.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragdown.documents.paths import shown
from ragdown.engine import Engine
from ragdown.errors import BadRequestError, ForbiddenError, NotFoundError, Refusal
from ragdown.folders.registry import Folder, list_folders, read_folder
from ragdown.folders.scope import Scope
from ragdown.scoped_changes import Place
from ragdown.serving.admission import Admission
from ragdown.serving.auth import OWN_TOKENS_ONLY
from ragdown.serving.folder_tools import TOOLS
from ragdown.serving.metrics import Metrics
from ragdown.serving.reach import Forward
from ragdown.serving.root_tools import ROOT_TOOLS
from ragdown.serving.tool_registry import ToolDefinition, ToolFunction
from ragdown.serving.tool_server import ToolServer
from ragdown.serving.tools import Endpoint, guarded, run_at

INSTRUCTIONS = (
    "Search the user's Markdown folders (ragdown_folders lists them). Call ragdown_recall before "
    "answering a question the documents might cover, then ragdown_read_doc (with its folder) to read "
    "around a hit before relying on it."
)
FOLDER_NOTE = "\n\n`folder`: which folder (see ragdown_folders)."


@dataclass
class RootEndpoint:
    """Root `/mcp` for one kind of caller, and where a call naming no folder runs (serving/reach.py)."""

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
    # The agents' token: told that a folder takes its own tokens only, as on /mcp/<folder>.
    agents_token: bool = False
    # Counts every call (docs/cluster.md#server-metrics); a call naming a folder counts its search there.
    metrics: Metrics | None = None

    def folders(self, tool: str | None = None) -> list[Folder]:
        """The MCP folders this caller reaches (and, with `tool`, that have not turned it off)."""
        return [
            f
            for f in list_folders(self.engine.docs_dir)
            if f.mcp and self.reaches(f) and (tool is None or tool not in f.disabled_tools)
        ]

    def _own_tokens_only(self, found: Folder) -> bool:
        """The rule of McpRoutes._own_tokens_only: the agents' token, reaching some folder, names
        one with tokens of its own (docs/security.md#tenants)."""
        return self.agents_token and bool(found.token_digests) and bool(self.folders())

    def endpoint(self, name: str) -> Endpoint:
        """The folder `name` as its own `/mcp/<name>` serves it, with its own switches added."""
        found = read_folder(self.engine.docs_dir, name)
        if found is not None and found.mcp and not self.reaches(found) and self._own_tokens_only(found):
            raise ForbiddenError(OWN_TOKENS_ONLY)
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
            metrics=self.metrics,
        )

    def enabled(self, tool: ToolDefinition) -> bool:
        if tool.name in self.disabled or (self.read_only and tool.writes):
            return False
        return self.can_create or tool.name != "ragdown_create_folder"

    def tenant(self, arguments: dict[str, Any]) -> str:
        """Whose admission share a root call takes: the folder it names, else the caller's own."""
        named = arguments.get("folder")
        return named if isinstance(named, str) and named else f"/{self.caller}"

    def names(self) -> str:
        return ", ".join(f.name for f in self.folders()) or "(none: create one with ragdown_create_folder)"

    def folder_required(self) -> Refusal:
        return BadRequestError(f"folder is required: one of {self.names()}")

    # Where a call naming no folder runs (serving/reach.py): every folder the caller reaches, paths
    # from the docs dir, hits and lines marked with their folder, a hook memory per caller kind.
    @property
    def scope(self) -> Scope:
        return Scope()

    @property
    def local(self) -> bool:
        return False

    @property
    def source(self) -> str:
        return "/mcp"

    @property
    def forward_to(self) -> tuple[str | None, str]:
        return None, ""

    @property
    def counts(self) -> Metrics | None:
        return None  # no one folder to count a search over several under (its tool call counts)

    @property
    def counted_as(self) -> str:
        return ""

    def within(self, tool: str) -> tuple[str, ...] | None:
        return self.prefixes(tool)

    def prefixes(self, tool: str | None = None, path_prefix: str = "") -> tuple[str, ...]:
        return tuple(Scope(f.name).search_prefix(path_prefix) for f in self.folders(tool))

    def split(self, path: str) -> tuple[str | None, Scope]:
        folder = path.split("/", 1)[0]
        return folder, Scope(folder)

    def place(self) -> Place:
        raise self.folder_required()


def root_tool(root: RootEndpoint, tool: ToolDefinition) -> ToolFunction:
    """`tool` on root `/mcp`: with a `folder`, run as on `/mcp/<folder>`; without, at the root."""
    if tool.on_root == "whole":
        return run_at(tool, root)

    def run(folder: str | None = None, **arguments: Any) -> str:
        if folder:
            endpoint = root.endpoint(folder)
            if not endpoint.enabled(tool.name):
                raise ForbiddenError(f"{tool.name} is turned off for folder {folder}")
            return run_at(tool, endpoint)(**arguments)
        if tool.on_root == "folder":
            raise root.folder_required()
        return run_at(tool, root)(**arguments)

    named = inspect.Parameter("folder", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=str | None)
    signature = tool.arguments.replace(parameters=[*tool.arguments.parameters.values(), named])
    return tool.named(run, signature, FOLDER_NOTE)


def build_root_server(root: RootEndpoint) -> ToolServer:
    server = ToolServer(name="ragdown", title="ragdown", instructions=INSTRUCTIONS)
    for tool in (*TOOLS, *ROOT_TOOLS):
        if root.enabled(tool):
            run = guarded(root_tool(root, tool), root.admission, root.metrics, folder=root.tenant)
            server.add_tool(run, annotations=tool.hints, structured_output=False)
    return server
