"""The operator's surroundings as real processes: an emulated Kubernetes API (cluster.py), a real
`ragdown serve` indexer over a temporary docs dir, and `ragdown-operator` itself as a process."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from tests.operator.cluster import Cluster, emulated_cluster
from tests.serving.conftest import free_port, start_serve, stop_process

TOKEN = "operator-test-token"
ADMIN_TOKEN = "operator-test-admin-token"
INTERNAL_TOKEN = "operator-test-internal-token"
NAMESPACE = "team"
HOST = "ragdown.test"
FOLDERS = f"/apis/ragdown.dev/v1alpha1/namespaces/{NAMESPACE}/ragdownfolders"
INGRESSES = f"/apis/networking.k8s.io/v1/namespaces/{NAMESPACE}/ingresses"
EVENTS = f"/api/v1/namespaces/{NAMESPACE}/events"
SECRETS = f"/api/v1/namespaces/{NAMESPACE}/secrets"
# The tests' own calls to the emulated API say so, to be told apart from the operator's.
TESTS_AGENT = "ragdown-tests"
# A raw MCP request, for checking who a route answers (200) and who it refuses (401/403/404).
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
WRITES = {"POST", "PUT", "PATCH", "DELETE"}
T = TypeVar("T")


def resync_runs(log: str, namespace: str, name: str, outcome: str = "") -> int:
    """How many resync runs of `namespace/name` (with `outcome`, e.g. "succeeded": any when empty) a
    log of the operator shows: kopf names the resource on each line (ragdown_operator/main.py)."""
    return log.count(f"[{namespace}/{name}] Timer 'resync' {outcome}")


async def eventually(check: Callable[[], Awaitable[T | None]], what: str, timeout: float = 60.0) -> T:
    """`check()`'s first truthy answer; the event loop keeps serving the emulated API meanwhile."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            answer = await check()
            if answer:
                return answer
            last = answer
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as error:
            last = error
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last: {last!r}")
        await asyncio.sleep(0.2)


@dataclass
class Indexer:
    """`ragdown serve` as the primary, as the chart's indexer runs it (or, with `extra_env`, a reader)."""

    docs: Path
    data: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    internal_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def internal_url(self) -> str:
        """Where readers reach it, as the chart's RAGDOWN_PRIMARY_URL names the indexer's internal port."""
        return f"http://127.0.0.1:{self.internal_port}"

    def start(self) -> None:
        env = {
            "RAGDOWN_ROLE": "primary",
            "RAGDOWN_ADMIN_TOKEN": ADMIN_TOKEN,
            "RAGDOWN_INTERNAL_TOKEN": INTERNAL_TOKEN,
            "RAGDOWN_INTERNAL_PORT": str(self.internal_port),
            **self.extra_env,
        }
        quiet = subprocess.DEVNULL
        self.process = start_serve(self.docs, self.data, self.port, TOKEN, stdout=quiet, stderr=quiet, **env)

    async def ready(self) -> None:
        async def answers() -> bool:
            assert self.process is not None
            assert self.process.poll() is None, "the indexer exited"
            async with httpx.AsyncClient(timeout=2) as http:
                return (await http.get(f"{self.url}/api/status")).status_code == 200

        await eventually(answers, "the indexer to answer")

    def stop(self) -> None:
        stop_process(self.process)

    def api(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30
        )


@dataclass
class Operator:
    """`ragdown-operator` against the emulated API and the indexer, configured as the chart does."""

    kube_url: str
    indexer_url: str
    log: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    liveness_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "RAGDOWN_OPERATOR_KUBE_URL": self.kube_url,
            "RAGDOWN_OPERATOR_INDEXER_URL": self.indexer_url,
            "RAGDOWN_ADMIN_TOKEN": ADMIN_TOKEN,
            "RAGDOWN_OPERATOR_NAMESPACE": NAMESPACE,
            "RAGDOWN_OPERATOR_INSTANCE": "rd",
            "RAGDOWN_OPERATOR_READER_SERVICE": "rd-ragdown-reader",
            "RAGDOWN_OPERATOR_INGRESS_CLASS": "traefik",
            "RAGDOWN_OPERATOR_INGRESS_HOST": HOST,
            "RAGDOWN_OPERATOR_RESYNC_S": "1",
            "RAGDOWN_OPERATOR_RETRY_S": "0.5",
            "RAGDOWN_OPERATOR_LIVENESS_PORT": str(self.liveness_port),
            "RAGDOWN_OPERATOR_METRICS_PORT": str(self.metrics_port),
            **self.extra_env,
        }

    def start(self) -> None:
        with self.log.open("ab") as out:  # the process writes to its own copy of the descriptor
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ragdown_operator.main"],
                env=self.env(),
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    async def command(self, *args: str) -> tuple[int, str]:
        """`ragdown-operator <args>` with the operator's environment: exit status and output. Not
        subprocess.run: the emulated API answers from this test's event loop."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "ragdown_operator.main",
            *args,
            env=self.env(),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(process.communicate(), timeout=60)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        return int(process.returncode or 0), out.decode(errors="replace")

    def stop(self) -> None:
        stop_process(self.process)


@dataclass
class World:
    cluster: Cluster
    kube: httpx.AsyncClient
    indexer: Indexer
    operator: Operator

    async def apply(
        self,
        name: str,
        spec: dict[str, Any],
        labels: dict[str, str] | None = None,
        finalizers: list[str] | None = None,
    ) -> dict[str, Any]:
        metadata = {
            "name": name,
            "namespace": NAMESPACE,
            "labels": labels or {},
            "finalizers": finalizers or [],
        }
        body = {
            "apiVersion": "ragdown.dev/v1alpha1",
            "kind": "RagdownFolder",
            "metadata": metadata,
            "spec": spec,
        }
        response = await self.kube.post(FOLDERS, json=body)
        response.raise_for_status()
        return dict(response.json())

    async def get(self, name: str) -> dict[str, Any] | None:
        response = await self.kube.get(f"{FOLDERS}/{name}")
        return None if response.status_code == 404 else dict(response.json())

    async def edit(self, name: str, spec: dict[str, Any]) -> None:
        response = await self.kube.patch(
            f"{FOLDERS}/{name}",
            content=json.dumps({"spec": spec}),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        response.raise_for_status()

    async def delete(self, name: str) -> None:
        (await self.kube.delete(f"{FOLDERS}/{name}")).raise_for_status()

    async def put_secret(self, name: str, data: dict[str, str]) -> None:
        """Create the Secret, or replace its data: values given as text, stored base64 as the API does."""
        encoded = {key: base64.b64encode(value.encode()).decode() for key, value in data.items()}
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": encoded}
        response = await self.kube.post(SECRETS, json=body)
        if response.status_code == 409:
            response = await self.kube.patch(
                f"{SECRETS}/{name}",
                content=json.dumps({"data": encoded}),
                headers={"Content-Type": "application/merge-patch+json"},
            )
        response.raise_for_status()

    async def delete_secret(self, name: str) -> None:
        (await self.kube.delete(f"{SECRETS}/{name}")).raise_for_status()

    async def ingress(self, name: str) -> dict[str, Any] | None:
        response = await self.kube.get(f"{INGRESSES}/{name}")
        return None if response.status_code == 404 else dict(response.json())

    async def condition(self, name: str, kind: str) -> dict[str, Any] | None:
        found = await self.get(name)
        for condition in ((found or {}).get("status") or {}).get("conditions") or []:
            if condition["type"] == kind:
                return dict(condition)
        return None

    async def settled(self, name: str, timeout: float = 60.0) -> dict[str, Any]:
        """The resource once Ready=True for its current generation."""

        async def ready() -> dict[str, Any] | None:
            found = await self.get(name)
            status = (found or {}).get("status") or {}
            generation = (found or {}).get("metadata", {}).get("generation")
            ok = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions", []))
            return found if ok and status.get("observedGeneration") == generation else None

        return await eventually(ready, f"{name} to be Ready", timeout)

    def events(self, name: str) -> list[dict[str, Any]]:
        """Events the operator posted about `name`, from everything the emulated API received."""
        posted = [r.data for r in self.cluster if r.method == "POST" and r.url.path == EVENTS]
        return [e for e in posted if isinstance(e, dict) and e.get("involvedObject", {}).get("name") == name]

    async def event_reasons(self, name: str, *wanted: str) -> set[str]:
        """The reasons of `name`'s events once all of `wanted` are among them (kopf posts in batches)."""

        async def posted() -> set[str]:
            reasons = {str(e.get("reason")) for e in self.events(name)}
            return reasons if set(wanted) <= reasons else set()

        return await eventually(posted, f"events {wanted} on {name}", timeout=20)

    async def finalizers(self, name: str) -> list[str]:
        return list(((await self.get(name)) or {}).get("metadata", {}).get("finalizers") or [])

    async def annotations(self, name: str) -> dict[str, str]:
        return dict(((await self.get(name)) or {}).get("metadata", {}).get("annotations") or {})

    async def gone(self, name: str) -> bool:
        return await self.get(name) is None

    def mark(self) -> int:
        """A point in the emulated API's request log, for `writes` and `operator_calls`."""
        return len(list(self.cluster))

    def operator_calls(self, mark: int) -> list[tuple[str, str]]:
        """(method, path) of every request since `mark` that did not come from the test."""
        calls = list(self.cluster)[mark:]
        return [(r.method.value, r.url.path) for r in calls if r.headers.get("User-Agent") != TESTS_AGENT]

    def writes(self, mark: int) -> list[tuple[str, str]]:
        """What the operators changed since `mark`: every create, patch and delete, events included."""
        return [(method, path) for method, path in self.operator_calls(mark) if method in WRITES]

    async def resynced(self, name: str, times: int = 2, log: Path | None = None) -> None:
        """Wait until the timer resynced `name` `times` times from now, as the operator's log (or
        another release's `log`) says."""
        path = log or self.operator.log
        start = path.stat().st_size

        async def runs() -> bool:
            with path.open("rb") as log:
                log.seek(start)
                text = log.read().decode("utf-8", errors="replace")
            return resync_runs(text, NAMESPACE, name) >= times

        await eventually(runs, f"{times} resyncs of {name}")

    def folder_config(self, folder: str) -> dict[str, Any]:
        return dict(json.loads((self.indexer.docs / folder / ".ragdown.json").read_text(encoding="utf-8")))


@asynccontextmanager
async def world(
    tmp_path: Path,
    start_indexer: bool = True,
    allowed_hosts: str = "",
    operator_env: dict[str, str] | None = None,
) -> AsyncIterator[World]:
    docs = tmp_path / "docs"
    docs.mkdir()
    indexer = Indexer(
        docs, tmp_path / "data", {"RAGDOWN_ALLOWED_HOSTS": allowed_hosts} if allowed_hosts else {}
    )
    if start_indexer:
        indexer.start()
        await indexer.ready()
    async with emulated_cluster() as cluster:
        kube_url = str(cluster.url).rstrip("/")
        operator = Operator(kube_url, indexer.url, tmp_path / "operator.log", dict(operator_env or {}))
        operator.start()
        try:
            headers = {"User-Agent": TESTS_AGENT}
            async with httpx.AsyncClient(base_url=kube_url, timeout=10, headers=headers) as kube:
                yield World(cluster, kube, indexer, operator)
        finally:
            operator.stop()
            indexer.stop()
            log = (tmp_path / "operator.log").read_text(encoding="utf-8", errors="replace")
            print(log[-6000:])


@asynccontextmanager
async def another_release(
    w: World, tmp_path: Path, instance: str, env: dict[str, str]
) -> AsyncIterator[Indexer]:
    """A second release in the same namespace: its own indexer and operator, against `w`'s API."""
    root = tmp_path / instance
    (root / "docs").mkdir(parents=True)
    indexer = Indexer(root / "docs", root / "data")
    indexer.start()
    overrides = {
        "RAGDOWN_OPERATOR_INSTANCE": instance,
        "RAGDOWN_OPERATOR_READER_SERVICE": f"{instance}-ragdown-reader",
    }
    operator = Operator(w.operator.kube_url, indexer.url, root / "operator.log", {**overrides, **env})
    try:
        await indexer.ready()
        operator.start()
        yield indexer
    finally:
        operator.stop()
        indexer.stop()
        if operator.log.exists():
            print(operator.log.read_text(encoding="utf-8", errors="replace")[-4000:])
