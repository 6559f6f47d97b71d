"""The operator at scale on a real API server (deploy/dev-cluster.sh): N RagdownFolders applied at once,
the time until all are Ready, the API requests of one quiet resync (from the API server's audit log),
and the operator's RSS. The operator runs as a process with a TokenRequest token for the chart's
ServiceAccount (tests/cluster/operator_process.py), beside a real `ragdown serve` indexer.

The API server must write an audit log of every request, which `up` does when given:

    mkdir -p /tmp/ragdown-audit && printf 'apiVersion: audit.k8s.io/v1\\nkind: Policy\\nomitStages:
      ["RequestReceived"]\\nrules:\\n  - level: Metadata\\n' >/tmp/ragdown-audit/policy.yaml
    RAGDOWN_K8S_APISERVER_ARGS="--audit-policy-file /tmp/ragdown-audit/policy.yaml
      --audit-log-path /tmp/ragdown-audit/audit.log" deploy/dev-cluster.sh up
    .venv/bin/python bench/operator_scale_cluster.py --audit-log /tmp/ragdown-audit/audit.log --folders 100
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.cluster.conftest import SCRIPT, Cluster  # noqa: E402
from tests.cluster.operator_process import ACCOUNT, Setup, crd, rbac, role_of, token_kubeconfig  # noqa: E402
from tests.operator.harness import Indexer  # noqa: E402

RESYNC_S = 20


def requests_since(audit: Path, offset: int, user: str) -> Counter[str]:
    """The operator's requests in the audit log after byte `offset`, by verb and resource."""
    counts: Counter[str] = Counter()
    with audit.open("rb") as log:
        log.seek(offset)
        for line in log:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("user", {}).get("username") != user:
                continue
            ref = event.get("objectRef") or {}
            resource = "/".join(filter(None, [ref.get("resource"), ref.get("subresource")])) or "(other)"
            counts[f"{event['verb']} {resource}"] += 1
    return counts


class CountingProxy:
    """A TCP proxy in front of the indexer that counts the HTTP requests going through it by method
    and path (the indexer keeps no request log), so the bench sees what the operator asks of it."""

    REQUEST = re.compile(rb"(GET|POST|PATCH|PUT|DELETE) (/[^ ?]*)[^ ]* HTTP/1\.1\r\n")

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("http://").rsplit(":", 1)
        self.target = (host, int(port))
        self.counts: Counter[str] = Counter()
        self.server: asyncio.base_events.Server | None = None
        self.url = ""

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, count: bool) -> None:
            try:
                while data := await src.read(65536):
                    if count:
                        for method, path in self.REQUEST.findall(data):
                            kind = (
                                "/api/folders/<name>" if path.startswith(b"/api/folders/") else path.decode()
                            )
                            self.counts[f"{method.decode()} {kind}"] += 1
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                dst.close()

        with contextlib.suppress(asyncio.CancelledError):  # the bench ending with connections open
            await asyncio.gather(pipe(reader, upstream_writer, True), pipe(upstream_reader, writer, False))


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def run(folders: int, audit: Path) -> None:
    env = subprocess.run([str(SCRIPT), "env"], capture_output=True, text=True, check=True).stdout
    values = dict(line.split("=", 1) for line in env.splitlines())
    cluster = Cluster(values["KUBECONFIG"], values["KUBECTL"], values["HELM"])
    namespace = f"bench-{uuid.uuid4().hex[:6]}"
    cluster.kubectl("create", "namespace", namespace)
    tmp = Path(tempfile.mkdtemp(prefix="operator-scale-"))
    (tmp / "docs").mkdir()
    indexer = Indexer(tmp / "docs", tmp / "data")
    indexer.start()
    try:
        crd(cluster)
        objects = rbac(cluster, namespace)
        for body in objects:
            cluster.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(body))
        await indexer.ready()
        setup = Setup(
            cluster,
            namespace,
            token_kubeconfig(cluster, namespace, tmp / "kc"),
            indexer,
            tmp,
            role_of(objects),
        )
        proxy = CountingProxy(indexer.url)
        await proxy.start()
        operator = setup.operator(
            RAGDOWN_OPERATOR_RESYNC_S=str(RESYNC_S), RAGDOWN_OPERATOR_INDEXER_URL=proxy.url
        )
        operator.start()
        assert operator.process is not None
        manifests = [
            {"apiVersion": "ragdown.dev/v1alpha1", "kind": "RagdownFolder",
             "metadata": {"name": f"f{i:04d}", "namespace": namespace}, "spec": {"mcp": True}}
            for i in range(folders)
        ]  # fmt: skip
        started = time.monotonic()
        cluster.kubectl(
            "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests})
        )
        while True:
            items = cluster.get("ragdownfolders", "-n", namespace)["items"]
            ready = sum(
                any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in (f.get("status") or {}).get("conditions") or []
                )
                for f in items
            )
            if ready == folders:
                break
            await asyncio.sleep(1)
        to_ready = time.monotonic() - started
        print(
            f"{folders} folders Ready in {to_ready:.1f} s; "
            f"operator RSS {rss_mib(operator.process.pid):.0f} MiB"
        )
        await asyncio.sleep(RESYNC_S * 1.5)  # past the first resyncs that follow creation
        offset = audit.stat().st_size
        window = RESYNC_S * 3
        proxy.counts.clear()
        cpu = cpu_s(operator.process.pid)
        await asyncio.sleep(window)
        busy = cpu_s(operator.process.pid) - cpu
        counts = requests_since(audit, offset, f"system:serviceaccount:{namespace}:{ACCOUNT}")
        per_resync = {key: round(n / (window / RESYNC_S), 1) for key, n in sorted(counts.items())}
        to_indexer = {key: round(n / (window / RESYNC_S), 1) for key, n in sorted(proxy.counts.items())}
        print(f"quiet: {sum(counts.values())} API requests in {window} s (resync every {RESYNC_S} s)")
        print(f"per resync of {folders}: API {per_resync}; indexer {to_indexer}")
        print(f"operator CPU in the quiet window: {busy:.1f} s ({busy / window * 100:.1f}% of one core)")
        print(f"operator RSS after: {rss_mib(operator.process.pid):.0f} MiB")
        operator.stop()
    finally:
        indexer.stop()
        cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folders", type=int, default=100)
    parser.add_argument("--audit-log", type=Path, required=True)
    args = parser.parse_args()
    asyncio.run(run(args.folders, args.audit_log))


if __name__ == "__main__":
    main()
