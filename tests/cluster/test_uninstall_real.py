"""`helm uninstall` on the real API server leaves no RagdownFolder stuck on the release's finalizer
(docs/cluster.md#uninstall-on-the-real-control-plane).

kwok completes a Job's pod without running anything, so this test plays the kubelet for the chart's
pre-delete hook: every node is cordoned before the uninstall, so the hook's pod waits unscheduled
while the hook's container command (`ragdown-operator release-all`) runs here as a process, with the
Job's own environment and a TokenRequest token of the Job's ServiceAccount (so only the chart's Role,
still present in the hook's window, is what it has). Then the nodes are uncordoned, kwok completes the
pod, and helm deletes the release. The RagdownFolder carries the release's finalizer, as its operator
had claimed it; afterwards `kubectl delete` removes it at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragdown_operator.constants import INSTANCE_LABEL, finalizer_for
from tests.cluster.conftest import NODES, REPO, Cluster, settled

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

RELEASE = "rd"
CHART = REPO / "charts" / "ragdown"
HOOK = f"{RELEASE}-ragdown-operator-release"


def claimed_folder(cluster: Cluster, namespace: str) -> None:
    """A RagdownFolder as the release's operator leaves it: its label and finalizer."""
    manifest = {
        "apiVersion": "ragdown.dev/v1alpha1",
        "kind": "RagdownFolder",
        "metadata": {
            "name": "work",
            "namespace": namespace,
            "labels": {INSTANCE_LABEL: RELEASE},
            "finalizers": [finalizer_for(RELEASE)],
        },
        "spec": {"mcp": True},
    }
    cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))


def run_hook(cluster: Cluster, namespace: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The hook Job's container command, as its pod would run it."""
    job = cluster.get("job", HOOK, "-n", namespace)
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["ragdown-operator", "release-all"]
    env = {}
    for entry in container.get("env", []):
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        else:  # the only reference the hook makes: its own namespace
            assert entry["valueFrom"] == {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
            env[entry["name"]] = namespace
    token = cluster.kubectl("create", "token", pod["serviceAccountName"], "-n", namespace).stdout.strip()
    config = json.loads(cluster.kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
    config["users"] = [{"name": "hook", "user": {"token": token}}]
    config["contexts"][0]["context"] = {**config["contexts"][0]["context"], "user": "hook"}
    kubeconfig = tmp_path / "hook.kubeconfig"
    kubeconfig.write_text(json.dumps(config), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "ragdown_operator.main", "release-all"],
        env={**cluster.env(), **env, "KUBECONFIG": str(kubeconfig)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_uninstall_runs_release_all_and_no_folder_is_left_on_a_finalizer(
    cluster: Cluster, namespace: str, volume: str, tmp_path: Path
) -> None:
    cluster.kubectl("apply", "-f", str(REPO / "crds" / "ragdownfolder.yaml"))
    cluster.helm("install", RELEASE, str(CHART), "-n", namespace, "--wait", "--timeout", "180s")
    claimed_folder(cluster, namespace)
    for node in NODES:
        cluster.kubectl("cordon", node)
    try:
        uninstall = subprocess.Popen(
            [cluster.helm_path, "uninstall", RELEASE, "-n", namespace, "--wait", "--timeout", "180s"],
            env=cluster.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

        def hook_waiting() -> None:
            found = cluster.get("pods", "-n", namespace, "-l", f"job-name={HOOK}")["items"]
            assert [p["status"]["phase"] for p in found] == ["Pending"]

        settled(hook_waiting)
        hook = run_hook(cluster, namespace, tmp_path)
        assert hook.returncode == 0, hook.stderr
        assert (
            f"released 1 RagdownFolder(s) of release {RELEASE} in namespace {namespace}: work" in hook.stdout
        )
    finally:
        for node in NODES:
            cluster.kubectl("uncordon", node, check=False)
    out, err = uninstall.communicate(timeout=240)
    assert uninstall.returncode == 0, err
    assert f'release "{RELEASE}" uninstalled' in out
    folder = cluster.get("ragdownfolder", "work", "-n", namespace)
    assert folder["metadata"].get("finalizers", []) == []
    assert folder["metadata"]["annotations"]["ragdown.dev/released"] == RELEASE
    # Nothing holds it now that the operator is gone: deleting it (or the namespace) does not hang.
    cluster.kubectl("delete", "ragdownfolder", "work", "-n", namespace, "--timeout=20s")
    assert cluster.get("ragdownfolders", "-n", namespace)["items"] == []
