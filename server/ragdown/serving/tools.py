"""One folder endpoint's MCP server (a folder, a sub-folder, or the stdio folder), and how every
endpoint runs a tool call (docs/tools.md#calls-errors-and-limits).

The tools themselves are registered once (serving/folder_tools.py, serving/root_tools.py); here
they are bound to an endpoint, sent to the primary on a reader, and guarded: a refusal becomes a
tool result with `isError` and the refusal's own sentence, never a transport error.
"""

from __future__ import annotations

import errno
import functools
import keyword
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic_core import to_jsonable_python

from ragdown.errors import BadRequestError, OverloadedError, RagdownError
from ragdown.folders.scope import Scope
from ragdown.serving.admission import Admission
from ragdown.serving.folder_tools import TOOLS
from ragdown.serving.metrics import Metrics
from ragdown.serving.reach import Forward, Reach
from ragdown.serving.root_tools import ROOT_TOOLS
from ragdown.serving.stdio_handshake import folder_instructions
from ragdown.serving.tool_registry import ToolDefinition, ToolFunction
from ragdown.serving.tool_server import ToolServer

# The engine's stack is imported by the tools when they first run (serving/folder_tools.py).
if TYPE_CHECKING:
    from ragdown.engine import Engine
    from ragdown.scoped_changes import Place

log = logging.getLogger(__name__)

# The tools a read-only endpoint hides and a reader sends to the primary.
WRITE_TOOLS = frozenset(tool.name for tool in (*TOOLS, *ROOT_TOOLS) if tool.writes)


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

    # What the tools ask of where they run (serving/reach.py): one scope, its paths shown relative
    # to it, its searches counted under its folder, and a hook memory of its own.
    @property
    def counts(self) -> Metrics | None:
        return self.metrics

    @property
    def counted_as(self) -> str:
        return self.folder

    @property
    def caller(self) -> str:
        return ""  # the memory is the scope's, whoever calls

    @property
    def forward_to(self) -> tuple[str | None, str]:
        folder, _, sub = self.scope.dir.partition("/")
        return folder, sub

    def within(self, tool: str) -> tuple[str, ...] | None:
        return None

    def prefixes(self, tool: str | None = None, path_prefix: str = "") -> tuple[str, ...]:
        return (self.scope.search_prefix(path_prefix),)

    def split(self, path: str) -> tuple[str | None, Scope]:
        return None, self.scope

    def place(self) -> Place:
        from ragdown.scoped_changes import Place

        return Place(self.engine, self.scope)

    def instructions(self) -> str:
        return folder_instructions(self.title)


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


def forwarded(tool: ToolDefinition, at: Reach, forward: Forward) -> ToolFunction:
    """`tool` as a reader serves it at `at`: executed by the primary, its answer (errors too) unchanged."""
    folder, sub = at.forward_to

    def run(**kwargs: Any) -> str:
        arguments = {
            k.removesuffix("_") if keyword.iskeyword(k.removesuffix("_")) else k: v for k, v in kwargs.items()
        }
        text, is_error = forward(tool.name, folder, sub, to_jsonable_python(arguments))
        if is_error:
            raise BadRequestError(text)
        return text

    return tool.named(run)


def run_at(tool: ToolDefinition, at: Reach) -> ToolFunction:
    """`tool` as this process runs it at `at`: on a reader the write tools go to the primary."""
    if at.forward is not None and tool.writes:
        return forwarded(tool, at, at.forward)
    return tool.bound(at)


ToolSet = list[tuple[ToolFunction, ToolAnnotations]]


def endpoint_tools(endpoint: Endpoint) -> ToolSet:
    """The folder tools of `endpoint`, each with its annotations, as this process runs them."""
    return [(run_at(tool, endpoint), tool.hints) for tool in TOOLS]


def build_server(endpoint: Endpoint) -> ToolServer:
    """A fresh MCP server for `endpoint`; every state it needs lives in the engine."""
    server = ToolServer(name=endpoint.name, title=endpoint.title, instructions=endpoint.instructions())
    for tool, hints in endpoint_tools(endpoint):
        if endpoint.enabled(tool.__name__):
            run = guarded(tool, endpoint.admission, endpoint.metrics, endpoint.folder)
            server.add_tool(run, annotations=hints, structured_output=False)
    return server
