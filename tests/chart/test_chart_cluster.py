"""What the chart makes of the cluster around it: where readers may run for the storage they share,
which Host names the servers answer to behind the Ingresses the chart renders, where model files
live, and the platform conventions (registries and digests, priorities, spreading, extra volumes,
draining readers, OpenShift's ids). Each is asserted on rendered objects, and the Host check with
the server's own `Guard`, so a chart that would answer 421 through its own Ingress fails here."""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import urlsplit

import helm_python as helm
import pytest

from ragdown.serving.guard import Guard
from ragdown.settings import ServerSettings
from tests.chart.test_chart import (
    CI_NAMES,
    FULLNAME,
    INDEXER,
    NAMESPACE,
    OPERATOR,
    READER,
    RELEASE,
    Obj,
    Render,
    Rendered,
    ci_values,
    container,
    env_of,
    pod_spec,
    workloads,
)

HOSTNAME = "kubernetes.io/hostname"


def pod_labels(workload: Obj) -> dict[str, str]:
    metadata = workload["metadata"] if workload["kind"] == "Pod" else workload["spec"]["template"]["metadata"]
    labels: dict[str, str] = metadata["labels"]
    return labels


def selects(term: Obj, workload: Obj) -> bool:
    """Whether a pod affinity term's matchLabels select the pods of `workload`."""
    return bool(term["labelSelector"]["matchLabels"].items() <= pod_labels(workload).items())


def selector(rendered: Rendered, kind: str, name: str) -> dict[str, str]:
    match: dict[str, str] = rendered.get(kind, name)["spec"]["selector"]["matchLabels"]
    return match


# --- storage topology ---------------------------------------------------------------------------------------


def test_read_write_once_holds_the_readers_to_the_indexers_node(default: Rendered) -> None:
    """Default ReadWriteOnce: the claim is attached to one node, the indexer's, so a reader elsewhere
    could never mount it. The readers must follow the indexer there (required), and nothing may
    push them apart."""
    indexer = default.get("StatefulSet", INDEXER)
    affinity = pod_spec(default.get("Deployment", READER))["affinity"]
    (term,) = affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == HOSTNAME
    assert [w["metadata"]["name"] for w in workloads(default) if selects(term, w)] == [INDEXER]
    assert "podAntiAffinity" not in affinity
    # A restarted indexer prefers the readers' node, which still has the claim attached; required,
    # it could never be scheduled on a fresh install (no readers yet).
    indexer_affinity = pod_spec(indexer)["affinity"]["podAffinity"]
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in indexer_affinity
    (preferred,) = indexer_affinity["preferredDuringSchedulingIgnoredDuringExecution"]
    term = preferred["podAffinityTerm"]
    assert term["topologyKey"] == HOSTNAME
    assert [w["metadata"]["name"] for w in workloads(default) if selects(term, w)] == [READER]


def test_read_write_many_spreads_the_readers(render: Render) -> None:
    rendered = render(ci_values("rwx"))
    spec = pod_spec(rendered.get("Deployment", READER))
    assert "podAffinity" not in spec["affinity"]
    anti = spec["affinity"]["podAntiAffinity"]
    # Preferred only: with fewer nodes than readers, the rest still schedule.
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in anti
    (term,) = anti["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["topologyKey"] == HOSTNAME
    assert term["podAffinityTerm"]["labelSelector"]["matchLabels"] == selector(rendered, "Deployment", READER)
    # A constraint given without a labelSelector spreads the readers themselves.
    assert spec["topologySpreadConstraints"] == [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": selector(rendered, "Deployment", READER)},
        }
    ]
    assert "affinity" not in pod_spec(rendered.get("StatefulSet", INDEXER))


def test_a_given_reader_affinity_keeps_the_storage_rule(render: Render) -> None:
    node_affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["docs"]}]}
            ]
        }
    }
    own_term = {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": "db"}}}
    values = {
        "reader": {
            "affinity": {
                "nodeAffinity": node_affinity,
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [own_term]},
            }
        }
    }
    rendered = render(values)
    affinity = pod_spec(rendered.get("Deployment", READER))["affinity"]
    assert affinity["nodeAffinity"] == node_affinity
    first, second = affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert first == own_term
    assert second["topologyKey"] == HOSTNAME
    assert selects(second, rendered.get("StatefulSet", INDEXER))
    # With ReadWriteMany a given affinity is taken as it is: the chart adds no spreading of its own.
    shared = render(
        {
            **values,
            "topology": "multiNode",
            "persistence": {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs"},
        }
    )
    assert pod_spec(shared.get("Deployment", READER))["affinity"] == values["reader"]["affinity"]


def test_read_write_once_pod_is_refused(chart: helm.Chart) -> None:
    with pytest.raises(helm.HelmRenderError, match="ReadWriteOncePod admits only the indexer"):
        chart.render({"persistence": {"accessModes": ["ReadWriteOncePod"]}}, name=RELEASE)


# --- Host names behind the Ingresses ------------------------------------------------------------------------


def guard(rendered: Rendered, kind: str, name: str) -> Guard:
    """The Host and Origin check the server builds from the environment the chart gives it."""
    env = env_of(container(rendered.get(kind, name), "ragdown"))
    return Guard.of(ServerSettings(allowed_hosts=env["RAGDOWN_ALLOWED_HOSTS"], host=env["RAGDOWN_HOST"]))


SERVICE_HOSTS = [
    f"{INDEXER}:3000",
    f"{READER}:3000",
    f"{READER}.{NAMESPACE}.svc:3000",
    f"{INDEXER}.{NAMESPACE}.svc",
]


ANY_HOST = {"ingress": {"allowAnyHost": True}}


@pytest.mark.parametrize(
    "values",
    [
        ANY_HOST,
        {
            **ci_values("no-host-ingress"),
            "ingress": {**ci_values("no-host-ingress")["ingress"], "allowAnyHost": True},
        },
        {"ingress": {"enabled": False, "allowAnyHost": True}},
    ],
    ids=["default", "no-host-ingress", "operator-ingresses-only"],
)
def test_an_ingress_without_a_host_passes_every_host(render: Render, values: Obj) -> None:
    """No host rule and ingress.allowAnyHost asked for: the Ingresses (the base one, and the
    operator's per-folder ones, which share ingress.host) forward any Host, and the servers accept
    any; pages are still held to their own host."""
    rendered = render(values)
    operator_env = env_of(container(rendered.get("Deployment", OPERATOR), "operator"))
    assert operator_env["RAGDOWN_OPERATOR_INGRESS_HOST"] == ""
    for ingress in rendered.all("Ingress"):
        assert all("host" not in rule for rule in ingress["spec"]["rules"])
    for kind, name in (("StatefulSet", INDEXER), ("Deployment", READER)):
        checked = guard(rendered, kind, name)
        for host in ("203.0.113.7", "docs.internal.example:8080", *SERVICE_HOSTS):
            assert checked.host_allowed(host), host
        assert checked.origin_allowed("http://203.0.113.7", "203.0.113.7")
        assert not checked.origin_allowed("https://evil.example", "203.0.113.7")


@pytest.mark.parametrize(
    ("values", "allowed", "refused"),
    [
        (
            ci_values("tls-host"),
            ["ragdown.example.com", "docs.example.com", *SERVICE_HOSTS],
            ["evil.example", "203.0.113.7", "ragdown.example.com.evil.example"],
        ),
        (
            {"ingress": {"host": "docs.local"}, "operator": {"publicUrl": "https://mcp.example:8443/"}},
            ["docs.local", "mcp.example:8443", *SERVICE_HOSTS],
            ["mcp.example:9999", "evil.example"],
        ),
        (
            {"ingress": {"enabled": False}, "operator": {"enabled": False}},
            SERVICE_HOSTS,
            ["203.0.113.7", "evil.example"],
        ),
        # No host, and "*" not asked for (ingress.allowAnyHost): still only the names the chart knows.
        ({}, SERVICE_HOSTS, ["203.0.113.7", "evil.example"]),
        (ci_values("no-host-ingress"), SERVICE_HOSTS, ["203.0.113.7", "evil.example"]),
    ],
    ids=["ingress-host", "public-url", "no-ingress", "default", "no-host-ingress"],
)
def test_a_named_host_is_checked_strictly(
    render: Render, values: Obj, allowed: list[str], refused: list[str]
) -> None:
    rendered = render(values)
    for kind, name in (("StatefulSet", INDEXER), ("Deployment", READER)):
        env = env_of(container(rendered.get(kind, name), "ragdown"))
        assert "*" not in env["RAGDOWN_ALLOWED_HOSTS"].split(",")
        checked = guard(rendered, kind, name)
        for host in allowed:
            assert checked.host_allowed(host), host
        for host in refused:
            assert not checked.host_allowed(host), host


def test_the_network_policies_are_on_by_default_and_can_be_off(render: Render) -> None:
    on = render(ci_values("no-host-ingress"))
    policies = {
        p["metadata"]["name"]: p["spec"]["podSelector"]["matchLabels"] for p in on.all("NetworkPolicy")
    }
    assert policies == {
        INDEXER: selector(on, "StatefulSet", INDEXER),
        READER: selector(on, "Deployment", READER),
        OPERATOR: selector(on, "Deployment", OPERATOR),
    }
    assert render({}).all("NetworkPolicy") == on.all("NetworkPolicy")
    assert not render({"networkPolicy": {"enabled": False}}).all("NetworkPolicy")


# --- model files --------------------------------------------------------------------------------------------


def mount_holding(workload: Obj, path: str) -> Obj | None:
    """The server container's mount that holds `path` (the deepest one), or None: the root
    filesystem, which is read-only."""
    holding = [
        m
        for m in container(workload, "ragdown")["volumeMounts"]
        if PurePosixPath(path).is_relative_to(PurePosixPath(m["mountPath"]))
    ]
    return max(holding, key=lambda m: len(m["mountPath"]), default=None)


@pytest.mark.parametrize("name", CI_NAMES)
def test_models_live_on_the_claim_the_indexer_writes(render: Render, name: str) -> None:
    """A hub embedder (bge-small, granite-small) downloads into RAGDOWN_MODELS, and the default one
    builds its int8 model there: on the read-only root it crashed. The indexer writes them to the
    claim once; readers read the same files through their read-only mount of it. With the index on
    object storage a reader has no claim: it builds or fetches them into its own scratch."""
    rendered = render(ci_values(name))
    for kind, name_, writable in (("StatefulSet", INDEXER, True), ("Deployment", READER, False)):
        workload = rendered.get(kind, name_)
        models = env_of(container(workload, "ragdown"))["RAGDOWN_MODELS"]
        mount = mount_holding(workload, models)
        assert mount is not None, f"{name_}: {models} is on the read-only root filesystem"
        (volume,) = [v for v in pod_spec(workload)["volumes"] if v["name"] == mount["name"]]
        if ci_values(name).get("index", {}).get("objectStore", {}).get("uri") and kind == "Deployment":
            assert "emptyDir" in volume
            assert mount["readOnly"] is False
            continue
        assert volume["persistentVolumeClaim"]["claimName"] == f"{FULLNAME}-data"
        assert mount["readOnly"] is not writable
        assert volume["persistentVolumeClaim"]["readOnly"] is not writable


def test_a_hub_mirror_reaches_both_servers(render: Render, default: Rendered) -> None:
    rendered = render(ci_values("platform"))
    for kind, name in (("StatefulSet", INDEXER), ("Deployment", READER)):
        assert env_of(container(rendered.get(kind, name), "ragdown"))["RAGDOWN_HUB_URL"] == (
            "https://hub-mirror.example.com"
        )
        assert "RAGDOWN_HUB_URL" not in env_of(container(default.get(kind, name), "ragdown"))
    # Models baked into an image: RAGDOWN_MODELS points there.
    baked = render({"server": {"modelsDir": "/opt/ragdown/models"}})
    for kind, name in (("StatefulSet", INDEXER), ("Deployment", READER)):
        assert env_of(container(baked.get(kind, name), "ragdown"))["RAGDOWN_MODELS"] == "/opt/ragdown/models"


# --- platform conventions -----------------------------------------------------------------------------------


def test_the_image_takes_a_registry_and_a_digest(render: Render) -> None:
    rendered = render(ci_values("platform"))
    digest = "sha256:" + "0123456789abcdef" * 4
    expected = f"registry.example.com/ai/ragdown:0.1.0@{digest}"
    images = {
        c["image"]
        for workload in workloads(rendered)
        for c in pod_spec(workload)["containers"] + pod_spec(workload).get("initContainers", [])
    }
    assert images == {expected}


def test_readers_drain_before_they_stop(default: Rendered, render: Render, chart: helm.Chart) -> None:
    reader = default.get("Deployment", READER)
    assert container(reader, "ragdown")["lifecycle"] == {"preStop": {"exec": {"command": ["sleep", "5"]}}}
    assert pod_spec(reader)["terminationGracePeriodSeconds"] > 5
    platform = render(ci_values("platform")).get("Deployment", READER)
    assert container(platform, "ragdown")["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", "10"]
    assert pod_spec(platform)["terminationGracePeriodSeconds"] == 45
    no_sleep = render({"reader": {"preStopSeconds": 0}}).get("Deployment", READER)
    assert "lifecycle" not in container(no_sleep, "ragdown")
    # The grace period includes the sleep: one no longer than it would kill readers mid-call.
    with pytest.raises(helm.HelmRenderError, match="terminationGracePeriodSeconds must be above"):
        chart.render({"reader": {"preStopSeconds": 30, "terminationGracePeriodSeconds": 30}}, name=RELEASE)


def test_priorities_spreading_and_extra_volumes(render: Render, default: Rendered) -> None:
    rendered = render(ci_values("platform"))
    servers = {INDEXER: rendered.get("StatefulSet", INDEXER), READER: rendered.get("Deployment", READER)}
    operator = rendered.get("Deployment", OPERATOR)
    for workload in (*servers.values(), operator):
        assert pod_spec(workload)["priorityClassName"] == "ragdown-critical"
    assert pod_spec(operator)["topologySpreadConstraints"] == [
        {
            "maxSkew": 1,
            "topologyKey": HOSTNAME,
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": selector(rendered, "Deployment", OPERATOR)},
        }
    ]
    for workload in servers.values():
        spec = pod_spec(workload)
        assert {"name": "ca", "configMap": {"name": "internal-ca"}} in spec["volumes"]
        mount = {"name": "ca", "mountPath": "/etc/ragdown/ca", "readOnly": True}
        assert mount in container(workload, "ragdown")["volumeMounts"]
    for workload in workloads(default):
        assert "priorityClassName" not in pod_spec(workload)
        assert "topologySpreadConstraints" not in pod_spec(workload)


def test_openshift_names_no_ids(render: Render) -> None:
    rendered = render(ci_values("openshift"))
    for workload in workloads(rendered):
        spec = pod_spec(workload)
        assert spec["securityContext"] == {
            "runAsNonRoot": True,
            "fsGroupChangePolicy": "OnRootMismatch",
            "seccompProfile": {"type": "RuntimeDefault"},
        }
        for c in spec["containers"] + spec.get("initContainers", []):
            assert not {"runAsUser", "runAsGroup"} & c["securityContext"].keys()


def test_the_test_pod_reaches_hosts_the_servers_answer_to(default: Rendered) -> None:
    """`helm test` calls the Services by name: the Host it sends must pass the servers' check."""
    (test,) = pod_spec(default.get("Pod", f"{FULLNAME}-test"))["containers"]
    status_url, mcp_url = test["args"]
    assert guard(default, "StatefulSet", INDEXER).host_allowed(urlsplit(status_url).netloc)
    assert guard(default, "Deployment", READER).host_allowed(urlsplit(mcp_url).netloc)
