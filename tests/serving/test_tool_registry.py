"""Each MCP tool defined once (serving/tool_registry.py): folder endpoints and root `/mcp` list the same
definition; the registered folder tools are the ones folder settings may name (folders/manage.py);
and the one `ragdown_context` counts and remembers by where it runs (docs/hook.md, docs/cluster.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

import pytest
from mcp_types import Tool

from ragdown.engine import Engine
from ragdown.folders.manage import FOLDER_TOOLS, FOLDER_WRITE_TOOLS
from ragdown.folders.scope import Scope
from ragdown.serving.auth import ADMIN
from ragdown.serving.folder_tools import TOOLS
from ragdown.serving.metrics import Metrics
from ragdown.serving.root import FOLDER_NOTE, RootEndpoint, build_root_server
from ragdown.serving.root_tools import ROOT_TOOLS
from ragdown.serving.tool_server import ToolServer, describe
from ragdown.serving.tools import WRITE_TOOLS, Endpoint, build_server
from tests.serving.conftest import ADMIN_TOKEN, Served

pytestmark = pytest.mark.anyio

NO_ENGINE = cast("Engine", None)  # listing tools never reaches the engine
PROMPT = {"prompt": "redis eviction policy", "session_id": "one-session"}


async def listed(server: ToolServer) -> dict[str, Tool]:
    return {tool.name: tool for tool in await server.list_tools()}


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_folder_and_root_endpoints_list_one_definition_per_tool() -> None:
    folder = await listed(build_server(Endpoint(engine=NO_ENGINE, scope=Scope("ops"), name="o", title="O")))
    root = await listed(build_root_server(RootEndpoint(NO_ENGINE)))
    assert list(folder) == list(TOOLS.names())
    assert list(root) == [*TOOLS.names(), *ROOT_TOOLS.names()]
    for name, tool in folder.items():
        on_root = root[name]
        assert on_root.annotations == tool.annotations == TOOLS[name].hints
        assert tool.description == describe(TOOLS[name].fn.__doc__)
        if TOOLS[name].on_root == "whole":  # no folder to name: the very same tool
            assert on_root == tool
            continue
        properties = dict(on_root.input_schema["properties"])
        folder_argument = properties.pop("folder")
        assert folder_argument == {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "default": None,
            "title": "Folder",
        }
        assert {**on_root.input_schema, "properties": properties} == tool.input_schema
        assert on_root.description == describe(tool.description + FOLDER_NOTE)


def test_the_registered_folder_tools_are_the_ones_folder_settings_name() -> None:
    """folders/ sits below serving/, so the names it validates against are checked here."""
    assert set(TOOLS.names()) == set(FOLDER_TOOLS)
    assert {tool.name for tool in TOOLS if tool.writes} == set(FOLDER_WRITE_TOOLS)
    assert {*FOLDER_WRITE_TOOLS, "ragdown_create_folder"} == WRITE_TOOLS


async def test_disabled_tools_hide_the_roots_own_tools_too() -> None:
    root = RootEndpoint(NO_ENGINE, disabled=frozenset({"ragdown_folders", "ragdown_recall"}))
    names = set(await listed(build_root_server(root)))
    assert names.isdisjoint({"ragdown_folders", "ragdown_recall"})
    assert "ragdown_create_folder" in names


async def test_root_stats_on_a_reader_say_so(served: Served) -> None:
    """The same stats tool on every endpoint: a reader's root answers as a reader (no sync of its own)."""
    reader = RootEndpoint(served.engine, forward=lambda *call: ("", False))
    stats = json.loads(text_of(await build_root_server(reader).call_tool("ragdown_stats", {})))
    shown = (stats["role"], stats["syncing"], stats["docs_dir"], stats["scope"])
    assert shown == ("reader", None, None, None)


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


async def test_context_remembers_and_counts_by_where_it_runs(make_served: Callable[..., Served]) -> None:
    """A root call naming a folder runs as on `/mcp/<folder>`: that folder's session memory, and its
    search and hook counted under that folder. A root call naming none keeps a memory of its own per
    caller kind and, covering several folders, counts only as a tool call."""
    served = make_served(root_mcp=True)
    metrics = served.app.mcp.metrics = Metrics()
    async with served.mcp("/mcp/ops") as folder:
        first = text_of(await folder.call_tool("ragdown_context", PROMPT))
    async with served.mcp("/mcp") as root:
        named = text_of(await root.call_tool("ragdown_context", {**PROMPT, "folder": "ops"}))
        everywhere = text_of(await root.call_tool("ragdown_context", PROMPT))
    async with served.mcp("/mcp", token=ADMIN_TOKEN) as admin:
        other_caller = text_of(await admin.call_tool("ragdown_context", PROMPT))
    assert "cache.md" in first
    assert named == ""  # the folder's memory: everything was given to this session already
    assert "ops/cache.md" in everywhere  # the root's memory of the agents' token is its own
    assert "ops/cache.md" in other_caller  # and the admin's is another
    assert sample(metrics, "ragdown_tool_calls_total", tool="ragdown_context", outcome="ok") == 4
    assert sample(metrics, "ragdown_hook_calls_total", folder="ops") == 2
    assert sample(metrics, "ragdown_hook_injections_total", folder="ops") == 1
    assert sample(metrics, "ragdown_search_seconds_count", folder="ops", kind="context") == 2
    folders = {s.labels.get("folder") for f in metrics.registry.collect() for s in f.samples}
    assert folders <= {None, "ops"}  # no series for a call over several folders


async def test_a_forwarded_root_call_is_counted_once(make_served: Callable[..., Served]) -> None:
    """The reader that an agent called counts it; the primary running it for the reader does not."""
    served = make_served(root_mcp=True)
    metrics = served.app.mcp.metrics = Metrics()
    routes = served.app.mcp
    assert routes.root_server(ADMIN, counted=False) is not routes.root_server(ADMIN)
    await routes.root_server(ADMIN, counted=False).call_tool("ragdown_reindex", {})
    assert sample(metrics, "ragdown_tool_calls_total", tool="ragdown_reindex", outcome="ok") == 0
    await routes.root_server(ADMIN).call_tool("ragdown_reindex", {})
    assert sample(metrics, "ragdown_tool_calls_total", tool="ragdown_reindex", outcome="ok") == 1
