"""The operator's Ingresses by server-side apply, on a real API server (docs/cluster.md#field-ownership):
the class the DefaultIngressClass admission assigns, a person's class and another controller's
annotations stay across resyncs; a quiet resync sends only its read; the fields the operator applies
belong to the field manager `ragdown-operator`; `mcp: false` and deleting the RagdownFolder still remove
the route; an Ingress made between the read and the create is not taken over; an apply that creates
needs `create` in the Role; an Ingress written before server-side apply is taken over cleanly.
tests/operator shows the same against the emulated API, where the operator runs as a process.

The operator's own code (ragdown_operator.reconcile's ensure_route, as each reconcile runs it) talks to
the API server with the cluster's kubeconfig, so every request it sends can be counted."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import kopf
import pytest

from ragdown_operator.constants import FIELD_MANAGER
from ragdown_operator.errors import IngressConflict
from ragdown_operator.ingress import folder_ingress
from ragdown_operator.kube import Kube, client_for, owned_drift
from ragdown_operator.reconcile import Outcome, Reconciler
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import FolderSpec

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.anyio]

REPO = Path(__file__).resolve().parents[2]
CERT_MANAGER = {"cert-manager.io/cluster-issuer": "letsencrypt"}
OURS = {"traefik.ingress.kubernetes.io/router.entrypoints": "websecure"}


@pytest.fixture
def real(request: pytest.FixtureRequest) -> Any:
    """The cluster tier's `cluster` fixture (tests/cluster/conftest.py), which skips with its reason
    where no control plane can be started."""
    try:
        return request.getfixturevalue("cluster")
    except pytest.FixtureLookupError:
        pytest.skip("the cluster tier's fixtures (tests/cluster/conftest.py) are not in this tree")


@pytest.fixture
def space(real: Any, request: pytest.FixtureRequest) -> str:
    real.kubectl("apply", "-f", str(REPO / "crds" / "ragdownfolder.yaml"))  # as the other cluster tests do
    real.kubectl("wait", "--for", "condition=established", "crd/ragdownfolders.ragdown.dev", "--timeout=60s")
    return str(request.getfixturevalue("namespace"))


@pytest.fixture
def default_class(real: Any, space: str) -> Iterator[str]:
    """An IngressClass marked as the cluster's default, removed afterwards (it is cluster-wide)."""
    name = f"default-{space}"
    body = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": name, "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "example.com/ingress-controller"},
    }
    real.kubectl("apply", "-f", "-", input=json.dumps(body))
    yield name
    real.kubectl("delete", "ingressclass", name, "--wait=false", check=False)


class Counted:
    """The operator's Kube against the real API server, with the cluster's admin identity (or, given
    `user`, impersonating it), recording every request it sends."""

    def __init__(self, kubeconfig: str, monkeypatch: pytest.MonkeyPatch, user: str = "") -> None:
        monkeypatch.setenv("KUBECONFIG", kubeconfig)
        info = kopf.login_with_kubeconfig(settings=kopf.OperatorSettings())
        assert info is not None
        self.http = client_for(info, 30)
        if user:
            self.http.headers["Impersonate-User"] = user
        self.sent: list[tuple[str, str]] = []

        async def record(request: httpx.Request) -> None:
            self.sent.append((request.method, request.url.path))

        self.http.event_hooks["request"].append(record)
        self.kube = Kube(self.http)


def folder(real: Any, space: str, mcp: bool = True) -> kopf.Body:
    manifest = {
        "apiVersion": "ragdown.dev/v1alpha1",
        "kind": "RagdownFolder",
        "metadata": {"name": "work", "namespace": space},
        "spec": {"mcp": mcp},
    }
    real.kubectl("apply", "-f", "-", input=json.dumps(manifest))
    return kopf.Body(real.get("ragdownfolder", "work", "-n", space))


def settings(space: str, **ingress: Any) -> OperatorSettings:
    return OperatorSettings(namespace=space, instance="rd", reader_service="rd-ragdown-reader", **ingress)


async def reconcile(counted: Counted, body: kopf.Body, chart: OperatorSettings) -> list[str]:
    """One reconcile's route step, as the operator runs it: the events it would post."""
    outcome = Outcome()
    reconciler = Reconciler(chart, indexer=None, kube=counted.kube)  # type: ignore[arg-type]  # not called
    await reconciler.ensure_route(body, FolderSpec.of(dict(body.spec), "work"), outcome)
    return [reason for reason, _ in outcome.events]


def wanted(body: kopf.Body, chart: OperatorSettings) -> dict[str, Any]:
    ingress = folder_ingress("work", "work", chart)
    kopf.adopt(ingress, owner=body)
    return ingress


def live(real: Any, space: str) -> dict[str, Any]:
    """The Ingress as the API server holds it, managedFields included (kubectl leaves them out)."""
    return dict(real.get("ingress", "work-mcp", "-n", space, "--show-managed-fields"))


def owned_by(ingress: dict[str, Any], manager: str) -> dict[str, Any]:
    """The fields `manager` owns on `ingress` (FieldsV1), merged over its entries."""
    owned: dict[str, Any] = {}
    for entry in ingress["metadata"].get("managedFields") or []:
        if entry["manager"] == manager:
            owned |= entry.get("fieldsV1") or {}
    return owned


async def test_what_the_operator_did_not_set_stays_and_a_quiet_resync_only_reads(
    real: Any, space: str, default_class: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = Counted(real.kubeconfig, monkeypatch)
    body = folder(real, space)
    chart = settings(space)  # ingress.className unset: the cluster's default class
    assert await reconcile(counted, body, chart) == ["RouteCreated"]
    ingress = live(real, space)
    assert ingress["spec"]["ingressClassName"] == default_class  # DefaultIngressClass admission
    assert ingress["metadata"]["ownerReferences"][0]["uid"] == body.metadata.uid
    ours = owned_by(ingress, FIELD_MANAGER)
    assert set(ours["f:spec"]) == {"f:rules"}  # not the class admission gave
    assert "f:ragdown.dev/folder" in ours["f:metadata"]["f:annotations"]
    assert "f:app.kubernetes.io/managed-by" in ours["f:metadata"]["f:labels"]
    assert f'k:{{"uid":"{body.metadata.uid}"}}' in ours["f:metadata"]["f:ownerReferences"]
    entry = next(e for e in ingress["metadata"]["managedFields"] if e["manager"] == FIELD_MANAGER)
    assert entry["operation"] == "Apply"

    # cert-manager (or a person) annotates it: the next resyncs read it and send nothing.
    real.kubectl("annotate", "ingress", "work-mcp", "-n", space, "cert-manager.io/cluster-issuer=letsencrypt")
    version = live(real, space)["metadata"]["resourceVersion"]
    counted.sent.clear()
    assert await reconcile(counted, body, chart) == []
    assert await reconcile(counted, body, chart) == []
    assert counted.sent == [("GET", f"/apis/networking.k8s.io/v1/namespaces/{space}/ingresses/work-mcp")] * 2
    ingress = live(real, space)
    assert ingress["metadata"]["resourceVersion"] == version

    # The chart adds an annotation of its own: applied, and what others set is kept.
    chart = settings(space, ingress_annotations=OURS)
    assert await reconcile(counted, body, chart) == ["RouteUpdated"]
    ingress = live(real, space)
    assert ingress["spec"]["ingressClassName"] == default_class
    assert (CERT_MANAGER | OURS).items() <= ingress["metadata"]["annotations"].items()
    assert owned_drift(ingress, wanted(body, chart)) == []  # the real server's managedFields read back

    # A person sets the class: theirs, and kept.
    real.kubectl(
        "patch",
        "ingress",
        "work-mcp",
        "-n",
        space,
        "--type=merge",
        "-p",
        '{"spec":{"ingressClassName":"other"}}',
    )
    assert await reconcile(counted, body, chart) == []
    assert live(real, space)["spec"]["ingressClassName"] == "other"

    # ingress.className set: the class is the operator's, taken back from the person; unset again, the
    # operator removes the class it had set, and only what it had set.
    assert await reconcile(counted, body, settings(space, ingress_class="traefik")) == ["RouteUpdated"]
    ingress = live(real, space)
    assert ingress["spec"]["ingressClassName"] == "traefik"
    assert "f:ingressClassName" in owned_by(ingress, FIELD_MANAGER)["f:spec"]
    assert "f:ingressClassName" not in owned_by(ingress, "kubectl-patch").get("f:spec", {})
    assert await reconcile(counted, body, chart) == ["RouteUpdated"]
    ingress = live(real, space)
    assert "ingressClassName" not in ingress["spec"]
    assert CERT_MANAGER.items() <= ingress["metadata"]["annotations"].items()
    await counted.kube.close()


async def test_mcp_off_and_deleting_the_folder_still_remove_the_route(
    real: Any, space: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = Counted(real.kubeconfig, monkeypatch)
    chart = settings(space)
    body = folder(real, space)
    assert await reconcile(counted, body, chart) == ["RouteCreated"]
    off = folder(real, space, mcp=False)
    assert await reconcile(counted, off, chart) == ["RouteRemoved"]
    assert real.kubectl("get", "ingress", "work-mcp", "-n", space, check=False).returncode != 0
    assert await reconcile(counted, folder(real, space), chart) == ["RouteCreated"]
    # The owner reference is what removes it with the resource: the garbage collector's work.
    real.kubectl("delete", "ragdownfolder", "work", "-n", space)
    deadline = time.monotonic() + 90
    while real.kubectl("get", "ingress", "work-mcp", "-n", space, check=False).returncode == 0:
        assert time.monotonic() < deadline, "the garbage collector did not remove the Ingress"
        time.sleep(1)
    await counted.kube.close()


async def test_an_apply_that_creates_needs_create_as_well_as_patch(
    real: Any, space: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the chart's Role grants `create` on ingresses though the operator only PATCHes them."""
    account = f"system:serviceaccount:{space}:probe"
    real.kubectl("create", "serviceaccount", "probe", "-n", space)
    real.kubectl(
        "create",
        "role",
        "probe",
        "-n",
        space,
        "--verb=get,patch,delete",
        "--resource=ingresses.networking.k8s.io",
    )
    real.kubectl(
        "create", "rolebinding", "probe", "-n", space, "--role=probe", f"--serviceaccount={space}:probe"
    )
    body = folder(real, space)
    counted = Counted(real.kubeconfig, monkeypatch, user=account)
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await reconcile(counted, body, settings(space))
    assert refused.value.response.status_code == 403
    assert "cannot create resource" in refused.value.response.text
    real.kubectl(
        "create",
        "role",
        "probe-create",
        "-n",
        space,
        "--verb=create",
        "--resource=ingresses.networking.k8s.io",
    )
    real.kubectl(
        "create",
        "rolebinding",
        "probe-create",
        "-n",
        space,
        "--role=probe-create",
        f"--serviceaccount={space}:probe",
    )
    deadline = time.monotonic() + 30
    while True:  # RBAC caches refresh within a second or so
        try:
            assert await reconcile(counted, body, settings(space)) == ["RouteCreated"]
            break
        except httpx.HTTPStatusError:
            assert time.monotonic() < deadline
            time.sleep(0.5)
    await counted.kube.close()


async def test_an_ingress_an_operator_before_server_side_apply_wrote_is_taken_over(
    real: Any, space: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written as operators before server-side apply did (a POST with the keys recorded in
    `ragdown.dev/owned-keys`, one of them since dropped from the chart): the first reconcile removes the
    record and the dropped key, then applies; the next only reads."""
    counted = Counted(real.kubeconfig, monkeypatch)
    body = folder(real, space)
    chart = settings(space)
    old = wanted(body, settings(space, ingress_annotations={"dropped": "x"}))
    annotations = old["metadata"]["annotations"]
    record = {"labels": sorted(old["metadata"]["labels"]), "annotations": sorted(annotations)}
    annotations["ragdown.dev/owned-keys"] = json.dumps(record, separators=(",", ":"))
    url = f"/apis/networking.k8s.io/v1/namespaces/{space}/ingresses"
    (await counted.http.post(url, json=old)).raise_for_status()
    legacy = live(real, space)
    assert [e["manager"] for e in legacy["metadata"]["managedFields"]] == ["python-httpx"]
    assert await reconcile(counted, body, chart) == ["RouteUpdated"]
    ingress = live(real, space)
    assert {"ragdown.dev/owned-keys", "dropped"}.isdisjoint(ingress["metadata"]["annotations"])
    assert owned_drift(ingress, wanted(body, chart)) == []
    counted.sent.clear()
    assert await reconcile(counted, body, chart) == []
    assert [method for method, _ in counted.sent] == ["GET"]
    await counted.kube.close()


async def test_an_ingress_made_between_the_read_and_the_create_is_refused_not_taken_over(
    real: Any, space: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The apply that creates is not forced: one someone made since the read conflicts on its rules
    (409), and the operator reports the conflict rather than owning it."""
    counted = Counted(real.kubeconfig, monkeypatch)
    body = folder(real, space)
    backend = {"service": {"name": "theirs", "port": {"number": 80}}}
    path = {"path": "/", "pathType": "Prefix", "backend": backend}
    theirs = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "work-mcp", "namespace": space},
        "spec": {"rules": [{"host": "theirs.example", "http": {"paths": [path]}}]},
    }
    real.kubectl("create", "-f", "-", input=json.dumps(theirs))
    read = counted.kube.get_ingress
    reads = 0

    async def before_theirs(namespace: str, name: str) -> dict[str, Any] | None:
        nonlocal reads
        reads += 1
        return None if reads == 1 else await read(namespace, name)

    monkeypatch.setattr(counted.kube, "get_ingress", before_theirs)
    with pytest.raises(IngressConflict, match="is not this resource's"):
        await reconcile(counted, body, settings(space))
    ingress = live(real, space)
    assert ingress["spec"] == theirs["spec"]
    assert "ownerReferences" not in ingress["metadata"]
    assert [e["manager"] for e in ingress["metadata"]["managedFields"]] == ["kubectl-create"]
    await counted.kube.close()
