"""`ragdown-operator` as a real process against the dev cluster's API server, authenticated as the
chart's operator ServiceAccount (a TokenRequest token), beside a real `ragdown serve` indexer: what
tests/cluster's operator tests share (docs/cluster.md#a-real-control-plane)."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.conftest import REPO, Cluster
from tests.operator.harness import Indexer, Operator, eventually

RELEASE = "rd"
ACCOUNT = f"{RELEASE}-ragdown-operator"
TEMPLATES = ("operator-serviceaccount.yaml", "operator-role.yaml", "operator-rolebinding.yaml")
STATE = Path(os.environ.get("RAGDOWN_K8S_STATE") or f"/tmp/ragdown-k8s-{os.getuid()}")


def crd(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", str(REPO / "crds" / "ragdownfolder.yaml"))
    established = ("--for", "condition=established", "crd/ragdownfolders.ragdown.dev", "--timeout=60s")
    cluster.kubectl("wait", *established)


def rbac(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    """The chart's operator ServiceAccount, Role and RoleBinding, rendered by the real helm CLI."""
    shown = [arg for name in TEMPLATES for arg in ("--show-only", f"templates/{name}")]
    chart = str(REPO / "charts" / "ragdown")
    done = cluster.helm("template", RELEASE, chart, "--namespace", namespace, *shown)
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def role_of(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "Role")


def without(role: dict[str, Any], group: str, resource: str, verb: str) -> dict[str, Any]:
    """`role` less one verb on one resource (a rule left with no verb is dropped)."""
    rules = []
    for rule in role["rules"]:
        if group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]:
            assert rule["apiGroups"] == [group], rule
            assert rule["resources"] == [resource], rule
            rule = {**rule, "verbs": [v for v in rule["verbs"] if v != verb]}
            if not rule["verbs"]:
                continue
        rules.append(rule)
    assert rules != role["rules"], f"the Role grants no {verb} on {group}/{resource}"
    return {**role, "rules": rules}


def token_kubeconfig(cluster: Cluster, namespace: str, path: Path) -> Path:
    """A kubeconfig holding only the server, its CA and a TokenRequest token for the operator's account."""
    token = cluster.kubectl("create", "token", ACCOUNT, "-n", namespace, "--duration", "2h").stdout.strip()
    server = yaml.safe_load(Path(cluster.kubeconfig).read_text())["clusters"][0]["cluster"]
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "operator",
        "clusters": [{"name": "dev", "cluster": server}],
        "users": [{"name": "operator", "user": {"token": token}}],
        "contexts": [{"name": "operator", "context": {"cluster": "dev", "user": "operator"}}],
    }))  # fmt: skip
    return path


@dataclass
class Setup:
    cluster: Cluster
    namespace: str
    kubeconfig: Path
    indexer: Indexer
    tmp: Path
    chart_role: dict[str, Any]

    def operator(self, log: str = "operator.log", **env: str) -> Operator:
        """The operator as the chart configures it, logging in with the ServiceAccount's kubeconfig."""
        return Operator(
            "",  # no explicit URL: the kubeconfig
            self.indexer.url,
            self.tmp / log,
            {
                "KUBECONFIG": str(self.kubeconfig),
                "RAGDOWN_OPERATOR_NAMESPACE": self.namespace,
                "RAGDOWN_OPERATOR_RETRY_S": "1",
                **env,
            },
        )

    def apply(self, name: str, spec: dict[str, Any]) -> None:
        manifest = {
            "apiVersion": "ragdown.dev/v1alpha1",
            "kind": "RagdownFolder",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": spec,
        }
        self.cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))

    def get(self, kind: str, name: str) -> dict[str, Any] | None:
        done = self.cluster.kubectl("get", kind, name, "-n", self.namespace, "-o", "json", check=False)
        if done.returncode != 0:
            assert "NotFound" in done.stderr, done.stderr
            return None
        return dict(json.loads(done.stdout))

    def ingresses(self) -> list[dict[str, Any]]:
        return list(self.cluster.get("ingresses", "-n", self.namespace)["items"])

    def ready(self, name: str) -> bool:
        found = self.get("ragdownfolder", name) or {}
        status = found.get("status") or {}
        ok = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])
        return ok and status.get("observedGeneration") == found["metadata"]["generation"]

    def secret(self, name: str, data: dict[str, str]) -> None:
        encoded = {key: base64.b64encode(value.encode()).decode() for key, value in data.items()}
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": encoded}
        self.cluster.kubectl("apply", "-n", self.namespace, "-f", "-", input=json.dumps(body))

    def role(self, role: dict[str, Any]) -> None:
        self.cluster.kubectl("apply", "-n", self.namespace, "-f", "-", input=json.dumps(role))


def api_requests(cluster: Cluster) -> Counter[str]:
    """Requests on single objects (the scope of a read, an apply or a status patch) the API server has
    served since it started, by verb and resource[/subresource]. Collection calls (lists, watches, a
    namespace controller's deletecollection) are left out: other tests' namespaces are torn down meanwhile."""
    counts: Counter[str] = Counter()
    for line in cluster.kubectl("get", "--raw", "/metrics").stdout.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line[: line.rindex("}")]))
        if labels.get("scope") != "resource":
            continue
        resource = labels.get("resource", "") + (
            f"/{labels['subresource']}" if labels.get("subresource") else ""
        )
        counts[f"{labels.get('verb')} {resource}"] += int(float(line.rsplit(" ", 1)[1]))
    return counts


@contextmanager
def running(operator: Operator) -> Iterator[Operator]:
    operator.start()
    try:
        yield operator
    finally:
        operator.stop()


def log_of(operator: Operator) -> str:
    return operator.log.read_text(encoding="utf-8", errors="replace") if operator.log.exists() else ""


def kill(process: subprocess.Popen[bytes] | None) -> None:
    assert process is not None
    process.kill()
    process.wait(timeout=30)


def alive(pid: int) -> bool:
    """Running (not a zombie waiting for a parent that is not this test)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


# The API servers restart_apiserver started: they outlive the test (deploy/dev-cluster.sh down stops
# them by their pid file), so their handles are kept, not collected while the process runs.
RESTARTED: list[subprocess.Popen[bytes]] = []


def restart_apiserver(cluster: Cluster, down_for: float = 0, admission: str = "") -> str:
    """Stop kube-apiserver (SIGTERM, as a node reboot or an upgrade does) and start it again with the
    same command line, in its own session, logging where deploy/dev-cluster.sh logs it; its pid file
    then names the new process, so `down` still stops it. With `admission`, its
    --enable-admission-plugins becomes that; the plugins it had are returned, to restore them."""
    pid_file = STATE / "kube-apiserver.pid"
    if not pid_file.exists():
        pytest.skip(f"no {pid_file}: the cluster was not started by deploy/dev-cluster.sh with this state")
    pid = int(pid_file.read_text())
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().rstrip("\0").split("\0")
    flag = argv.index("--enable-admission-plugins")
    had = argv[flag + 1]
    if admission:
        argv[flag + 1] = admission
    # SIGTERM, and SIGKILL if the graceful shutdown (which waits out open watches) takes long.
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
        while alive(pid):
            time.sleep(0.2)
    assert cluster.kubectl("get", "--raw", "/readyz", check=False, timeout=10).returncode != 0
    time.sleep(down_for)
    with (STATE / "kube-apiserver.log").open("ab") as log:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    RESTARTED.append(process)
    pid_file.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + 120
    while cluster.kubectl("get", "--raw", "/readyz", check=False, timeout=10).returncode != 0:
        assert process.poll() is None, "kube-apiserver exited after its restart"
        assert time.monotonic() < deadline, "kube-apiserver did not answer /readyz after its restart"
        time.sleep(0.5)
    return had


@asynccontextmanager
async def operator_setup(cluster: Cluster, namespace: str, tmp_path: Path) -> AsyncIterator[Setup]:
    """The CRD, the chart's operator RBAC in `namespace`, a real indexer, and a kubeconfig holding only
    a TokenRequest token of the operator's ServiceAccount."""
    crd(cluster)
    objects = rbac(cluster, namespace)
    for body in objects:
        cluster.kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(body))
    (tmp_path / "docs").mkdir()
    indexer = Indexer(tmp_path / "docs", tmp_path / "data")
    indexer.start()
    try:
        await indexer.ready()
        kubeconfig = token_kubeconfig(cluster, namespace, tmp_path / "kubeconfig")
        yield Setup(cluster, namespace, kubeconfig, indexer, tmp_path, role_of(objects))
    finally:
        indexer.stop()


async def until(check: Callable[[], Any], what: str, timeout: float = 90) -> Any:
    """`check()`'s first truthy answer, a synchronous check polled on the event loop."""

    async def once() -> Any:
        return check()

    return await eventually(once, what, timeout)
