"""The dev cluster is what docs/cluster.md#what-up-starts promises: three Ready nodes in two zones,
RBAC deciding what a ServiceAccount's signed token may do, and the controller-manager's controllers
at work in a new namespace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cluster.conftest import NODES, Cluster

pytestmark = [pytest.mark.slow, pytest.mark.cluster]


def test_three_ready_nodes_in_two_zones(cluster: Cluster) -> None:
    nodes = cluster.get("nodes")["items"]
    zones = {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes}
    assert zones == NODES
    for node in nodes:
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert [c["status"] for c in ready] == ["True"], node["metadata"]["name"]
        assert not node["spec"].get("taints"), node["metadata"]["name"]


def test_a_service_account_token_gets_only_what_rbac_grants(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    cluster.kubectl("create", "serviceaccount", "probe", "-n", namespace)
    # TokenRequest: signed by the API server with the cluster's ServiceAccount key.
    token = cluster.kubectl("create", "token", "probe", "-n", namespace).stdout.strip()
    claims = json.loads(cluster.kubectl("create", "-f", "-", "-o", "json", input=json.dumps({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token},
    })).stdout)["status"]  # fmt: skip
    assert claims["authenticated"] is True
    assert claims["user"]["username"] == f"system:serviceaccount:{namespace}:probe"

    # The token alone: a kubeconfig holding only the server and its CA, not the admin's certificate.
    server = yaml.safe_load(Path(cluster.kubeconfig).read_text())["clusters"][0]["cluster"]
    only_token = tmp_path / "probe.kubeconfig"
    only_token.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "probe",
        "clusters": [{"name": "dev", "cluster": server}],
        "users": [{"name": "probe", "user": {"token": token}}],
        "contexts": [{"name": "probe", "context": {"cluster": "dev", "user": "probe"}}],
    }))  # fmt: skip

    def as_probe(*args: str) -> str:
        done = cluster.kubectl("--kubeconfig", str(only_token), *args, check=False)
        return done.stdout + done.stderr

    user = f'User "system:serviceaccount:{namespace}:probe"'
    assert f'{user} cannot list resource "secrets"' in as_probe("get", "secrets", "-n", namespace)
    cluster.kubectl("create", "role", "read-pods", "--verb=list", "--resource=pods", "-n", namespace)
    cluster.kubectl(
        "create", "rolebinding", "probe-reads", "--role=read-pods", f"--serviceaccount={namespace}:probe",
        "-n", namespace,
    )  # fmt: skip
    assert "No resources found" in as_probe("get", "pods", "-n", namespace)
    assert f'{user} cannot list resource "pods"' in as_probe("get", "pods", "-n", "default")


def test_controllers_fill_a_new_namespace(cluster: Cluster, namespace: str) -> None:
    # The ServiceAccount controller's default account, and the root CA published by its own controller.
    cluster.kubectl("wait", "--for=create", "serviceaccount/default", "-n", namespace, "--timeout=60s")
    cluster.kubectl("wait", "--for=create", "configmap/kube-root-ca.crt", "-n", namespace, "--timeout=60s")
    ca = cluster.get("configmap", "kube-root-ca.crt", "-n", namespace)["data"]["ca.crt"]
    assert ca.startswith("-----BEGIN CERTIFICATE-----")
