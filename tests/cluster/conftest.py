"""The cluster tier: a real Kubernetes control plane (docs/cluster.md#a-real-control-plane).

`deploy/dev-cluster.sh up` starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
kwok (three fake nodes in two zones) from binaries built once per machine from Go modules. The session
reuses a cluster that already answers (and leaves it running), or starts one and stops it at the end.
Skipped, with the reason, where the binaries are not built, unless RAGDOWN_REQUIRE_CLUSTER is set
(.ci/run sets it when Go is present, and builds them first): there the tier must run.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from tests.cluster.operator_process import Setup

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")
SCRIPT = REPO / "deploy" / "dev-cluster.sh"
NODES = {"node-a1": "zone-a", "node-a2": "zone-a", "node-b1": "zone-b"}


@dataclass(frozen=True)
class Cluster:
    """The real tools, pointed at the dev cluster with its admin identity."""

    kubeconfig: str
    kubectl_path: str
    helm_path: str

    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": self.kubeconfig}

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.kubectl_path, *args],
            input=input,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=timeout,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {done.stderr.strip()}")
        return done

    def helm(self, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.helm_path, *args], capture_output=True, text=True, env=self.env(), timeout=timeout
        )
        if check and done.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed: {done.stderr.strip()}")
        return done

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", "-o", "json", *args).stdout)


def settled(check: Callable[[], T], timeout: float = 120, every: float = 1) -> T:
    """`check()` once it stops raising AssertionError (the last one is raised after `timeout`): the
    real controllers and kwok take their time."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(every)


def script(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


def unavailable(reason: str) -> None:
    if os.environ.get("RAGDOWN_REQUIRE_CLUSTER"):
        pytest.fail(f"{reason}, and RAGDOWN_REQUIRE_CLUSTER is set: CI must run the cluster tier")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    started = False
    if script("status").returncode != 0:
        built = script("built")
        if built.returncode != 0:
            unavailable(built.stderr.strip().removeprefix("dev-cluster: "))
        up = script("up")
        assert up.returncode == 0, f"deploy/dev-cluster.sh up failed:\n{up.stderr[-3000:]}"
        started = True
    values = dict(line.split("=", 1) for line in script("env").stdout.splitlines())
    try:
        yield Cluster(values["KUBECONFIG"], values["KUBECTL"], values["HELM"])
    finally:
        if started:
            script("down")


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    """A namespace of the test's own, deleted (without waiting) afterwards."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("create", "namespace", name)
    yield name
    cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


def persistent_volume(cluster: Cluster, namespace: str, on_node: str = "") -> dict[str, Any]:
    """A PersistentVolume in the default class for the chart's claim. Given `on_node`, a `local`
    volume only that node can use, as a ReadWriteOnce disk attached to it is (kwok has no attach and
    detach to hold a volume to one node, so the node affinity does it); else a hostPath offering both
    access modes, as a network volume any node mounts."""
    name = f"pv-{namespace}"
    spec: dict[str, Any] = {
        "capacity": {"storage": "20Gi"},
        "accessModes": ["ReadWriteOnce", "ReadWriteMany"],
        "storageClassName": "standard",
        "persistentVolumeReclaimPolicy": "Retain",
        "hostPath": {"path": f"/var/lib/ragdown-dev/{name}"},
    }
    if on_node:
        del spec["hostPath"]
        spec["accessModes"] = ["ReadWriteOnce"]
        spec["local"] = {"path": f"/var/lib/ragdown-dev/{name}"}
        term = {"key": "kubernetes.io/hostname", "operator": "In", "values": [on_node]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}
    cluster.kubectl("apply", "-f", "-", input=json.dumps(pv))
    return pv


@pytest.fixture
def volume(cluster: Cluster, namespace: str) -> Iterator[str]:
    """The name of a PersistentVolume for the chart's claim (`persistent_volume`), deleted afterwards:
    nothing provisions volumes here (no CSI driver) and no kubelet ever mounts it."""
    name = persistent_volume(cluster, namespace)["metadata"]["name"]
    yield name
    cluster.kubectl("delete", "pv", name, "--wait=false", check=False)


@pytest.fixture
def anyio_backend() -> str:
    """The cluster tier's async tests run on asyncio (kopf's and the MCP client's loop)."""
    return "asyncio"


@pytest.fixture
async def setup(cluster: Cluster, namespace: str, tmp_path: Path) -> AsyncIterator[Setup]:
    """The operator's surroundings in a namespace of the test's own (operator_process.operator_setup)."""
    from tests.cluster.operator_process import operator_setup  # it imports this module

    async with operator_setup(cluster, namespace, tmp_path) as made:
        yield made
