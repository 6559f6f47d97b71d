"""MCP at `/mcp`, `/mcp/<folder>` and `/mcp/<folder>/<sub…>` (docs/tools.md#mcp-routes): who may call, which
endpoint a path names, and the stateless transport that answers.

Every request gets a fresh stateless transport (JSON responses) on a server built for its scope;
everything a request may need later (hook memory, the index) lives in the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Message, Receive, Scope, Send

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import check_path, is_skipped_entry
from ragdown.engine import Engine
from ragdown.errors import ForbiddenError, RagdownError, Refusal
from ragdown.folders.registry import Folder, list_folders, read_folder
from ragdown.folders.scope import Scope as DocScope
from ragdown.serving.admission import CALL_NOTES, Admission, CallNotes
from ragdown.serving.auth import (
    ADMIN,
    CALLER,
    OWN_TOKENS_ONLY,
    Access,
    caller_label,
    identify,
    unauthorized,
    unknown_token,
)
from ragdown.serving.metrics import Metrics
from ragdown.serving.reach import Forward
from ragdown.serving.replies import error_reply
from ragdown.serving.root import RootEndpoint, build_root_server
from ragdown.serving.tools import Endpoint, build_server
from ragdown.settings import ServerSettings

MAX_MCP_BODY = 1024 * 1024
# Servers kept for the folders and sub-folders agents call (each ~0.4 MB with its transport), and how
# long a dropped one keeps answering the calls it had already started.
MAX_SERVERS = 256
RETIRE_AFTER_S = 300.0
# What makes two endpoints' servers the same: scope, title, forwarding, read-only, disabled, metrics.
ServerKey = tuple[str, str, bool, bool, frozenset[str], bool]
NOT_FOUND_FOLDER = {"error": "Not found: no folder with MCP turned on at this path"}
STATELESS = {
    "error": "Method not allowed: this MCP endpoint is stateless; POST JSON-RPC to it "
    "(it has no event stream to GET and no session to DELETE)"
}


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


async def send_error(send: Send, error: RagdownError) -> None:
    status, body, headers = error_reply(error)
    await send_json(send, status, body, [(k.lower().encode(), v.encode()) for k, v in headers])


def noting(send: Send, notes: CallNotes) -> Send:
    """`send` with what the call noted added to the response's headers: `Retry-After` on the answer
    to a call refused as overloaded (docs/tools.md#calls-errors-and-limits). In JSON-response mode the
    transport starts the response only once the call has answered."""

    async def send_noted(message: Message) -> None:
        if message["type"] == "http.response.start" and notes.retry_after_s is not None:
            retry = (b"retry-after", str(notes.retry_after_s).encode())
            message = {**message, "headers": [*message.get("headers", []), retry]}
        await send(message)

    return send_noted


def split_mcp_path(raw_path: bytes) -> list[str] | None:
    """The decoded segments after `/mcp`, or None for a malformed escape (no folder, like a missing one)."""
    try:
        rest = unquote_to_bytes(raw_path).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return [s for s in rest.split("/") if s]


@dataclass
class McpRoutes:
    """The ASGI app mounted at `/mcp`: auth, then the folder's endpoint, then the MCP transport."""

    engine: Engine
    settings: ServerSettings

    def __post_init__(self) -> None:
        # Every sub-folder an agent names gets a server of its own: bounded, least recently used out.
        self._servers: OrderedDict[tuple[str, str, bool, bool, frozenset[str], bool], MCPServer] = (
            OrderedDict()
        )
        self._servers_lock = threading.Lock()
        self.admission = Admission(self.settings.max_concurrent, self.settings.max_queue)
        self._roots: dict[tuple[Access, bool], MCPServer] = {}
        self._managers: dict[MCPServer, StreamableHTTPSessionManager] = {}
        self._tasks: dict[MCPServer, tuple[asyncio.AbstractEventLoop, asyncio.Task[None]]] = {}
        self.forward: Forward | None = None
        self.metrics: Metrics | None = None

    def folder_at(self, folder: str, sub: list[str]) -> Folder | None:
        """The MCP folder `folder` with its real sub-folder `sub`, or None: a missing folder, a
        human-only one and a bad sub-path answer alike, so nobody can tell which folders exist. The
        same rule decides an agent's `/mcp/<folder>/<sub…>` and a reader's forwarded call."""
        found = read_folder(self.engine.docs_dir, folder)
        if found is None or not found.mcp:
            return None
        if sub:
            if any(is_skipped_entry(segment) for segment in sub):  # `.`, `..` and dot-folders
                return None
            try:
                checked = check_path("/".join(sub), markdown_only=False)
            except Refusal:
                return None
            if list(checked.parts) != sub or not files.is_dir(Root(self.engine.docs_dir, (folder, *sub))):
                return None
        return found

    def endpoint_for(self, folder: Folder, sub: list[str]) -> Endpoint:
        # A folder's own switches (its `.ragdown.json`, or its RagdownFolder) add to the server's.
        return Endpoint(
            engine=self.engine,
            scope=DocScope("/".join([folder.name, *sub])),
            name=f"ragdown-{folder.name}",
            title=folder.title,
            read_only=self.settings.read_only or folder.read_only,
            disabled=self.settings.disabled_tool_names() | folder.disabled_tools,
            admission=self.admission,
            forward=self.forward,
            metrics=self.metrics,
        )

    def become(self, engine: Engine, forward: Forward | None) -> None:
        """Switch role (a reader that took over is the primary now): new servers from here on."""
        self.engine = engine
        self.forward = forward
        self._servers.clear()
        self._roots.clear()

    def root_server(self, access: Access = ADMIN, *, counted: bool = True) -> MCPServer:
        """The root server for one kind of caller: it covers the MCP folders that caller reaches, looked
        up on every call; built once per caller kind (each folder token is its own kind). `counted`
        false: its calls are left out of the metrics (a reader's forwarded call, counted there)."""
        metrics = self.metrics if counted else None
        key = (access, metrics is not None)
        server = self._roots.get(key)
        if server is None:
            server = self._roots[key] = build_root_server(
                RootEndpoint(
                    self.engine,
                    read_only=self.settings.read_only,
                    disabled=self.settings.disabled_tool_names(),
                    admission=self.admission,
                    forward=self.forward,
                    reaches=access.reaches,
                    can_create=access.role != "folder",
                    agents_token=access.role == "agent",
                    caller=f"{access.role}:{access.digest}",
                    metrics=metrics,
                )
            )
        return server

    def server(self, endpoint: Endpoint) -> MCPServer:
        key = (
            endpoint.scope.dir,
            endpoint.title,
            endpoint.forward is not None,
            endpoint.read_only,
            endpoint.disabled,
            endpoint.metrics is not None,
        )
        with self._servers_lock:
            server = self._servers.get(key)
            if server is not None:
                self._servers.move_to_end(key)
                return server
            server = self._servers[key] = build_server(endpoint)
            while len(self._servers) > MAX_SERVERS:
                self._retire(self._servers.popitem(last=False)[1])
            return server

    def _retire(self, server: MCPServer) -> None:
        """Stop a dropped server's transport manager once calls still in flight on it are done."""
        self._managers.pop(server, None)
        running = self._tasks.pop(server, None)
        if running is not None:
            loop, task = running

            def later() -> None:
                loop.call_later(RETIRE_AFTER_S, task.cancel)

            with contextlib.suppress(RuntimeError):  # the loop is already closed: nothing runs on it
                loop.call_soon_threadsafe(later)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope.get("headers") or [])
        authorization = headers.get(b"authorization", b"").decode("latin-1")
        access = identify(authorization, self.settings)
        # No bearer token: 401 and its challenge; a wrong one: 403 without one, below
        # (docs/security.md#bearer-tokens-not-oauth).
        if access is None:
            await send_error(send, unauthorized(authorization))
            return
        raw = (scope.get("raw_path") or scope["path"].encode()).split(b"?", 1)[0]
        segments = split_mcp_path(raw[len(b"/mcp") :])
        if segments == [] and not self.engine.settings.root_mcp:
            if self._unknown(access):
                await send_error(send, unknown_token())
            else:
                await send_json(send, 404, {"error": "Pick a folder: /mcp/<folder>"})
            return
        server, reached = self._server_at(access, segments)
        if server is None and self._unknown(access):
            await send_error(send, unknown_token())  # a token no folder takes: 403, never a 401
            return
        if server is None and self._own_tokens_only(access, segments):
            await send_error(send, ForbiddenError(OWN_TOKENS_ONLY))
            return
        if server is None:
            await send_json(send, 404, NOT_FOUND_FOLDER)
            return
        if scope["method"] in ("GET", "DELETE"):
            await send_json(send, 405, STATELESS, [(b"allow", b"POST")])
            return
        await self._answer(server, caller_label(access, reached), scope, receive, send)

    def _server_at(self, access: Access, segments: list[str] | None) -> tuple[MCPServer | None, list[Folder]]:
        """The server for the MCP path `segments` (root `/mcp` for none) as `access` reaches it, and
        the folders that names; no server for a path it does not reach."""
        if segments == []:
            # Checked first: a token no folder takes must not get a root server of its own.
            # Only a folder token needs the folders it reaches (to exist at all, and to be named).
            if access.role != "folder":
                return self.root_server(access), []
            reached = [f for f in self._mcp_folders() if access.reaches(f)]
            return (self.root_server(access) if reached else None), reached
        if segments is None:
            return None, []
        folder = self.folder_at(segments[0], segments[1:])
        if folder is None or not access.reaches(folder):
            return None, []
        return self.server(self.endpoint_for(folder, segments[1:])), [folder]

    async def _answer(
        self, server: MCPServer, caller: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """The call itself, on the server's transport, with who calls noted for a write's stamp."""
        manager = await self.manager(server)
        notes = CallNotes()
        token = CALL_NOTES.set(notes)
        called = CALLER.set(caller)
        try:
            await manager.handle_request(scope, receive, noting(send, notes))
        finally:
            CALLER.reset(called)
            CALL_NOTES.reset(token)

    def _own_tokens_only(self, access: Access, segments: list[str] | None) -> bool:
        """Whether the agents' token names a folder with MCP on that takes its own tokens only: it is
        told so (403), where a missing folder answers 404. A credential of the server that reaches
        some folder may learn that much; the agents' token where every folder has tokens of its own
        reaches none, and gets the 404 of a missing folder, as a folder token does at another team's
        folder. The sub-path is not looked at, so nothing is told of what lies inside the folder."""
        if access.role != "agent" or not segments:
            return False
        found = read_folder(self.engine.docs_dir, segments[0])
        if found is None or not found.mcp or not found.token_digests:
            return False
        return any(access.reaches(f) for f in self._mcp_folders())

    def _unknown(self, access: Access) -> bool:
        """A token that is neither the server's nor any MCP folder's own."""
        return access.role == "folder" and not any(access.reaches(f) for f in self._mcp_folders())

    def _mcp_folders(self) -> list[Folder]:
        return [f for f in list_folders(self.engine.docs_dir) if f.mcp]

    async def manager(self, server: MCPServer) -> StreamableHTTPSessionManager:
        """One stateless transport manager per server, running for the life of the event loop: each
        request still gets a fresh transport, without setting a task group up and down per call."""
        manager = self._managers.get(server)
        if manager is None:
            manager = StreamableHTTPSessionManager(
                server._lowlevel_server,
                json_response=True,
                stateless=True,
                # Host and Origin were checked for every route already (serving/guard.py).
                security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
                max_request_body_size=MAX_MCP_BODY,
            )
            started = asyncio.Event()

            async def run() -> None:
                async with manager.run():
                    started.set()
                    await asyncio.Event().wait()  # until the loop shuts down

            loop = asyncio.get_running_loop()
            self._tasks[server] = (loop, loop.create_task(run()))
            await started.wait()
            self._managers[server] = manager
        return manager
