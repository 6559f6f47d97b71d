"""The primary's internal API (what readers call): run a write tool (a sync is `ragdown_reindex`), and the
hook's session memory (docs/security.md).

It is an app of its own, never mounted on the public listener: the primary serves it on
`<data_dir>/primary.sock` (one machine) and, with RAGDOWN_INTERNAL_PORT, on a port of its own that no
Ingress routes (a cluster). Its token is RAGDOWN_INTERNAL_TOKEN (or the data dir's own), never an
agent's or the admin's. A forwarded call names a folder and a place inside it — never a filesystem
path — and the primary decides it again by the same rules as an agent's `/mcp/<folder>/<sub…>`:
the folder exists with MCP on, the place is a real sub-folder, the tool is one the endpoint offers
(read-only and disabled tools are not).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragdown.errors import Refusal
from ragdown.serving.auth import ADMIN, CALLER, bearer, same_token
from ragdown.serving.folder_tools import TOOLS
from ragdown.serving.mcp_routes import McpRoutes
from ragdown.serving.root_tools import ROOT_TOOLS
from ragdown.serving.tools import WRITE_TOOLS

# What a reader forwards: the write tools, the root endpoint's own among them.
FORWARDED_TOOLS = WRITE_TOOLS
# Those a reader's root endpoint forwards naming no folder (create a folder, reindex all).
ROOT_FORWARDED = frozenset(t.name for t in (*TOOLS, *ROOT_TOOLS) if t.writes and t.on_root == "whole")
MAX_INTERNAL_BODY = 1024 * 1024 + 64 * 1024  # an MCP body's limit, and room for the envelope


class ToolCall(BaseModel):
    """`folder` None: the root endpoint (RAGDOWN_ROOT_MCP); `path`: a sub-folder of `folder`, "" for it."""

    folder: Annotated[str, Field(min_length=1, max_length=255)] | None
    path: Annotated[str, Field(max_length=1024)] = ""
    tool: str
    arguments: dict[str, Any]
    # Who the reader's caller was (serving/auth.caller_label), for the write's provenance stamp.
    caller: Annotated[str, Field(max_length=300)] = ""


class MemoryCall(BaseModel):
    op: Literal["seen", "add", "forget"]
    key: Annotated[str, Field(max_length=4096)]
    ids: list[str] = []


def refused(message: str) -> dict[str, Any]:
    return {"text": message, "is_error": True}


def server_for(routes: McpRoutes, call: ToolCall) -> MCPServer | str:
    """The server that runs a forwarded call, decided again as for an agent; or why none does."""
    if call.tool not in FORWARDED_TOOLS:
        return f"{call.tool} is not run by the primary for readers"
    if call.folder is None:
        if not routes.engine.settings.root_mcp or call.tool not in ROOT_FORWARDED:
            return "no folder with MCP turned on at this path"
        # Not counted here: the reader the agent called counted it (one count per call).
        return routes.root_server(ADMIN, counted=False)
    sub = [s for s in call.path.split("/") if s] if call.path else []
    folder = routes.folder_at(call.folder, sub)
    if folder is None:
        return "Not found: no folder with MCP turned on at this path"
    endpoint = replace(routes.endpoint_for(folder, sub), metrics=None)  # counted by the reader too
    if not endpoint.enabled(call.tool):
        return f"{call.tool} is turned off for this folder"
    return routes.server(endpoint)


async def run_forwarded(routes: McpRoutes, call: ToolCall) -> dict[str, Any]:
    """POST /internal/tool: a reader's write tool, run as the reader's caller; the answer unchanged."""
    server = server_for(routes, call)
    if isinstance(server, str):
        return refused(server)
    caller = CALLER.set(call.caller)
    try:
        result = await server.call_tool(call.tool, call.arguments)
    except ToolError as error:  # ToolServer answers bad arguments itself; this is any other refusal
        return refused(f"{call.tool}: {str(error).splitlines()[0]}")
    finally:
        CALLER.reset(caller)
    content = getattr(result, "content", [])
    text = "".join(getattr(c, "text", "") for c in content)
    return {"text": text, "is_error": bool(getattr(result, "is_error", False))}


def remembered(routes: McpRoutes, call: MemoryCall) -> dict[str, list[str]]:
    """POST /internal/memory: the hook's session memory, kept by the primary for every reader."""
    memory = routes.engine.memory
    if call.op == "seen":
        return {"ids": sorted(memory.seen(call.key))}
    if call.op == "add":
        memory.add(call.key, call.ids)
    else:
        memory.forget(call.key)
    return {"ids": []}


def internal_app(routes: McpRoutes, token: str) -> FastAPI:
    """The internal API over the primary's `routes` (its engine, servers and switches)."""
    app = FastAPI(title="ragdown-internal", docs_url=None, redoc_url=None, openapi_url=None)

    def check(request: Request) -> None:
        given = bearer(request.headers.get("authorization"))
        if given is None or not same_token(given, token):
            raise HTTPException(status_code=401, detail="Unauthorized")
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_INTERNAL_BODY:
            raise HTTPException(status_code=413, detail="Body too large")

    @app.get("/internal/ping", dependencies=[Depends(check)])
    def ping() -> dict[str, bool]:
        return {"primary": True}

    @app.post("/internal/tool", dependencies=[Depends(check)])
    async def tool(call: ToolCall) -> dict[str, Any]:
        return await run_forwarded(routes, call)

    @app.post("/internal/memory", dependencies=[Depends(check)])
    def memory(call: MemoryCall) -> dict[str, list[str]]:
        return remembered(routes, call)

    answer_errors(app)
    return app


def answer_errors(app: FastAPI) -> None:
    """Errors as `{"error": message}`, as on the public listener."""

    @app.exception_handler(UnicodeError)
    async def not_text(request: Request, error: UnicodeError) -> JSONResponse:
        return JSONResponse(
            {"error": "a name or key is not Unicode text (a lone surrogate)"}, status_code=400
        )

    @app.exception_handler(Refusal)
    async def refusal(request: Request, error: Refusal) -> JSONResponse:
        return JSONResponse({"error": error.message}, status_code=error.status)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(error.detail)}, status_code=error.status_code)
