"""End to end on the real API server (docs/cluster.md#end-to-end-on-the-real-control-plane): a
RagdownFolder applied with `kubectl apply` → `ragdown-operator` as a real process, authenticated as the
chart's operator ServiceAccount (its Role and RoleBinding rendered from charts/ragdown) → an Ingress in
the real API → Debian's nginx configured from the Ingresses `kubectl get` returns, with ingress-nginx's
rules (tests/operator/nginx.py) → a real `ragdown serve` indexer and reader on loopback ports standing in
for the pods → the official MCP client through nginx. `mcp: false` and deleting the RagdownFolder each
remove the route (nginx's own 404).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.cluster.conftest import REPO, Cluster
from tests.operator.harness import HOST, TOKEN, Indexer, Operator, eventually
from tests.operator.nginx import NGINX_404, nginx_binary, nginx_from_ingresses

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.anyio]

CHART = REPO / "charts" / "ragdown"
INGRESS_CLASS = "nginx"
READER_SERVICE = "rd-ragdown-reader"
# The chart's operator identity: what `ragdown-operator` may do here is what the chart's Role grants.
IDENTITY = (
    "templates/operator-serviceaccount.yaml",
    "templates/operator-role.yaml",
    "templates/operator-rolebinding.yaml",
)


@pytest.fixture(autouse=True)
def nginx_installed() -> None:
    if nginx_binary() is None:
        if os.environ.get("RAGDOWN_REQUIRE_NGINX"):
            pytest.fail("nginx is not installed; CI installs Debian's nginx and must run these tests")
        pytest.skip("nginx is not installed (Debian's package `nginx`)")


@dataclass
class RealOperator(Operator):
    """The harness's operator process, logging in with a kubeconfig instead of an emulated API's URL."""

    kubeconfig: str = ""
    namespace: str = ""

    def env(self) -> dict[str, str]:
        env = super().env()
        del env["RAGDOWN_OPERATOR_KUBE_URL"]
        return {**env, "KUBECONFIG": self.kubeconfig, "RAGDOWN_OPERATOR_NAMESPACE": self.namespace}


@pytest.fixture
def operator_kubeconfig(cluster: Cluster, namespace: str, tmp_path: Path) -> str:
    """A kubeconfig holding a TokenRequest token of the chart's operator ServiceAccount."""
    cluster.kubectl("apply", "-f", str(REPO / "crds" / "ragdownfolder.yaml"))
    cluster.kubectl(
        "wait", "--for", "condition=established", "crd/ragdownfolders.ragdown.dev", "--timeout=60s"
    )
    shown = [arg for template in IDENTITY for arg in ("-s", template)]
    rendered = cluster.helm("template", "rd", str(CHART), "-n", namespace, *shown).stdout
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input=rendered)
    account = next(d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "ServiceAccount")
    token = cluster.kubectl("create", "token", account["metadata"]["name"], "-n", namespace).stdout.strip()
    config = json.loads(cluster.kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
    config["users"] = [{"name": "operator", "user": {"token": token}}]
    config["contexts"][0]["context"] = {
        **config["contexts"][0]["context"],
        "user": "operator",
        "namespace": namespace,
    }
    path = tmp_path / "operator.kubeconfig"
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def apply_folder(cluster: Cluster, namespace: str, name: str, spec: dict[str, Any]) -> None:
    manifest = {
        "apiVersion": "ragdown.dev/v1alpha1",
        "kind": "RagdownFolder",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))


@asynccontextmanager
async def agent(url: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": HOST}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@asynccontextmanager
async def serving(tmp_path: Path) -> AsyncIterator[tuple[Indexer, Indexer]]:
    """The indexer and one reader sharing its data dir, as the chart's pods share the claim."""
    docs = tmp_path / "docs"
    docs.mkdir()
    indexer = Indexer(docs, tmp_path / "data", {"RAGDOWN_ALLOWED_HOSTS": HOST})
    reader = Indexer(
        docs,
        tmp_path / "data",
        extra_env={
            "RAGDOWN_ROLE": "reader",
            "RAGDOWN_PRIMARY_URL": indexer.internal_url,
            "RAGDOWN_INTERNAL_PORT": "0",
            "RAGDOWN_ALLOWED_HOSTS": HOST,
        },
    )
    indexer.start()
    try:
        await indexer.ready()
        reader.start()
        await reader.ready()
        yield indexer, reader
    finally:
        reader.stop()
        indexer.stop()


async def test_a_folder_applied_with_kubectl_is_served_through_nginx_and_its_route_removed(
    cluster: Cluster, namespace: str, operator_kubeconfig: str, tmp_path: Path
) -> None:
    async with serving(tmp_path) as (indexer, reader):
        operator = RealOperator(
            kube_url="",
            indexer_url=indexer.url,
            log=tmp_path / "operator.log",
            extra_env={
                "RAGDOWN_OPERATOR_INGRESS_CLASS": INGRESS_CLASS,
                "RAGDOWN_OPERATOR_READER_SERVICE": READER_SERVICE,
            },
            kubeconfig=operator_kubeconfig,
            namespace=namespace,
        )
        operator.start()
        try:
            apply_folder(cluster, namespace, "work", {"title": "Work notes", "mcp": True})
            apply_folder(cluster, namespace, "private", {"title": "Private", "mcp": False})

            async def ingresses() -> list[dict[str, Any]]:
                got = await asyncio.to_thread(cluster.get, "ingresses", "-n", namespace)
                return list(got["items"])

            async def routed() -> list[str]:
                return [i["metadata"]["name"] for i in await ingresses()]

            assert await eventually(routed, "the operator's Ingress in the real API") == ["work-mcp"]
            ingress = cluster.get("ingress", "work-mcp", "-n", namespace, "--show-managed-fields")
            assert ingress["spec"]["ingressClassName"] == INGRESS_CLASS
            managers = {m["manager"] for m in ingress["metadata"]["managedFields"]}
            assert "ragdown-operator" in managers
            services = {(READER_SERVICE, 3000): reader.url.removeprefix("http://")}
            prefix = tmp_path / "nginx"
            async with nginx_from_ingresses(prefix, ingresses, services, INGRESS_CLASS, poll_s=1) as proxy:
                assert proxy.refused == []
                async with agent(f"{proxy.url}/mcp/work") as client:
                    tools = {t.name for t in (await client.list_tools()).tools}
                    assert {"ragdown_recall", "ragdown_write", "ragdown_context"} <= tools
                    written = await client.call_tool(
                        "ragdown_write",
                        {"path": "deploys.md", "text": "# Deploys\n\nBlue green rollout steps.\n"},
                    )
                    assert not written.is_error, text(written)
                    assert (indexer.docs / "work" / "deploys.md").is_file()

                    async def found() -> bool:
                        answer = await client.call_tool(
                            "ragdown_recall", {"query": "blue green rollout", "top_k": 1}
                        )
                        return text(answer).startswith("[1] deploys.md")

                    await eventually(found, "the write to be found through the reader")

                async with httpx.AsyncClient(base_url=proxy.url, headers={"Host": HOST}, timeout=10) as http:

                    async def closed(path: str) -> bool:
                        assert proxy.failure is None, proxy.failure
                        answer = await http.post(path, json={})
                        return answer.status_code == 404 and NGINX_404 in answer.text

                    assert (await http.post("/mcp/work", json={})).status_code == 401  # the server's own
                    assert await closed("/mcp/private")  # mcp: false never had a route
                    # `mcp: false`: the operator removes the Ingress, nginx the route.
                    apply_folder(cluster, namespace, "work", {"title": "Work notes", "mcp": False})
                    await eventually(lambda: closed("/mcp/work"), "the work route to be removed")
                    # Back on, then the RagdownFolder deleted: the route goes with it.
                    apply_folder(cluster, namespace, "work", {"title": "Work notes", "mcp": True})

                    async def open_again() -> bool:
                        return (await http.post("/mcp/work", json={})).status_code == 401

                    await eventually(open_again, "the work route to come back")
                    cluster.kubectl("delete", "ragdownfolder", "work", "-n", namespace, "--timeout=60s")
                    await eventually(lambda: closed("/mcp/work"), "the route of the deleted folder to go")
                    assert await routed() == []
        finally:
            operator.stop()
            print(operator.log.read_text(encoding="utf-8", errors="replace")[-6000:])
