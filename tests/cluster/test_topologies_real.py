"""Each topology of charts/ragdown installed with the real helm CLI on a real API server, placed by
the real scheduler on kwok's three fake nodes in two zones, then drained with `kubectl drain`
(docs/cluster.md#topologies-on-the-real-control-plane).

No CSI driver runs here, so each test makes the PersistentVolume its claim binds (a hostPath no
kubelet ever mounts) in the cluster's default class (no provisioner, WaitForFirstConsumer). kwok
makes pods Running, completes Jobs' pods, and removes deleted pods, which is what eviction needs.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cluster.conftest import NODES, REPO, Cluster, persistent_volume, settled

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

RELEASE = "rd"
CHART = REPO / "charts" / "ragdown"
WORKLOADS = (
    "statefulset/rd-ragdown-indexer",
    "deployment/rd-ragdown-reader",
    "deployment/rd-ragdown-operator",
)
# Object storage: the Secrets the values name are never read (no kubelet starts a container).
OBJECT_STORE = [
    "--set", "index.objectStore.uri=s3://ragdown-index/team",
    "--set", "index.objectStore.existingSecret=index-rw",
    "--set", "index.objectStore.reader.existingSecret=index-ro",
]  # fmt: skip
# Over zones, as charts/ragdown/ci/rwx-values.yaml asks (the chart itself only prefers other nodes);
# DoNotSchedule here so the placement asserted is the constraint's, not the scorer's luck.
ZONES = [
    "--set-json",
    'reader.topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone",'
    '"whenUnsatisfiable":"DoNotSchedule"}]',
]
TOPOLOGIES = {
    "singleNode": [],
    "multiNode-rwx": [
        "--set",
        "topology=multiNode",
        "--set",
        "persistence.accessModes={ReadWriteMany}",
        "--set",
        "persistence.storageClassName=standard",  # the dev cluster's class; the chart wants one named
        *ZONES,
    ],
    "multiNode-object-store": ["--set", "topology=multiNode", *OBJECT_STORE, *ZONES],
}


@pytest.fixture
def volumes(cluster: Cluster) -> Iterator[list[str]]:
    """The names of the PersistentVolumes a test made, deleted afterwards (they are cluster-wide)."""
    made: list[str] = []
    yield made
    for name in made:
        cluster.kubectl("delete", "pv", name, "--wait=false", check=False)


def running(cluster: Cluster, namespace: str, readers: int = 2) -> dict[str, list[str]]:
    """Node names by component once the release's pods are all Running on fake nodes (none deleting)."""
    found = cluster.get("pods", "-n", namespace, "-l", f"app.kubernetes.io/instance={RELEASE}")["items"]
    nodes: dict[str, list[str]] = {}
    for pod in found:
        name = pod["metadata"]["name"]
        assert "deletionTimestamp" not in pod["metadata"], name
        assert pod["spec"].get("nodeName") in NODES, name
        assert pod["status"]["phase"] == "Running", name
        component = pod["metadata"]["labels"]["app.kubernetes.io/component"]
        nodes.setdefault(component, []).append(pod["spec"]["nodeName"])
    assert len(nodes.get("reader", [])) == readers, nodes
    assert len(nodes.get("indexer", [])) == 1, nodes
    return nodes


def install(cluster: Cluster, namespace: str, *values: str) -> dict[str, list[str]]:
    done = cluster.helm(
        "install", RELEASE, str(CHART), "-n", namespace, *values, "--wait", "--timeout", "180s"
    )
    assert "STATUS: deployed" in done.stdout
    manifest = cluster.helm("get", "manifest", RELEASE, "-n", namespace).stdout
    admitted = cluster.kubectl("get", "-f", "-", "-o", "name", input=manifest).stdout.split()
    assert len(admitted) == manifest.count("\nkind: ") + manifest.startswith("kind: ")
    return dict(settled(lambda: running(cluster, namespace)))


def drain(cluster: Cluster, namespace: str, node: str) -> subprocess.CompletedProcess[str]:
    """`kubectl drain` of `node`; once it returns, none of the release's pods is left there. The node
    is uncordoned afterwards, so a replacement only that node's zone may take can start again."""
    try:
        done = cluster.kubectl(
            "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s", check=False,
            timeout=90,
        )  # fmt: skip
        left = cluster.get("pods", "-n", namespace, "--field-selector", f"spec.nodeName={node}")["items"]
        assert done.returncode != 0 or left == [], [p["metadata"]["name"] for p in left]
        return done
    finally:
        cluster.kubectl("uncordon", node, check=False)


@pytest.mark.parametrize("topology", sorted(TOPOLOGIES))
def test_each_topology_places_its_pods_as_documented_and_drains(
    cluster: Cluster, namespace: str, volumes: list[str], topology: str
) -> None:
    # singleNode: the volume can only be used on node-a2, so draining it leaves the indexer and the
    # readers nowhere to go until it is back: the drain must still finish (no budget holds a reader).
    pinned = "node-a2" if topology == "singleNode" else ""
    volumes.append(persistent_volume(cluster, namespace, pinned)["metadata"]["name"])
    nodes = install(cluster, namespace, *TOPOLOGIES[topology])
    budgets = cluster.get("pdb", "-n", namespace)["items"]
    if topology == "singleNode":
        # Readers are required onto the indexer's node, and no reader budget could block its drain.
        assert set(nodes["reader"]) == set(nodes["indexer"]) == {pinned}, nodes
        assert budgets == []
    else:
        # Readers spread over nodes (the chart's preferred anti-affinity) and zones (the constraint).
        assert len(set(nodes["reader"])) == 2, nodes
        assert {NODES[n] for n in nodes["reader"]} == {"zone-a", "zone-b"}, nodes
        assert [b["spec"]["minAvailable"] for b in budgets] == [1]
    # Drain a node holding a reader (and, in singleNode, the indexer too): every pod leaves it, the
    # budgets allowing, and the replacements run on the other nodes.
    target = nodes["reader"][0]
    drained = drain(cluster, namespace, target)
    assert drained.returncode == 0, drained.stderr
    assert f"node/{target} drained" in drained.stdout
    after = settled(lambda: running(cluster, namespace))
    if topology == "singleNode":  # back where the volume is, once the node is uncordoned
        assert set(after["reader"]) == set(after["indexer"]) == {pinned}, after
    else:
        assert {NODES[n] for n in after["reader"]} == {"zone-a", "zone-b"}, after


def templates(cluster: Cluster, namespace: str) -> dict[str, tuple[int, dict[str, str]]]:
    """Each workload's generation and pod-template annotations."""
    found = {}
    for workload in WORKLOADS:
        got = cluster.get(workload, "-n", namespace)
        annotations = got["spec"]["template"]["metadata"].get("annotations") or {}
        found[workload] = (got["metadata"]["generation"], annotations)
    return found


def test_upgrade_rolls_only_the_workloads_whose_template_changed_and_helm_test_runs(
    cluster: Cluster, namespace: str, volumes: list[str]
) -> None:
    volumes.append(persistent_volume(cluster, namespace)["metadata"]["name"])
    install(cluster, namespace)
    before = templates(cluster, namespace)
    # A reader-only value: only the readers' Deployment changes.
    cluster.helm(
        "upgrade", RELEASE, str(CHART), "-n", namespace, "--reuse-values",
        "--set", "reader.podAnnotations.rollout=two", "--wait", "--timeout", "180s",
    )  # fmt: skip
    reader_only = templates(cluster, namespace)
    rolled = {w for w in WORKLOADS if reader_only[w][0] != before[w][0]}
    assert rolled == {"deployment/rd-ragdown-reader"}
    # Reusing the tokens (looked up in the cluster): checksum/secret is unchanged everywhere.
    assert {w: a["checksum/secret"] for w, (_, a) in reader_only.items()} == {
        w: a["checksum/secret"] for w, (_, a) in before.items()
    }
    # A new token: checksum/secret changes in every pod template that reads it, so all three roll.
    cluster.helm(
        "upgrade", RELEASE, str(CHART), "-n", namespace, "--reuse-values",
        "--set", "auth.token=a-new-agents-token-0123456789", "--wait", "--timeout", "180s",
    )  # fmt: skip
    new_token = templates(cluster, namespace)
    for workload in WORKLOADS:
        assert new_token[workload][0] == reader_only[workload][0] + 1, workload
        assert new_token[workload][1]["checksum/secret"] != reader_only[workload][1]["checksum/secret"]
    settled(lambda: running(cluster, namespace))

    # `helm test`: its Pod is created and scheduled. kwok completes only Jobs' pods, so this test plays
    # the kubelet and reports the container's exit; helm then reports the suite passed.
    tested = subprocess.Popen(
        [cluster.helm_path, "test", RELEASE, "-n", namespace, "--timeout", "90s"],
        env=cluster.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def test_pod() -> dict[str, Any]:
            pod = cluster.get("pod", "rd-ragdown-test", "-n", namespace)
            assert pod["spec"].get("nodeName") in NODES
            assert pod["status"]["phase"] == "Running"
            return dict(pod)

        pod = settled(test_pod, timeout=60)
        assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
        exited = {"status": {"phase": "Succeeded"}}
        cluster.kubectl(
            "patch", "pod", "rd-ragdown-test", "-n", namespace, "--subresource=status", "--type=merge",
            "-p", json.dumps(exited),
        )  # fmt: skip
        out, err = tested.communicate(timeout=120)
    finally:
        if tested.poll() is None:
            tested.kill()
            tested.wait()
    assert tested.returncode == 0, err
    assert "Phase:          Succeeded" in out, out


REFUSED = {
    "multiNode-rwo": (
        ["--set", "topology=multiNode"],
        "topology=multiNode needs readers that can mount the index on any node, "
        'but persistence.accessModes is ["ReadWriteOnce"]',
    ),
    "singleNode-rwx": (
        [
            "--set",
            "persistence.accessModes={ReadWriteMany}",
            "--set",
            "persistence.storageClassName=standard",
        ],
        "topology=singleNode holds every reader on the indexer's node, "
        "but persistence.accessModes ReadWriteMany",
    ),
    "budget-keeps-every-reader": (
        ["--set", "topology=multiNode", *OBJECT_STORE, "--set", "reader.podDisruptionBudget.minAvailable=2"],
        "reader.podDisruptionBudget.minAvailable=2 keeps all 2 readers up, so no node drain could evict one",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_topology_no_drain_could_finish_is_refused_at_install(
    cluster: Cluster, namespace: str, case: str
) -> None:
    values, message = REFUSED[case]
    done = cluster.helm("install", RELEASE, str(CHART), "-n", namespace, *values, check=False)
    assert done.returncode != 0
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert line.startswith("Error: INSTALLATION FAILED: execution error at (ragdown/templates/"), line
    assert message in line, line
    # Nothing of the release was made.
    assert cluster.helm("list", "-n", namespace, "-q").stdout.strip() == ""
    assert cluster.get("all", "-n", namespace)["items"] == []
