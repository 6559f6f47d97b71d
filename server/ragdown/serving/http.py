"""`ragdown serve`: the public app — `/api` (the admin's), MCP at `/mcp/<folder>[/<sub…>]` (agents'),
and the open `/api/status`, `/healthz`, `/readyz` (docs/tools.md#http-routes, docs/security.md).

The readers' internal API is not here: it is an app of its own on the primary's socket or internal
port (serving/internal.py), so nothing routed to this listener can reach it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from ragdown import __version__
from ragdown.engine import Engine
from ragdown.errors import RagdownError, plain
from ragdown.serving.admin_api import admin_router
from ragdown.serving.api_access import ApiAccess
from ragdown.serving.auth import identify
from ragdown.serving.docs_api import docs_router
from ragdown.serving.docs_write_api import docs_write_router
from ragdown.serving.folders_api import folders_router
from ragdown.serving.golden_api import golden_router
from ragdown.serving.guard import Guard
from ragdown.serving.mcp_routes import McpRoutes, send_json
from ragdown.serving.no_oauth import no_oauth_router
from ragdown.serving.replies import error_reply
from ragdown.serving.session_api import session_router
from ragdown.serving.sessions import Sessions
from ragdown.serving.tool_server import where
from ragdown.serving.web_ui import web_router
from ragdown.settings import ServerSettings


def _typed(problem: Any) -> Any:
    """A query value as the number it was meant to be (`got 0`, not `got '0'`)."""
    given = problem.get("input")
    if isinstance(given, str):
        for kind in (int, float):
            try:
                return {**problem, "input": kind(given)}
            except ValueError:
                continue
    return problem


def settings_in_effect(engine: Engine) -> dict[str, object]:
    """The non-secret tuning values the server runs with (docs/tools.md#status-and-health)."""
    current = engine.settings
    hook = engine.hook_settings()
    return {
        "embedder": engine.embedder.name,
        "watch": current.watch,
        "read_only": current.read_only,
        "root_mcp": current.root_mcp,
        "text_limit": current.text_limit,
        "max_per_document": current.max_per_document,
        "follow_links": current.follow_links,
        "query_log": current.query_log,
        "disabled_tools": sorted(current.disabled_tool_names()),
        "hook": {
            "top_k": hook.top_k,
            "min_score": hook.min_score,
            "min_ratio": hook.min_ratio,
            "max_chars": hook.max_chars,
        },
    }


# The /api paths that exist: another method on one of them is 405, anything else 404.
KNOWN_API = frozenset(
    {
        "status",
        "folders",
        "docs",
        "doc",
        "render",
        "preview",
        "search",
        "resolve",
        "backlinks",
        "move",
        "file",
        "session",
    }
)


class RagdownApp:
    """`/mcp` and everything under it go to the MCP routes as they are (no mount redirect for a bare
    `/mcp`); the rest is the FastAPI app."""

    def __init__(self, api: FastAPI, mcp: McpRoutes, guard: Guard) -> None:
        self.api = api
        self.mcp = mcp
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope.get("path", "")
            refusal = self.guard.refusal(scope["method"], path, dict(scope.get("headers") or []))
            if refusal is not None:
                await send_json(send, refusal[0], {"error": refusal[1]})
                return
            if path == "/mcp" or path.startswith("/mcp/"):
                await self.mcp(scope, receive, send)
                return
        await self.api(scope, receive, send)


def create_app(
    engine: Engine, settings: ServerSettings, environment: ServerSettings | None = None
) -> RagdownApp:
    """`settings` are those in effect; `environment` what the variables alone say (the saved server
    settings go over it), the same as `settings` when nothing is saved."""
    app = FastAPI(title="ragdown", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    routes = McpRoutes(engine, settings)
    health_routes(app, routes, settings)
    sessions = Sessions()
    access = ApiAccess(
        lambda: routes.engine, settings, admin_of(settings), lambda: routes.forward is not None, sessions
    )
    app.include_router(session_router(access))
    app.include_router(folders_router(access))
    app.include_router(docs_router(access))
    app.include_router(docs_write_router(access))
    app.include_router(admin_router(access, environment or settings))
    app.include_router(golden_router(access))
    app.include_router(web_router())
    app.include_router(no_oauth_router())
    app.api_route("/api/{rest:path}", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])(unknown_api)
    answer_errors(app)
    app.middleware("http")(keep_alive)
    return RagdownApp(app, routes, Guard.of(settings))


def health_routes(app: FastAPI, routes: McpRoutes, settings: ServerSettings) -> None:
    """The open routes: status, liveness and readiness (docs/tools.md#status-and-health)."""

    @app.get("/api/status")
    def status() -> dict[str, object]:
        """Open (no auth, no secrets): whether the model and the index are ready, counts, and the
        tuning settings in effect (no paths, no tokens)."""
        current = routes.engine
        files, chunks = current.totals()
        return {
            "name": "ragdown",
            "version": __version__,
            "ready": current.first_sync_done,
            "role": "reader" if routes.forward is not None else "primary",
            "syncing": current.syncing if routes.forward is None else None,
            "auth_required": not settings.secure_local_net,
            "files": files,
            "chunks": chunks,
            "embedder": current.embedder.name,
            "settings": settings_in_effect(current),
        }

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        """The process answers (liveness)."""
        return {"ok": True}

    @app.get("/readyz")
    def readyz() -> dict[str, object]:
        """Model loaded and index (or, on a reader, its search snapshot) open: this app exists only once
        both are. On a reader, whether the primary is reachable for writes is reported but does not
        make it unready."""
        body: dict[str, object] = {
            "ready": True,
            "role": "reader" if routes.forward is not None else "primary",
        }
        reachable = getattr(routes.forward, "reachable", None)  # node.Forwarder's
        if callable(reachable):
            body["primary_reachable"] = bool(reachable())
        return body


def admin_of(settings: ServerSettings) -> Callable[[str | None], bool | None]:
    def admin(header: str | None) -> bool | None:
        """True for the admin, False for the agents' token, None for no token this server knows as
        either (a folder's own token is an agent's too, but only its folder can tell)."""
        access = identify(header, settings)
        return None if access is None or access.role == "folder" else access.is_admin

    return admin


def unknown_api(rest: str) -> JSONResponse:
    """An unknown /api path answers 404 before any auth check (docs/tools.md#request-checks); a known one
    reached with another method, 405."""
    if rest in KNOWN_API or rest.startswith("folders/"):
        return JSONResponse({"error": "Method not allowed"}, status_code=405)
    return JSONResponse({"error": "Not found"}, status_code=404)


def answer_errors(app: FastAPI) -> None:
    """Errors are `{"error": msg}` everywhere (docs/tools.md#request-checks)."""

    @app.exception_handler(RagdownError)
    async def refused(request: Request, error: RagdownError) -> JSONResponse:
        """Every refusal and outage, one way (serving/replies.py)."""
        status, body, headers = error_reply(error)
        return JSONResponse(body, status_code=status, headers=dict(headers))

    @app.exception_handler(RequestValidationError)
    async def bad_query(request: Request, error: RequestValidationError) -> JSONResponse:
        """A query parameter that is missing or out of range: 400 in the tools' plain words."""
        problems = [f"{where(problem['loc'][1:])} {plain(_typed(problem))}" for problem in error.errors()]
        return JSONResponse({"error": "; ".join(problems)}, status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def json_errors(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """FastAPI's own 404/405 included."""
        message = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, str(exc.detail))
        return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)


async def keep_alive(request: object, call_next: Callable[[object], Awaitable[object]]) -> object:
    response = await call_next(request)
    response.headers["Keep-Alive"] = "timeout=75"  # type: ignore[attr-defined]
    return response
