"""`helm install` of charts/ragdown with the real helm CLI on a real API server
(docs/cluster.md#a-real-control-plane).

Default values: every object the chart renders is admitted (RBAC, admission plugins, the schemas of
the real server), the real scheduler places the pods on kwok's fake nodes, kwok marks them Running,
and `helm uninstall` (its pre-delete hook included) removes what the release made.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.cluster.conftest import NODES, REPO, Cluster, settled

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

RELEASE = "rd"
CHART = REPO / "charts" / "ragdown"
# prometheus-operator's kinds: their CRDs are not installed here (the chart renders them only on request).
NOT_HERE = "monitoring.coreos.com/"


def pods(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    found = cluster.get("pods", "-n", namespace, "-l", f"app.kubernetes.io/instance={RELEASE}")
    return list(found["items"])


def component(pod: dict[str, Any]) -> str:
    return str(pod["metadata"]["labels"].get("app.kubernetes.io/component"))


def test_install_schedules_on_the_fake_nodes_and_uninstall_cleans_up(
    cluster: Cluster, namespace: str, volume: str
) -> None:
    # A CRD applied earlier with kubectl belongs to no release: the chart then leaves it alone
    # (crds.install=false, as charts/ragdown/README.md says), else Helm refuses to adopt it.
    applied = cluster.kubectl("get", "crd", "ragdownfolders.ragdown.dev", "--ignore-not-found", "-o", "name")
    crds = ["--set", "crds.install=false"] if applied.stdout.strip() else []
    installed = cluster.helm(
        "install", RELEASE, str(CHART), "-n", namespace, *crds, "--wait", "--timeout", "180s"
    )
    assert "STATUS: deployed" in installed.stdout
    manifest = cluster.helm("get", "manifest", RELEASE, "-n", namespace).stdout
    # Every object the chart rendered is in the API, as admitted (kubectl fails on any missing).
    admitted = cluster.kubectl("get", "-f", "-", "-o", "name", input=manifest).stdout.split()
    assert len(admitted) == manifest.count("\nkind: ") + manifest.startswith("kind: ")

    def placed() -> list[dict[str, Any]]:
        found = pods(cluster, namespace)
        assert found
        for pod in found:
            assert pod["spec"].get("nodeName") in NODES, pod["metadata"]["name"]
            assert pod["status"]["phase"] == "Running", pod["metadata"]["name"]
        return found

    running = settled(placed)
    by_component: dict[str, set[str]] = {}
    for pod in running:
        by_component.setdefault(component(pod), set()).add(pod["spec"]["nodeName"])
    assert {"indexer", "reader", "operator"} <= set(by_component), by_component
    # ReadWriteOnce (the default): the readers run where the indexer holds the volume.
    assert by_component["reader"] == by_component["indexer"], by_component
    claim = cluster.get("pvc", "-n", namespace)["items"]
    assert [c["spec"]["volumeName"] for c in claim] == [volume]

    cluster.helm("uninstall", RELEASE, "-n", namespace, "--wait", "--timeout", "180s")
    # The pre-delete hook's Job ran to completion (kwok completes a Job's pods), and the release's pods
    # are gone.
    completed = cluster.get(
        "events", "-n", namespace, "--field-selector", "involvedObject.kind=Job,reason=Completed"
    )["items"]
    assert [e["involvedObject"]["name"] for e in completed] == [f"{RELEASE}-ragdown-operator-release"]
    settled(lambda: _assert_empty(pods(cluster, namespace)))
    left = cluster.kubectl(
        "get", "-f", "-", "-o", "name", "--ignore-not-found", input=manifest
    ).stdout.split()
    # The claim, the generated token Secret and the CRD stay by design (persistence.keep: the documents
    # outlive the release; resource-policy keep: a reinstall keeps every agent's token, and deleting the
    # CRD would delete every team's RagdownFolder).
    crd = "customresourcedefinition.apiextensions.k8s.io/ragdownfolders.ragdown.dev"
    assert sorted(set(left) - {crd}) == sorted(
        [f"persistentvolumeclaim/{claim[0]['metadata']['name']}", f"secret/{RELEASE}-ragdown-token"]
    )
    # The CRD outlives the release whether this release made it or found it (applied earlier by kubectl).
    assert cluster.kubectl("get", "crd", "ragdownfolders.ragdown.dev", "-o", "name").stdout.strip() == crd


def _assert_empty(items: list[Any]) -> None:
    assert items == [], [i["metadata"]["name"] for i in items]


@pytest.mark.parametrize("values", sorted(p.name for p in (CHART / "ci").glob("*.yaml")))
def test_every_ci_rendering_is_admitted_by_the_server(cluster: Cluster, namespace: str, values: str) -> None:
    """Each values file under charts/ragdown/ci, rendered and sent as a server-side dry run: the real
    schemas, defaulting and admission plugins judge every object without creating it."""
    cluster.kubectl("apply", "-f", str(REPO / "crds" / "ragdownfolder.yaml"))
    rendered = cluster.helm(
        "template", RELEASE, str(CHART), "-n", namespace, "-f", str(CHART / "ci" / values)
    )
    documents = [d for d in yaml.safe_load_all(rendered.stdout) if d]
    kept = [d for d in documents if not d["apiVersion"].startswith(NOT_HERE)]
    assert kept
    done = cluster.kubectl(
        "apply", "--dry-run=server", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(kept), check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(server dry run)") == len(kept)
