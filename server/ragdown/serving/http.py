"""`ragdown serve`: the FastAPI app — `/api/status`, and MCP at `/mcp/<folder>[/<sub…>]` (BEHAVIOUR §7).

Every MCP request gets a fresh stateless transport (JSON responses) on a server built for its
scope; everything a request may need later (hook memory, the index) lives in the engine.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from ragdown import __version__
from ragdown.documents.paths import is_skipped_entry
from ragdown.engine import Engine
from ragdown.folders.registry import read_folder
from ragdown.folders.scope import Scope as DocScope
from ragdown.folders.settings import ServerSettings
from ragdown.serving.admission import Admission
from ragdown.serving.folders_api import folders_router
from ragdown.serving.internal import internal_router
from ragdown.serving.metrics import Metrics
from ragdown.serving.root import RootEndpoint, build_root_server
from ragdown.serving.tools import Endpoint, build_server

MAX_MCP_BODY = 1024 * 1024
NOT_FOUND_FOLDER = {"error": "Not found: no folder with MCP turned on at this path"}
LOCAL_HOSTS = ["localhost", "127.0.0.1", "[::1]"]


def token_matches(header: str | None, token: str) -> bool:
    """`Bearer <token>` (scheme case-insensitive), compared as SHA-256 digests in constant time."""
    if not header:
        return False
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    expected = hashlib.sha256(token.encode()).digest()
    return hmac.compare_digest(hashlib.sha256(given.strip().encode()).digest(), expected)


def transport_security(settings: ServerSettings) -> TransportSecuritySettings:
    """DNS-rebinding protection: localhost on any port, plus the hosts an ingress sends."""
    extra = [h.strip() for h in settings.allowed_hosts.split(",") if h.strip()]
    if "*" in extra:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = [*LOCAL_HOSTS, *(f"{h}:*" for h in LOCAL_HOSTS), *extra]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


async def send_json(
    send: Send, status: int, body: object, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    data = json.dumps(body, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


Forward = Callable[[str, str, dict[str, Any]], tuple[str, bool]]


@dataclass
class McpRoutes:
    """The ASGI app mounted at `/mcp`: auth, then the folder's endpoint, then the MCP transport."""

    engine: Engine
    settings: ServerSettings

    def __post_init__(self) -> None:
        self._servers: dict[tuple[str, str, bool, bool, frozenset[str]], MCPServer] = {}
        self.admission = Admission(self.settings.max_concurrent, self.settings.max_queue)
        self._root: MCPServer | None = None
        self._managers: dict[MCPServer, StreamableHTTPSessionManager] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.forward: Forward | None = None
        self.metrics: Metrics | None = None
        self._security = transport_security(self.settings)

    def endpoint(self, raw_path: bytes) -> Endpoint | None:
        """The endpoint for `/<folder>[/<sub…>]`, or None: a missing folder, a human-only one and a
        bad sub-path answer alike, so nobody can tell which folders exist."""
        try:
            rest = unquote_to_bytes(raw_path).decode("utf-8")
        except UnicodeDecodeError:
            return None
        segments = [s for s in rest.split("/") if s]
        if not segments:
            return None
        folder = read_folder(self.engine.docs_dir, segments[0])
        if folder is None or not folder.mcp:
            return None
        path = self.engine.docs_dir / segments[0]
        for segment in segments[1:]:
            path = path / segment
            if is_skipped_entry(segment):  # `.`, `..` and dot-folders start with a dot
                return None
            if path.is_symlink() or not path.is_dir():
                return None
        name = "ragdown-" + segments[0]
        return self.endpoint_for_scope(DocScope("/".join(segments)), name=name, title=folder.title)

    def endpoint_for_scope(self, scope: DocScope, *, name: str = "", title: str = "") -> Endpoint:
        folder = scope.dir.split("/", 1)[0]
        found = read_folder(self.engine.docs_dir, folder)
        if not title:
            title = found.title if found else folder
        # A folder's own switches (its `.ragdown.json`, or its RagdownFolder) add to the server's.
        return Endpoint(
            engine=self.engine,
            scope=scope,
            name=name or f"ragdown-{folder}",
            title=title,
            read_only=self.settings.read_only or (found is not None and found.read_only),
            disabled=self.settings.disabled_tool_names() | (found.disabled_tools if found else frozenset()),
            admission=self.admission,
            forward=self.forward,
            metrics=self.metrics,
        )

    def become(self, engine: Engine, forward: Forward | None) -> None:
        """Switch role (a reader that took over is the primary now): new servers from here on."""
        self.engine = engine
        self.forward = forward
        self._servers.clear()
        self._root = None

    def authorised(self, header: str | None) -> bool:
        """Every MCP and internal route: the bearer token, unless on a trusted network."""
        return self.settings.secure_local_net or token_matches(header, self.settings.token or "")

    def root_server(self) -> MCPServer:
        """The root server: built once, since it looks the folders up on every call."""
        if self._root is None:
            self._root = build_root_server(
                RootEndpoint(
                    self.engine,
                    read_only=self.settings.read_only,
                    disabled=self.settings.disabled_tool_names(),
                    admission=self.admission,
                    forward=self.forward,
                )
            )
        return self._root

    def server(self, endpoint: Endpoint) -> MCPServer:
        key = (
            endpoint.scope.dir,
            endpoint.title,
            endpoint.forward is not None,
            endpoint.read_only,
            endpoint.disabled,
        )
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = build_server(endpoint)
        return server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope.get("headers") or [])
        if not self.authorised(headers.get(b"authorization", b"").decode("latin-1")):
            await send_json(send, 401, {"error": "Unauthorized"})
            return
        raw = (scope.get("raw_path") or scope["path"].encode()).split(b"?", 1)[0]
        relative = raw[len(b"/mcp") :]
        if relative.strip(b"/") == b"":
            if not self.settings.root_mcp:
                await send_json(send, 404, {"error": "Pick a folder: /mcp/<folder>"})
                return
            server = self.root_server()
        else:
            endpoint = self.endpoint(relative)
            if endpoint is None:
                await send_json(send, 404, NOT_FOUND_FOLDER)
                return
            server = self.server(endpoint)
        manager = await self.manager(server)
        await manager.handle_request(scope, receive, send)

    async def manager(self, server: MCPServer) -> StreamableHTTPSessionManager:
        """One stateless transport manager per server, running for the life of the event loop: each
        request still gets a fresh transport, without setting a task group up and down per call."""
        manager = self._managers.get(server)
        if manager is None:
            manager = StreamableHTTPSessionManager(
                server._lowlevel_server,
                json_response=True,
                stateless=True,
                security_settings=self._security,
                max_request_body_size=MAX_MCP_BODY,
            )
            started = asyncio.Event()

            async def run() -> None:
                async with manager.run():
                    started.set()
                    await asyncio.Event().wait()  # until the loop shuts down

            self._tasks.append(asyncio.get_running_loop().create_task(run()))
            await started.wait()
            self._managers[server] = manager
        return manager


class RagdownApp:
    """`/mcp` and everything under it go to the MCP routes as they are (no mount redirect for a bare
    `/mcp`); the rest is the FastAPI app."""

    def __init__(self, api: FastAPI, mcp: McpRoutes) -> None:
        self.api = api
        self.mcp = mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] in ("http", "websocket") else ""
        if path == "/mcp" or path.startswith("/mcp/"):
            await self.mcp(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def create_app(engine: Engine, settings: ServerSettings) -> RagdownApp:
    app = FastAPI(title="ragdown", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    routes = McpRoutes(engine, settings)

    @app.get("/api/status")
    def status() -> dict[str, object]:
        """Open (no auth, no secrets): whether the model and the index are ready, and counts."""
        current = routes.engine
        files = current.store.files()
        return {
            "name": "ragdown",
            "version": __version__,
            "ready": True,
            "role": "reader" if routes.forward is not None else "primary",
            "syncing": current.syncer.syncing if routes.forward is None else None,
            "auth_required": not settings.secure_local_net,
            "files": len(files),
            "chunks": sum(f.chunks for f in files.values()),
            "embedder": current.embedder.name,
        }

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        """The process answers (liveness)."""
        return {"ok": True}

    @app.get("/readyz")
    def readyz() -> dict[str, object]:
        """Model loaded and index open (this app exists only once both are); on a reader, whether
        the primary is reachable for writes is reported but does not make it unready."""
        body: dict[str, object] = {
            "ready": True,
            "role": "reader" if routes.forward is not None else "primary",
        }
        client = getattr(routes.forward, "__self__", None)
        if client is not None and hasattr(client, "reachable"):
            body["primary_reachable"] = bool(client.reachable())
        return body

    app.include_router(internal_router(routes, routes.authorised))
    app.include_router(
        folders_router(lambda: routes.engine, settings, routes.authorised, lambda: routes.forward is not None)
    )

    @app.api_route("/api/{rest:path}", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
    def unknown_api(rest: str) -> JSONResponse:
        """An unknown /api path answers 404 before any auth check (BEHAVIOUR §7.1); a known one
        reached with another method, 405."""
        if rest in ("status", "folders") or rest.startswith("folders/"):
            return JSONResponse({"error": "Method not allowed"}, status_code=405)
        return JSONResponse({"error": "Not found"}, status_code=404)

    @app.exception_handler(StarletteHTTPException)
    async def json_errors(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """Errors are `{"error": msg}` everywhere (BEHAVIOUR §7.1), FastAPI's own 404/405 included."""
        message = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, str(exc.detail))
        return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)

    @app.middleware("http")
    async def keep_alive(request: object, call_next: Callable[[object], Awaitable[object]]) -> object:
        response = await call_next(request)
        response.headers["Keep-Alive"] = "timeout=75"  # type: ignore[attr-defined]
        return response

    return RagdownApp(app, routes)
