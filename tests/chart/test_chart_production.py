"""What a production install needs from the chart (docs/cluster.md#topologies and the sections after
it): every topology can be drained, the combinations that cannot are refused with one line, each
NetworkPolicy admits only its peers, the operator's Role is never bound to `default`, TLS reaches
every Ingress, the token Secret survives an uninstall, and readers get read-only store credentials.
All asserted on rendered objects."""

from __future__ import annotations

import math
from typing import Any

import helm_python as helm
import pytest

from ragdown_operator.ingress import folder_ingress
from ragdown_operator.settings import OperatorSettings
from tests.chart.test_chart import (
    CI_NAMES,
    FULLNAME,
    INDEXER,
    NAMESPACE,
    OPERATOR,
    READER,
    RELEASE,
    RELEASE_JOB,
    TEST_POD,
    Obj,
    Render,
    Rendered,
    ci_values,
    container,
    env_of,
    pod_spec,
)

HOSTNAME = "kubernetes.io/hostname"


def refused(chart: helm.Chart, values: Obj) -> str:
    with pytest.raises(helm.HelmRenderError) as failure:
        chart.render(values, name=RELEASE, namespace=NAMESPACE)
    return str(failure.value)


# --- topologies: what a node drain needs --------------------------------------------------------------------


def fewest_readers(rendered: Rendered) -> int:
    hpas = rendered.all("HorizontalPodAutoscaler")
    if hpas:
        return int(hpas[0]["spec"]["minReplicas"])
    return int(rendered.get("Deployment", READER)["spec"]["replicas"])


def evictable(budget: Obj, readers: int) -> int:
    """How many readers the budget lets a drain evict when all are up."""
    wanted = budget["spec"]["minAvailable"]
    if isinstance(wanted, str):
        wanted = math.ceil(readers * int(wanted.rstrip("%")) / 100)
    return readers - int(wanted)


def claim_modes(rendered: Rendered) -> list[str]:
    modes: list[str] = rendered.get("PersistentVolumeClaim", f"{FULLNAME}-data")["spec"]["accessModes"]
    return modes


def reads_the_claim(reader: Obj) -> bool:
    return any("persistentVolumeClaim" in v for v in pod_spec(reader)["volumes"])


@pytest.mark.parametrize("name", CI_NAMES)
def test_every_topology_lets_a_node_drain_finish(render: Render, name: str) -> None:
    """A drain evicts the pods of one node. Readers held on the indexer's node (a ReadWriteOnce claim)
    must all be evictable at once: no budget may keep one. Readers that spread keep a budget, which
    must still let one go. Before: the default rendered both the required co-location and a
    minAvailable-1 budget, and a drain of the indexer's node never finished."""
    rendered = render(ci_values(name))
    reader = rendered.get("Deployment", READER)
    required = (
        pod_spec(reader)["affinity"]
        .get("podAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", [])
    )
    held = [
        t
        for t in required
        if t["topologyKey"] == HOSTNAME
        and t["labelSelector"]["matchLabels"].items()
        <= rendered.get("StatefulSet", INDEXER)["spec"]["template"]["metadata"]["labels"].items()
    ]
    budgets = rendered.all("PodDisruptionBudget")
    if reads_the_claim(reader) and "ReadWriteMany" not in claim_modes(rendered):
        # singleNode: the readers follow the indexer; nothing may hold them, and an upgrade replaces
        # them in place (a surge pod would wait for room on a full node for ever).
        assert held, "readers of a ReadWriteOnce claim must run on the indexer's node"
        assert budgets == []
        assert reader["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}
        assert "singleNode" in rendered.notes
    else:
        assert not held, "readers that can mount anywhere must not be tied to the indexer's node"
        readers = fewest_readers(rendered)
        for budget in budgets:
            assert evictable(budget, readers) >= 1, budget["spec"]
    # Nothing else of the release has a budget: the indexer and the operator are single evictable pods.
    assert all(b["metadata"]["name"] == READER for b in budgets)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"topology": "multiNode"}, "topology=multiNode needs readers that can mount the index on any node"),
        (
            {
                "topology": "multiNode",
                "persistence": {"existingClaim": "docs", "accessModes": ["ReadWriteOnce"]},
            },
            "set persistence.accessModes=[ReadWriteMany] or index.objectStore.uri, or topology=singleNode",
        ),
        ({"persistence": {"accessModes": ["ReadWriteMany"]}}, "lets them spread: set topology=multiNode"),
        (
            {"index": {"objectStore": {"uri": "s3://bucket/x"}}},
            "topology=singleNode holds every reader on the indexer's node",
        ),
        (
            {
                "topology": "multiNode",
                "persistence": {"accessModes": ["ReadWriteMany"]},
                "reader": {"podDisruptionBudget": {"minAvailable": 2}},
            },
            "reader.podDisruptionBudget.minAvailable=2 keeps all 2 readers up",
        ),
        (
            {
                "topology": "multiNode",
                "persistence": {"accessModes": ["ReadWriteMany"]},
                "reader": {
                    "replicas": 4,
                    "autoscaling": {"enabled": False},
                    "podDisruptionBudget": {"minAvailable": "100%"},
                },
            },
            "minAvailable=100% keeps all 4 readers up",
        ),
    ],
    ids=[
        "multi-on-rwo",
        "multi-on-existing-rwo",
        "single-on-rwx",
        "single-on-store",
        "budget-2-of-2",
        "budget-100%",
    ],
)
def test_a_topology_that_cannot_drain_is_refused(chart: helm.Chart, values: Obj, message: str) -> None:
    text = refused(chart, values)
    assert message in text
    assert text.count("\n") == 0  # one line, naming what to set


def test_a_budget_that_lets_one_go_is_kept(render: Render) -> None:
    rendered = render(
        {
            "topology": "multiNode",
            "persistence": {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs"},
            "reader": {
                "replicas": 3,
                "autoscaling": {"enabled": False},
                "podDisruptionBudget": {"minAvailable": "50%"},
            },
        }
    )
    assert evictable(rendered.get("PodDisruptionBudget", READER), 3) == 1


# --- NetworkPolicies ----------------------------------------------------------------------------------------

TRAEFIK = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "traefik"}},
    "podSelector": {"matchLabels": {"app.kubernetes.io/name": "traefik"}},
}
MONITORING = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}


def component(rendered: Rendered, kind: str, name: str) -> Obj:
    """A NetworkPolicy peer for the pods of one of the release's workloads."""
    obj = rendered.get(kind, name)
    labels = obj["metadata"]["labels"] if kind == "Pod" else obj["spec"]["template"]["metadata"]["labels"]
    keys = ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component")
    return {"podSelector": {"matchLabels": {key: labels[key] for key in keys}}}


def admitted(policy: Obj) -> dict[str, list[Obj] | None]:
    """port → the peers admitted to it (None: any source)."""
    out: dict[str, list[Obj] | None] = {}
    for rule in policy["spec"]["ingress"]:
        for port in rule["ports"]:
            assert port["protocol"] == "TCP"
            out[port["port"]] = rule.get("from")
    return out


def container_ports(workload: Obj) -> set[str]:
    return {p["name"] for c in pod_spec(workload)["containers"] for p in c.get("ports", [])}


@pytest.fixture(scope="module")
def closed(render: Render) -> Rendered:
    values = ci_values("network-policy")
    assert values["networkPolicy"] == {
        "enabled": True,
        "ingressController": TRAEFIK,
        "monitoring": MONITORING,
    }
    return render(values)


def test_readers_admit_the_ingress_controller_and_nothing_else_on_3000(closed: Rendered) -> None:
    policy = closed.get("NetworkPolicy", READER)
    reader = closed.get("Deployment", READER)
    assert policy["spec"]["podSelector"] == component(closed, "Deployment", READER)["podSelector"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    # the `helm test` Pod calls /mcp through the reader Service
    assert admitted(policy) == {
        "http": [TRAEFIK, component(closed, "Pod", TEST_POD)],
        "metrics": [MONITORING],
    }
    assert set(admitted(policy)) == container_ports(reader)


def test_the_indexer_admits_operator_and_ingress_on_3000_and_only_readers_inside(closed: Rendered) -> None:
    policy = closed.get("NetworkPolicy", INDEXER)
    assert policy["spec"]["podSelector"] == component(closed, "StatefulSet", INDEXER)["podSelector"]
    assert admitted(policy) == {
        "http": [
            TRAEFIK,
            component(closed, "Deployment", OPERATOR),
            component(closed, "Pod", TEST_POD),
        ],
        "metrics": [MONITORING],
        "internal": [component(closed, "Deployment", READER)],
    }
    # The operator's release-all Job calls the Kubernetes API only, never the indexer.
    assert closed.has("Job", RELEASE_JOB)
    assert set(admitted(policy)) == container_ports(closed.get("StatefulSet", INDEXER))


def test_the_operator_admits_scrapes_only(closed: Rendered) -> None:
    """Its health port has no rule: the kubelet's probes come from the pod's own node, which a
    NetworkPolicy always lets through; nobody else has business there."""
    policy = closed.get("NetworkPolicy", OPERATOR)
    operator = closed.get("Deployment", OPERATOR)
    assert policy["spec"]["podSelector"] == component(closed, "Deployment", OPERATOR)["podSelector"]
    assert admitted(policy) == {"metrics": [MONITORING]}
    assert container_ports(operator) == {"health", "metrics"}
    assert pod_spec(operator)["containers"][0]["livenessProbe"]["httpGet"]["port"] == "health"


def test_no_operator_no_operator_policy(render: Render) -> None:
    rendered = render({**ci_values("network-policy"), "operator": {"enabled": False}})
    assert {p["metadata"]["name"] for p in rendered.all("NetworkPolicy")} == {INDEXER, READER}


def test_peers_left_empty_admit_any_source_and_notes_say_so(default: Rendered, closed: Rendered) -> None:
    for name in (INDEXER, READER):
        rules = admitted(default.get("NetworkPolicy", name))
        assert rules["http"] is None
        assert rules["metrics"] is None
    assert admitted(default.get("NetworkPolicy", INDEXER))["internal"] is not None
    assert "networkPolicy.ingressController" in default.notes
    assert "networkPolicy.ingressController" not in closed.notes


# --- the operator's ServiceAccount --------------------------------------------------------------------------


def test_the_operator_role_is_never_bound_to_default(chart: helm.Chart, render: Render) -> None:
    text = refused(chart, {"operator": {"serviceAccount": {"create": False}}})
    assert "operator.serviceAccount.create=false needs operator.serviceAccount.name" in text
    text = refused(chart, {"operator": {"serviceAccount": {"create": False, "name": "default"}}})
    assert "operator.serviceAccount.name=default" in text
    given = render({"operator": {"serviceAccount": {"create": False, "name": "ragdown-ops"}}})
    (subject,) = given.get("RoleBinding", OPERATOR)["subjects"]
    assert subject == {"kind": "ServiceAccount", "name": "ragdown-ops", "namespace": NAMESPACE}
    assert pod_spec(given.get("Deployment", OPERATOR))["serviceAccountName"] == "ragdown-ops"
    assert not given.all("ServiceAccount")


# --- exposure: TLS, hosts, /mcp -----------------------------------------------------------------------------


def operator_settings(rendered: Rendered, monkeypatch: pytest.MonkeyPatch) -> OperatorSettings:
    """The settings the operator reads from the environment the chart gives it."""
    env = env_of(container(rendered.get("Deployment", OPERATOR), "operator"))
    with monkeypatch.context() as patched:
        for key, value in env.items():
            if isinstance(value, str) and key.startswith("RAGDOWN_OPERATOR_"):
                patched.setenv(key, value)
        return OperatorSettings()


@pytest.mark.parametrize("host", ["docs.example.com", ""])
def test_tls_reaches_the_base_and_the_per_folder_ingresses(
    render: Render, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    rendered = render({"ingress": {"host": host, "tls": {"secretName": "docs-tls", "issuer": "letsencrypt"}}})
    base = rendered.get("Ingress", FULLNAME)
    tls: Obj = {"secretName": "docs-tls", **({"hosts": [host]} if host else {})}
    assert base["spec"]["tls"] == [tls]
    # cert-manager fills the Secret once, for the base Ingress; the per-folder ones reuse it.
    assert base["metadata"]["annotations"] == {"cert-manager.io/cluster-issuer": "letsencrypt"}
    folder = folder_ingress("work", "work", operator_settings(rendered, monkeypatch))
    assert folder["spec"]["tls"] == [tls]
    assert not any(key.startswith("cert-manager.io/") for key in folder["metadata"]["annotations"])
    namespaced = render(
        {"ingress": {"host": host, "tls": {"secretName": "t", "issuer": "ca", "issuerKind": "Issuer"}}}
    )
    assert namespaced.get("Ingress", FULLNAME)["metadata"]["annotations"] == {"cert-manager.io/issuer": "ca"}


def test_an_issuer_without_the_base_ingress_or_secret_is_refused(chart: helm.Chart) -> None:
    for ingress in (
        {"enabled": False, "tls": {"secretName": "t", "issuer": "le"}},
        {"tls": {"issuer": "le"}},
    ):
        assert "ingress.tls.issuer needs ingress.enabled=true and ingress.tls.secretName" in refused(
            chart, {"ingress": ingress}
        )


def test_notes_warn_when_bearer_tokens_cross_plain_http(render: Render, default: Rendered) -> None:
    warning = "MCP is served over plain HTTP"
    assert warning in default.notes
    assert warning in render({"ingress": {"host": "docs.example.com"}}).notes
    assert warning not in render(ci_values("tls-host")).notes
    # TLS ending in front of the Ingress, said by an https public URL
    assert warning not in render({"operator": {"publicUrl": "https://mcp.example.com"}}).notes
    assert warning not in render({"ingress": {"enabled": False}, "operator": {"enabled": False}}).notes


def test_any_host_only_when_asked_for(render: Render, default: Rendered) -> None:
    def hosts(rendered: Rendered) -> list[str]:
        env = env_of(container(rendered.get("Deployment", READER), "ragdown"))
        allowed: str = env["RAGDOWN_ALLOWED_HOSTS"]
        return allowed.split(",")

    assert "*" not in hosts(default)
    assert "ingress.allowAnyHost=true" in default.notes
    assert "*" in hosts(render({"ingress": {"allowAnyHost": True}}))


def test_mcp_paths_never_reach_the_indexer_through_the_base_ingress(
    default: Rendered, render: Render
) -> None:
    """`/` sends everything to the indexer; `/mcp/<folder>` of a folder without its own Ingress must go
    to the readers instead (which answer only folders with MCP on), whatever the host."""
    for rendered in (default, render(ci_values("tls-host")), render({"operator": {"enabled": False}})):
        (rule,) = rendered.get("Ingress", FULLNAME)["spec"]["rules"]
        by_path = {p["path"]: p for p in rule["http"]["paths"]}
        assert by_path["/mcp"]["pathType"] == "Prefix"
        assert by_path["/mcp"]["backend"]["service"]["name"] == READER


# --- tokens and GitOps --------------------------------------------------------------------------------------


def test_the_generated_token_secret_outlives_an_uninstall(default: Rendered) -> None:
    secret = default.get("Secret", f"{FULLNAME}-token")
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    # as the claim the documents are on
    claim = default.get("PersistentVolumeClaim", f"{FULLNAME}-data")
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"


def pod_templates(rendered: Rendered) -> list[Any]:
    return [o["spec"]["template"] for o in rendered.objects if o["kind"] in ("Deployment", "StatefulSet")]


def test_an_existing_secret_renders_the_same_every_time(chart: helm.Chart) -> None:
    """The GitOps path (docs/cluster.md#tokens): offline renders (helm template, Argo CD) of
    auth.existingSecret are identical, so nothing restarts; generated tokens differ on every one."""

    def offline(values: Obj) -> Rendered:
        return Rendered(chart.render(values, name=RELEASE, namespace=NAMESPACE))

    gitops = ci_values("existing-secret")
    assert pod_templates(offline(gitops)) == pod_templates(offline(gitops))
    assert pod_templates(offline({})) != pod_templates(offline({}))
    assert "auth.existingSecret" in offline({}).notes


# --- object storage credentials -----------------------------------------------------------------------------


def test_readers_get_read_only_store_credentials_of_their_own(render: Render) -> None:
    rendered = render(ci_values("workload-identity"))
    indexer, reader = rendered.get("StatefulSet", INDEXER), rendered.get("Deployment", READER)
    assert pod_spec(indexer)["serviceAccountName"] == f"{FULLNAME}-server"
    assert pod_spec(reader)["serviceAccountName"] == "ragdown-index-reader"  # existing, read-only role
    assert "envFrom" not in container(reader, "ragdown")
    assert {a["metadata"]["name"] for a in rendered.all("ServiceAccount")} == {f"{FULLNAME}-server", OPERATOR}
    keyed = render(ci_values("object-store"))
    accounts = {a["metadata"]["name"]: a for a in keyed.all("ServiceAccount")}
    assert accounts[READER]["metadata"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ragdown-index-read"
    }
    assert accounts[READER]["automountServiceAccountToken"] is False


@pytest.mark.parametrize(
    "store",
    [
        {"existingSecret": "rw"},
        {"serviceAccount": {"create": True}},
        {"serviceAccount": {"name": "rw-account"}},
    ],
    ids=["secret", "created-account", "named-account"],
)
def test_readers_never_inherit_the_indexers_store_credentials(chart: helm.Chart, store: Obj) -> None:
    values = {"topology": "multiNode", "index": {"objectStore": {"uri": "s3://bucket/x", **store}}}
    text = refused(chart, values)
    assert "index.objectStore gives the indexer read-write credentials" in text
    assert "set index.objectStore.reader.existingSecret or index.objectStore.reader.serviceAccount" in text
