"""The cluster's shape as local processes (docs/design.md#how-it-is-tested): an indexer and a reader sharing
one data dir, the operator reconciling two RagdownFolders against the emulated API, and Debian's nginx
configured from the Ingress objects the operator created (tests/operator/nginx.py), the part an
ingress controller plays in a cluster. An agent's MCP client goes through nginx only."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.operator.harness import HOST, INGRESSES, TOKEN, Indexer, World, eventually, world
from tests.operator.nginx import NGINX_404, nginx_binary, nginx_from_ingresses

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
# The class the harness's operator writes (RAGDOWN_OPERATOR_INGRESS_CLASS); nginx here plays whichever
# controller owns it, with ingress-nginx's rules.
INGRESS_CLASS = "traefik"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def nginx_installed() -> None:
    if nginx_binary() is None:
        if os.environ.get("RAGDOWN_REQUIRE_NGINX"):
            pytest.fail("nginx is not installed; CI installs Debian's nginx and must run these tests")
        pytest.skip("nginx is not installed (Debian's package `nginx`)")


async def ingresses(w: World) -> list[dict[str, Any]]:
    return list((await w.kube.get(INGRESSES)).json().get("items", []))


@asynccontextmanager
async def agent(url: str) -> AsyncIterator[Client]:
    # The Host an agent sends through the ingress: the server's DNS-rebinding check must allow it.
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": HOST}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def raw_post(port: int, path: str) -> tuple[int, str]:
    """A POST with its path exactly as given; the status and the whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {TOKEN}\r\n"
    writer.write(f"{head}Content-Length: 0\r\nConnection: close\r\n\r\n".encode())
    answer = (await reader.read()).decode(errors="replace")
    writer.close()
    return int(answer.split(" ", 2)[1]), answer


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
            # A '.' in the name: a path ingress-nginx refuses as `Prefix` (docs/cluster.md#mcp-ingresses).
            await w.apply("notes-v2", {"folder": "notes.v2", "title": "Notes v2", "mcp": True})
            for name in ("work", "private", "notes-v2"):
                await w.settled(name)
            services = {("rd-ragdown-reader", 3000): reader.url.removeprefix("http://")}
            listing = lambda: ingresses(w)  # noqa: E731
            async with nginx_from_ingresses(tmp_path / "nginx", listing, services, INGRESS_CLASS) as proxy:
                base = proxy.url
                assert proxy.refused == []
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
                async with agent(f"{base}/mcp/notes.v2") as client:
                    listed = await client.call_tool("ragdown_list", {})
                    assert not listed.is_error, text(listed)

                # Requests as an agent sends them, by the ingress's host name.
                through = httpx.AsyncClient(base_url=base, headers={"Host": HOST}, timeout=10)
                async with through as http:
                    # The route exists: the server itself answers (and wants a token).
                    assert (await http.post("/mcp/work", json={})).status_code == 401
                    hidden = await http.post(
                        "/mcp/private",
                        headers={"Authorization": f"Bearer {TOKEN}"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    )
                    assert hidden.status_code == 404
                    assert NGINX_404 in hidden.text  # nginx's own page: no route at all
                    # Sent as written (an HTTP client would remove the dot segments first): nginx
                    # resolves them itself and finds no route, nor one for a longer name.
                    for sideways in ("/mcp/work/../private", "/mcp/work/%2e%2e/private", "/mcp/workx"):
                        status, body = await raw_post(proxy.port, sideways)
                        assert status == 404, sideways
                        assert NGINX_404 in body, sideways
                    # Another host name matches no rule: the default server's 404.
                    elsewhere = await http.post("/mcp/work", headers={"Host": "other.test"}, json={})
                    assert elsewhere.status_code == 404
                    assert NGINX_404 in elsewhere.text

                    # Turning MCP off removes the route; the next request finds no way in.
                    await w.edit("work", {"mcp": False})

                    async def closed() -> bool:
                        assert proxy.failure is None, proxy.failure  # a reload nginx refused
                        answer = await http.post("/mcp/work", json={})
                        return answer.status_code == 404 and NGINX_404 in answer.text

                    await eventually(closed, "the work route to be removed")
                assert "/mcp/work" not in proxy.config
        finally:
            reader.stop()
