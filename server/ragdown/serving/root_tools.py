"""The tools only root `/mcp` has (docs/tools.md#root-mcp): list the MCP folders, create one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Protocol

from pydantic import Field

from ragdown.folders.manage import create_folder
from ragdown.folders.registry import Folder
from ragdown.serving.tool_registry import READ, WRITE, ToolRegistry

if TYPE_CHECKING:  # the engine's stack is imported only when a folder is served (tests/test_start_up.py)
    from ragdown.engine import Engine


class AtRoot(Protocol):
    """What these tools need of root `/mcp` (serving/root.py's `RootEndpoint` has it), named here so
    this module does not import the one that registers it."""

    @property
    def engine(self) -> Engine: ...

    def folders(self, tool: str | None = None) -> list[Folder]: ...


ROOT_TOOLS = ToolRegistry()


@ROOT_TOOLS.tool(READ, on_root="whole")
def ragdown_folders(at: AtRoot) -> str:
    """The folders with MCP turned on: name, title and how many documents each holds."""
    folders = at.folders()
    if not folders:
        return "No folders with MCP turned on."
    entries = at.engine.documents()
    lines = []
    for f in folders:
        count = sum(1 for p in entries if p.startswith(f.name + "/"))
        lines.append(f"{f.name} — {f.title} ({count} documents)")
    return "\n".join(lines)


@ROOT_TOOLS.tool(WRITE, on_root="whole")
def ragdown_create_folder(
    at: AtRoot, name: Annotated[str, Field(min_length=1)], title: str | None = None
) -> str:
    """Create a new folder with MCP turned on (for notes of a new project or team)."""
    create_folder(at.engine.docs_dir, name, {"title": title, "mcp": True}, created_by="ragdown_create_folder")
    return f"created folder {name} (/mcp/{name})"
