"""A real `serve` app on a free port (uvicorn in a thread), over real LanceDB and the hash embedder,
and the official MCP client speaking to it over HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from ragdown.engine import Engine
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.serving.http import RagdownApp, create_app
from ragdown.settings import ServerSettings

# An MCP initialize request, for checking whether an endpoint is there at all.
MCP_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
TOKEN = "test-token-1234"
ADMIN_TOKEN = "test-admin-token-5678"

FOLDERS: dict[str, Any] = {
    "ops": {".ragdown.json": {"title": "Ops runbooks", "mcp": True}},
    "private": {".ragdown.json": {"title": "Private", "mcp": False}},
}
DOCS = {
    "ops/backups.md": "---\ntags: [ops, db]\naliases: [Restores]\n---\n# Backups\n\n## Restore\n\n"
    "Run pg_restore into a fresh database.\nThen compare row counts.\n",
    "ops/db/vacuum.md": "# Vacuum\n\nNightly vacuum on postgres keeps bloat down. See [[backups]].\n",
    "ops/cache.md": "# Cache\n\n## Redis eviction\n\nRedis evicts keys by maxmemory-policy.\n",
    "private/diary.md": "# Diary\n\nRedis secrets nobody should read.\n",
    "loose.md": "# Loose\n\nNot in any folder.\n",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    url: str
    engine: Engine
    docs: Path
    app: RagdownApp

    def http(self, token: str | None = TOKEN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def admin(self) -> httpx.Client:
        """A client with the admin token, as the /api routes need."""
        return self.http(ADMIN_TOKEN)

    @asynccontextmanager
    async def mcp(self, path: str = "/mcp/ops", token: str | None = TOKEN) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(self.url + path, http_client=http)) as client,
        ):
            yield client


@asynccontextmanager
async def mcp_session(url: str, token: str, timeout: float = 60) -> AsyncIterator[Client]:
    """The official MCP client over streamable HTTP to `url`, with `token` as the bearer."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def text_of(result: CallToolResult) -> str:
    """A tool result's text (an error's too): its text blocks joined."""
    return "".join(getattr(c, "text", "") for c in result.content)


async def call_tool(url: str, token: str, tool: str, arguments: dict[str, Any]) -> str:
    """One tool call in its own session; the answer's text (an error's too)."""
    async with mcp_session(url, token) as client:
        return text_of(await client.call_tool(tool, arguments))


def hook_calls(url: str, *min_scores: float) -> None:
    """One ragdown_context call to /mcp/ops per floor (0 lets sections through, 1 none), in a thread
    of its own so that it also runs beside Playwright's sync API, which holds an event loop here."""

    async def calls() -> None:
        for n, floor in enumerate(min_scores):
            prompt = {
                "prompt": "how do I restore a postgres backup",
                "session_id": f"s{n}",
                "min_score": floor,
            }
            await call_tool(url + "/mcp/ops", TOKEN, "ragdown_context", prompt)

    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, calls).result()


def serve(docs: Path, data_dir: Path, settings: ServerSettings) -> Iterator[Served]:
    engine = Engine(
        docs,
        data_dir,
        HashEmbedder(),
        source="hash",
        settings=settings,
        folders_mode=True,
        server_config=docs / ".ragdown-server.json",
    )
    engine.sync()
    engine.syncer.compaction.drain()  # now, not in the background during a test that compares files
    assert engine.lifecycle.snapshots is not None
    engine.lifecycle.snapshots.wait()  # the search snapshot is written in the background
    port = free_port()
    app = create_app(engine, settings)
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield Served(f"http://127.0.0.1:{port}", engine, docs, app)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        engine.close()


@pytest.fixture
def folder_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    for name, files in FOLDERS.items():
        for file, content in files.items():
            path = docs / name / file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(content), encoding="utf-8")
    for relative, text in DOCS.items():
        path = docs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return docs


@pytest.fixture
def make_served(folder_docs: Path, tmp_path: Path) -> Iterator[Callable[..., Served]]:
    started: list[Iterator[Served]] = []

    def make(**settings: Any) -> Served:
        options = {
            "token": TOKEN,
            "admin_token": ADMIN_TOKEN,
            "watch": False,
            "hook_min_score": 0.0,
            "hook_min_ratio": 0.0,
            **settings,
        }
        generator = serve(folder_docs, tmp_path / f"data{len(started)}", ServerSettings(**options))
        started.append(generator)
        return next(generator)

    yield make
    for generator in started:
        next(generator, None)


@pytest.fixture
def served(make_served: Callable[..., Served]) -> Served:
    return make_served()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def wait_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    """Until a `ragdown serve` process has indexed something and finished syncing."""
    deadline = time.monotonic() + 120
    while True:
        try:
            status = httpx.get(f"{url}/api/status", timeout=2).json()
            if not status["syncing"] and status["files"]:
                return
        except httpx.HTTPError:
            pass
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "serve did not become ready"
        time.sleep(0.2)


def start_serve(
    docs: Path,
    data: Path,
    port: int,
    token: str,
    *,
    stdout: int = subprocess.PIPE,
    stderr: int = subprocess.PIPE,
    **env: str,
) -> subprocess.Popen[bytes]:
    """`ragdown serve` as a process with the hash embedder (output kept for a failure message unless
    `stdout`/`stderr` say otherwise); `env` adds to or overrides its variables."""
    return subprocess.Popen(
        [sys.executable, "-m", "ragdown.cli", "serve"],
        env={
            **os.environ,
            "RAGDOWN_DOCS_DIR": str(docs),
            "RAGDOWN_DATA_DIR": str(data),
            "RAGDOWN_EMBEDDER": "hash",
            "RAGDOWN_TOKEN": token,
            "PORT": str(port),
            "RAGDOWN_METRICS_PORT": "0",
            **env,
        },
        stdout=stdout,
        stderr=stderr,
    )


def stop_process(process: subprocess.Popen[bytes] | None) -> bytes:
    """Terminate, and kill what does not stop within 20 s; then close its pipes. Returns what it had
    left in a piped stderr (for a failure message)."""
    if process is None:
        return b""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    left = process.stderr.read() if process.stderr is not None and not process.stderr.closed else b""
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
    return left
