"""The cluster's shape as local processes (docs/design.md#how-it-is-tested): an indexer and a reader sharing
one data
dir, the operator reconciling two RagdownFolders against the emulated API, and a path router built
from the Ingress objects the operator created — the part an ingress controller plays in a cluster.
An agent's MCP client goes through that router only."""

from __future__ import annotations

import posixpath
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from aiohttp import web
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.operator.harness import HOST, INGRESSES, TOKEN, Indexer, World, eventually, world
from tests.serving.conftest import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
# The Host header passes through, as ingress controllers pass it: the readers must allow the ingress host.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def prefix_matches(prefix: str, path: str) -> bool:
    """Ingress `Prefix` semantics, by whole path elements: `/mcp/work` matches `/mcp/work/x`, not
    `/mcp/workx`."""
    prefix = prefix.rstrip("/") or "/"
    return prefix == "/" or path == prefix or path.startswith(prefix + "/")


def route(ingresses: list[dict[str, Any]], host: str, path: str) -> tuple[str, int] | None:
    """The (service, port) of the longest matching Prefix path among rules for `host`, as a
    controller picks it; None is the controller's default 404."""
    best: tuple[int, str, int] | None = None
    for ingress in ingresses:
        for rule in ingress["spec"].get("rules", []):
            if rule.get("host") not in (None, host):
                continue
            for entry in rule["http"]["paths"]:
                assert entry["pathType"] == "Prefix"
                if prefix_matches(entry["path"], path):
                    service = entry["backend"]["service"]
                    candidate = (len(entry["path"]), service["name"], service["port"]["number"])
                    best = max(best, candidate) if best else candidate
    return (best[1], best[2]) if best else None


@asynccontextmanager
async def router(w: World, services: dict[tuple[str, int], str]) -> AsyncIterator[str]:
    """An HTTP router whose routes are the Ingresses in the namespace, read again for every request."""

    async def forward(request: web.Request) -> web.StreamResponse:
        listing = (await w.kube.get(INGRESSES)).json()
        path = posixpath.normpath(request.path) if request.path != "/" else "/"
        target = route(listing.get("items", []), HOST, path)
        if target is None:
            return web.Response(status=404, text="default backend - 404")
        async with httpx.AsyncClient(base_url=services[target], timeout=60) as http:
            upstream = await http.request(
                request.method,
                request.raw_path,
                headers={k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP},
                content=await request.read(),
            )
        headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP}
        return web.Response(status=upstream.status_code, headers=headers, body=upstream.content)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def agent(url: str) -> AsyncIterator[Client]:
    # The Host an agent sends through the ingress: the server's DNS-rebinding check must allow it.
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": HOST}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_agents_reach_only_mcp_folders_through_the_operators_routes(tmp_path: Path) -> None:
    async with world(tmp_path, allowed_hosts=HOST) as w:
        reader = Indexer(
            w.indexer.docs,
            w.indexer.data,
            extra_env={
                "RAGDOWN_ROLE": "reader",
                "RAGDOWN_PRIMARY_URL": w.indexer.internal_url,
                "RAGDOWN_INTERNAL_PORT": "0",
                "RAGDOWN_ALLOWED_HOSTS": HOST,
            },
        )
        reader.start()
        try:
            await reader.ready()
            await w.apply("work", {"title": "Work notes", "mcp": True})
            await w.apply("private", {"title": "Private", "mcp": False})
            await w.settled("work")
            await w.settled("private")
            services = {("rd-ragdown-reader", 3000): reader.url}
            async with router(w, services) as base:
                async with agent(f"{base}/mcp/work") as client:
                    tools = {t.name for t in (await client.list_tools()).tools}
                    assert {"ragdown_recall", "ragdown_write", "ragdown_context"} <= tools
                    written = await client.call_tool(
                        "ragdown_write",
                        {"path": "deploys.md", "text": "# Deploys\n\nBlue green rollout steps.\n"},
                    )
                    assert not written.is_error, text(written)
                    # Written by the indexer (the reader's volume is the indexer's), found through the reader.
                    assert (w.indexer.docs / "work" / "deploys.md").is_file()
                    found = await client.call_tool(
                        "ragdown_recall", {"query": "blue green rollout", "top_k": 1}
                    )
                    assert text(found).startswith("[1] deploys.md")

                async with httpx.AsyncClient(timeout=10) as http:
                    hidden = await http.post(
                        f"{base}/mcp/private",
                        headers={"Authorization": f"Bearer {TOKEN}"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    )
                    assert hidden.status_code == 404
                    assert hidden.text == "default backend - 404"  # no route at all, not the server's answer
                    sideways = await http.post(f"{base}/mcp/work/../private", json={})
                    assert sideways.status_code == 404

                # Turning MCP off removes the route; the next request finds no way in.
                await w.edit("work", {"mcp": False})

                async def closed() -> bool:
                    async with httpx.AsyncClient(timeout=10) as http:
                        answer = await http.post(f"{base}/mcp/work", json={})
                    return answer.status_code == 404

                await eventually(closed, "the work route to be removed")
        finally:
            reader.stop()
