"""The primary's internal API (what readers call): run a write tool, sync, and the hook's session
memory. Served on the same app (bearer auth) and, locally, on `<data_dir>/primary.sock`."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel

from ragdown.folders.scope import Scope as DocScope
from ragdown.serving.root import ROOT_ONLY_TOOLS
from ragdown.serving.tools import Endpoint


class ToolCall(BaseModel):
    scope: str
    tool: str
    arguments: dict[str, Any]


class MemoryCall(BaseModel):
    op: Literal["seen", "add", "forget"]
    key: str
    ids: list[str] = []


class SyncCall(BaseModel):
    full: bool = False


def internal_router(routes: Any, authorised: Any) -> APIRouter:
    """`routes` is the app's `McpRoutes` (its engine, servers and switches); `authorised` checks a request."""
    router = APIRouter(prefix="/internal")

    def check(request: Request) -> None:
        if not authorised(request.headers.get("authorization")):
            raise HTTPException(status_code=401, detail="Unauthorized")

    @router.get("/ping", dependencies=[Depends(check)])
    def ping() -> dict[str, bool]:
        return {"primary": True}

    @router.post("/tool", dependencies=[Depends(check)])
    async def tool(call: ToolCall) -> dict[str, Any]:
        if call.tool in ROOT_ONLY_TOOLS:
            server = routes.root_server()
        else:
            endpoint: Endpoint = routes.endpoint_for_scope(DocScope(call.scope))
            server = routes.server(endpoint)
        result = await server.call_tool(call.tool, call.arguments)
        content = getattr(result, "content", [])
        text = "".join(getattr(c, "text", "") for c in content)
        return {"text": text, "is_error": bool(getattr(result, "is_error", False))}

    @router.post("/sync", dependencies=[Depends(check)])
    def sync(call: SyncCall) -> dict[str, Any]:
        return dict(routes.engine.sync(full=call.full).model_dump())

    @router.post("/memory", dependencies=[Depends(check)])
    def memory(call: MemoryCall) -> dict[str, list[str]]:
        memory = routes.engine.memory
        if call.op == "seen":
            return {"ids": sorted(memory.seen(call.key))}
        if call.op == "add":
            memory.add(call.key, call.ids)
        else:
            memory.forget(call.key)
        return {"ids": []}

    return router
