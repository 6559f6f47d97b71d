"""MCP tools as registered objects (docs/tools.md#tool-lists): each tool is one decorated function in a
`ToolRegistry`, as the SDK's tool manager holds its `Tool`s. Its name, description, argument schema
and annotations come from that one function, on every endpoint that lists it.

A tool function takes first where the call runs (serving/reach.py: a folder endpoint, or root `/mcp`
over every folder) and then the agent's arguments. `bound` gives what an MCP server registers: the
function with its first argument given, under the tool's name, docstring and argument signature.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from mcp_types import ToolAnnotations

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

# What a tool does on root `/mcp` (docs/tools.md#root-mcp): "folder" needs a `folder` argument,
# "every" takes an optional one and covers every folder the caller reaches without it, "whole" takes
# none and acts on the whole index (a root-only tool, or the sync).
OnRoot = Literal["folder", "every", "whole"]
ToolFunction = Callable[..., str]


@dataclass(frozen=True)
class ToolDefinition:
    """One tool: its function (where the call runs, then the agent's arguments) and annotations."""

    fn: ToolFunction
    hints: ToolAnnotations
    on_root: OnRoot = "folder"

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def writes(self) -> bool:
        """A write tool: hidden on a read-only endpoint, and run by the primary for a reader."""
        return not self.hints.read_only_hint

    @cached_property
    def arguments(self) -> inspect.Signature:
        """The agent's arguments (all but the first), as keyword-only parameters with their types
        evaluated as `inspect.signature(eval_str=True)` would: the tool modules' annotations are
        strings, and the SDK reads the types. The first is left alone: its type may be one the
        module imports only for the type checker."""
        agent = list(inspect.signature(self.fn).parameters.values())[1:]
        return inspect.Signature(
            [
                p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=self._evaluated(p.annotation))
                for p in agent
            ],
            return_annotation=str,
        )

    def _evaluated(self, annotation: Any) -> Any:
        if not isinstance(annotation, str):
            return annotation
        return eval(annotation, self.fn.__globals__)  # the module's own source text, as inspect does

    def bound(self, at: object) -> ToolFunction:
        """The function an MCP server registers for a call running at `at`."""

        def run(**arguments: Any) -> str:
            return self.fn(at, **arguments)

        return self.named(run)

    def named(
        self, run: ToolFunction, signature: inspect.Signature | None = None, doc: str = ""
    ) -> ToolFunction:
        """`run` as this tool: its name, docstring (with `doc` added) and argument signature (unless
        given another)."""
        signature = signature or self.arguments
        run.__name__ = run.__qualname__ = self.name
        run.__doc__ = (self.fn.__doc__ or "") + doc
        run.__signature__ = signature  # type: ignore[attr-defined]
        run.__annotations__ = {
            **{name: p.annotation for name, p in signature.parameters.items()},
            "return": str,
        }
        return run


class ToolRegistry:
    """The tools of one kind of endpoint, in the order an MCP server lists them."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolDefinition] = {}

    def tool(
        self, hints: ToolAnnotations, on_root: OnRoot = "folder"
    ) -> Callable[[ToolFunction], ToolFunction]:
        """Register the decorated function as a tool; the function itself is left as it is."""

        def register(fn: ToolFunction) -> ToolFunction:
            if fn.__name__ in self._tools:
                raise ValueError(f"tool {fn.__name__} is registered twice")
            self._tools[fn.__name__] = ToolDefinition(fn, hints, on_root)
            return fn

        return register

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self._tools.values())

    def __getitem__(self, name: str) -> ToolDefinition:
        return self._tools[name]

    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)
