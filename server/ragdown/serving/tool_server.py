"""The MCP server every endpoint builds: the SDK's, with what an agent sees made plain
(docs/tools.md#calls-errors-and-limits): the package version in `serverInfo`, tool descriptions
without the docstrings' indentation, and arguments that do not fit a tool's schema refused in one
sentence naming each argument (`ragdown_recall: top_k must be at least 1, got 0`), not a pydantic
dump with a link to its documentation; an argument the tool does not take is refused too."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BeforeValidator, ValidationError, WithJsonSchema

from ragdown import __version__
from ragdown.errors import plain


def describe(doc: str | None) -> str:
    """A docstring as a description: paragraphs kept, each on one line, no indentation."""
    paragraphs = inspect.cleandoc(doc or "").split("\n\n")
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs if paragraph.strip())


def where(location: Sequence[int | str]) -> str:
    """A pydantic location as an agent would write it: `edits[0].old_text`."""
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the arguments"


def argument_errors(tool: str, error: ValidationError) -> str:
    problems = [f"{where(problem['loc'])} {plain(problem)}" for problem in error.errors()]
    return f"{tool}: {'; '.join(problems)}"


def _one_or_many(value: object) -> object:
    """A lone value where a list is expected is a list of one (agents send `tags: "ops"`); a string
    that holds a JSON array is that array (some clients send every argument as text)."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return [value]
        return parsed if isinstance(parsed, list) else [value]
    return [value] if isinstance(value, str | dict) else value


ONE_OR_MANY = BeforeValidator(_one_or_many)
# A list of strings that also takes one string, and says so in its schema.
Strings = Annotated[
    list[str],
    ONE_OR_MANY,
    WithJsonSchema({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}),
]


class ToolServer(MCPServer):
    def __init__(self, **options: Any) -> None:
        super().__init__(version=__version__, **options)

    def add_tool(self, fn: Callable[..., Any], *args: Any, **options: Any) -> None:
        options.setdefault("description", describe(fn.__doc__))
        super().add_tool(fn, *args, **options)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = self._unknown_arguments(name, arguments)
        if unknown:
            return CallToolResult(content=[TextContent(type="text", text=unknown)], is_error=True)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if isinstance(error, UnexpectedToolError) or not isinstance(error.__cause__, ValidationError):
                raise
            text = argument_errors(name, error.__cause__)
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    def _unknown_arguments(self, name: str, arguments: dict[str, Any]) -> str:
        """A refusal naming the arguments the tool does not take, or "": the SDK would drop them, and
        an agent that sent `limit` or `tags` to a tool taking `top_k` and `tag` would get an
        answer to another question."""
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return ""
        known = tool.parameters.get("properties", {})
        unknown = sorted(set(arguments or {}) - set(known))
        if not unknown:
            return ""
        takes = ", ".join(known) or "no arguments"
        return f"{name}: unknown argument {', '.join(unknown)} ({name} takes {takes})"


async def run_stdio_after(server: MCPServer, first: bytes, answered: object | None) -> None:
    """Serve `server` over stdio when the first line (`first`) was read from stdin already, and the
    `initialize` with id `answered` answered already (serving/stdio_handshake.py): the SDK gets the
    line first, as if it had read it, and its own answer to that request is not written again."""
    import anyio
    import mcp_types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (read_stream, write_stream):
        to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_client, from_server = anyio.create_memory_object_stream[SessionMessage](0)

        async def read() -> None:
            async with to_server:
                if first.strip():
                    try:
                        message = mcp_types.jsonrpc_message_adapter.validate_json(first, by_name=False)
                        await to_server.send(SessionMessage(message))
                    except Exception as error:  # as the SDK's reader passes a line it cannot parse
                        await to_server.send(error)
                async for item in read_stream:
                    await to_server.send(item)

        async def write() -> None:
            pending = answered
            async with write_stream, from_server:  # ends once the server closed its side
                async for item in from_server:
                    if pending is not None and _answers(item.message, pending):
                        pending = None  # the client has this answer already
                        continue
                    await write_stream.send(item)

        async with anyio.create_task_group() as writing:
            writing.start_soon(write)  # drains every answer, then closes stdout's stream
            async with anyio.create_task_group() as reading:
                reading.start_soon(read)
                lowlevel = server._lowlevel_server
                await lowlevel.run(from_client, to_client, lowlevel.create_initialization_options())
                reading.cancel_scope.cancel()


def _answers(message: Any, request_id: object) -> bool:
    """Whether `message` is the result of the request `request_id`."""
    data = json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))
    return isinstance(data, dict) and data.get("id") == request_id and "result" in data
