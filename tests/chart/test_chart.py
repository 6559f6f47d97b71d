"""The Helm chart, rendered and linted by Helm's own library (helm-python-sdk), every object checked
against the Kubernetes OpenAPI schemas (kubernetes-validate --strict), and the behaviour the chart
promises (docs/cluster.md) asserted on the rendered objects. Offline: no cluster is involved."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import SchemaNotFoundError, latest_version

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "ragdown"
CI_FILES = sorted((CHART / "ci").glob("*-values.yaml"))
CI_NAMES = [path.name.removesuffix("-values.yaml") for path in CI_FILES]
# Values files shipped for users (e.g. the kind walk-through) must keep matching the chart.
EXAMPLE_VALUES = sorted((REPO / "deploy" / "k8s").glob("values*.yaml"))
RELEASE = "demo"
NAMESPACE = "ragdown-test"
FULLNAME = "demo-ragdown"
INDEXER = f"{FULLNAME}-indexer"
READER = f"{FULLNAME}-reader"
OPERATOR = f"{FULLNAME}-operator"
RELEASE_JOB = f"{OPERATOR}-release"
TEST_POD = f"{FULLNAME}-test"
# The oldest Kubernetes the default values support (native sidecars) and the newest schema bundled.
KUBE_VERSIONS = ["1.29", latest_version()]
LABEL_KEYS = {
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/component",
    "app.kubernetes.io/part-of",
    "app.kubernetes.io/managed-by",
}

Obj = dict[str, Any]


class Rendered:
    """One render of the chart: its objects and its NOTES.txt."""

    def __init__(self, manifests: dict[str, str]) -> None:
        self.notes = ""
        self.objects: list[Obj] = []
        for path, text in manifests.items():
            if path.endswith("NOTES.txt"):
                self.notes = text
                continue
            self.objects.extend(doc for doc in yaml.safe_load_all(text) if doc)

    def all(self, kind: str) -> list[Obj]:
        return [obj for obj in self.objects if obj["kind"] == kind]

    def get(self, kind: str, name: str) -> Obj:
        found = [obj for obj in self.all(kind) if obj["metadata"]["name"] == name]
        assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}"
        return found[0]

    def has(self, kind: str, name: str) -> bool:
        return any(obj["metadata"]["name"] == name for obj in self.all(kind))


Render = Callable[[Obj], Rendered]


@pytest.fixture(scope="module")
def chart() -> Iterator[helm.Chart]:
    with helm.Chart.load(CHART) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def render(chart: helm.Chart) -> Render:
    """Render with the given values; cached, as every test reads the same few renders."""
    cache: dict[str, Rendered] = {}

    def render_values(values: Obj) -> Rendered:
        key = json.dumps(values, sort_keys=True)
        if key not in cache:
            cache[key] = Rendered(chart.render(values, name=RELEASE, namespace=NAMESPACE))
        return cache[key]

    return render_values


def ci_values(name: str) -> Obj:
    return yaml.safe_load((CHART / "ci" / f"{name}-values.yaml").read_text()) or {}


@pytest.fixture(scope="module")
def default(render: Render) -> Rendered:
    return render({})


def pod_spec(obj: Obj) -> Obj:
    spec: Obj = obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]
    return spec


def workloads(rendered: Rendered) -> list[Obj]:
    """Everything that runs a pod: the servers and the operator, and the hook Job and test Pod."""
    kinds = {"Deployment", "StatefulSet", "Job", "Pod"}
    return [obj for obj in rendered.objects if obj["kind"] in kinds]


def container(obj: Obj, name: str, key: str = "containers") -> Obj:
    found: list[Obj] = [c for c in pod_spec(obj).get(key, []) if c["name"] == name]
    assert len(found) == 1, f"{obj['metadata']['name']}: expected one {key} entry {name}"
    return found[0]


def env_of(container_spec: Obj) -> dict[str, Any]:
    """name → value, or the valueFrom mapping for references."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container_spec.get("env", [])}


def test_every_supported_shape_has_a_ci_values_file() -> None:
    assert {
        "default",
        "existing-secret",
        "no-operator",
        "servicemonitor",
        "legacy-sidecar",
        "tls-host",
        "fixed-readers",
        "rwx",
        "no-host-ingress",
        "openshift",
        "prometheusrule",
        "query-log",
        "platform",
        "object-store",
    } <= set(CI_NAMES)


@pytest.mark.parametrize("name", CI_NAMES)
def test_helm_lint_strict_reports_no_warning_or_error(name: str) -> None:
    report = helm.lint(CHART, ci_values(name), strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    # Severity 1 is info (e.g. "icon is recommended"); 2 is a warning, 3 an error.
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


@pytest.mark.parametrize("path", EXAMPLE_VALUES, ids=[path.name for path in EXAMPLE_VALUES])
def test_example_values_files_fit_the_chart(render: Render, path: Path) -> None:
    values = yaml.safe_load(path.read_text()) or {}
    report = helm.lint(CHART, values, strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []
    rendered = render(values)
    for obj in rendered.objects:
        kubernetes_validate.validate(obj, latest_version(), strict=True)


@pytest.mark.parametrize("version", KUBE_VERSIONS)
@pytest.mark.parametrize("name", CI_NAMES)
def test_every_object_is_valid_kubernetes(render: Render, chart: helm.Chart, name: str, version: str) -> None:
    rendered = render(ci_values(name))
    objects = rendered.objects + [yaml.safe_load(crd["data"]) for crd in chart.crds]
    checked: set[str] = set()
    for obj in objects:
        if obj["kind"] in {"ServiceMonitor", "PrometheusRule"}:
            continue  # no bundled schema: checked by hand below
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except SchemaNotFoundError:
            pytest.fail(f"no schema for {obj['apiVersion']} {obj['kind']}: an API Kubernetes {version} lacks")
        checked.add(obj["kind"])
    assert {
        "StatefulSet",
        "Deployment",
        "Service",
        "PersistentVolumeClaim",
        "CustomResourceDefinition",
        "Pod",
    } <= checked


def test_the_service_monitor_scrapes_indexer_readers_and_operator(render: Render) -> None:
    rendered = render(ci_values("servicemonitor"))
    monitor = rendered.get("ServiceMonitor", FULLNAME)
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint == {
        "port": "metrics",
        "path": "/metrics",
        "interval": "15s",
        "scrapeTimeout": "10s",
        # The release on every series: the dashboard's $release and the alerts select by it.
        "relabelings": [
            {
                "sourceLabels": ["__meta_kubernetes_service_label_app_kubernetes_io_instance"],
                "targetLabel": "release",
            }
        ],
    }
    selector = monitor["spec"]["selector"]
    (expression,) = selector["matchExpressions"]

    def selected(service: Obj) -> bool:
        labels = service["metadata"]["labels"]
        return all(labels.get(k) == v for k, v in selector["matchLabels"].items()) and (
            labels.get(expression["key"]) in expression["values"]
        )

    scraped = {s["metadata"]["name"] for s in rendered.all("Service") if selected(s)}
    assert scraped == {INDEXER, READER, OPERATOR}
    for service in rendered.all("Service"):
        if service["metadata"]["name"] in scraped:
            assert "metrics" in {port["name"] for port in service["spec"]["ports"]}
    # Without the ServiceMonitor the operator needs no Service at all.
    assert not render({}).has("Service", OPERATOR)
    assert not render({}).all("ServiceMonitor")


def test_readers_mount_the_claim_read_only_and_the_indexer_read_write(default: Rendered) -> None:
    indexer = default.get("StatefulSet", INDEXER)
    reader = default.get("Deployment", READER)
    claim = default.get("PersistentVolumeClaim", f"{FULLNAME}-data")
    for workload, read_only in ((indexer, False), (reader, True)):
        (volume,) = [v for v in pod_spec(workload)["volumes"] if v["name"] == "data"]
        assert volume["persistentVolumeClaim"] == {
            "claimName": claim["metadata"]["name"],
            "readOnly": read_only,
        }
        (mount,) = [m for m in container(workload, "ragdown")["volumeMounts"] if m["name"] == "data"]
        assert mount == {"name": "data", "mountPath": "/data", "readOnly": read_only}
    assert indexer["spec"]["replicas"] == 1
    # The indexer creates docs/ and index/ on a fresh volume before the server starts.
    init = container(indexer, "init-dirs", "initContainers")
    assert "mkdir -p /data/docs /data/index" in " ".join(init["command"])


def test_the_statefulset_is_governed_by_a_headless_service(default: Rendered) -> None:
    indexer = default.get("StatefulSet", INDEXER)
    headless = default.get("Service", indexer["spec"]["serviceName"])
    assert headless["metadata"]["name"] == f"{INDEXER}-headless"
    assert headless["spec"]["clusterIP"] == "None"
    pod_labels = indexer["spec"]["template"]["metadata"]["labels"]
    assert headless["spec"]["selector"].items() <= pod_labels.items()
    # The public Service keeps a cluster IP: the Ingress and the operator go through it.
    assert "clusterIP" not in default.get("Service", INDEXER)["spec"]


def test_an_existing_claim_replaces_the_rendered_one(render: Render) -> None:
    rendered = render({"persistence": {"existingClaim": "shared-docs"}})
    assert not rendered.all("PersistentVolumeClaim")
    for workload in workloads(rendered):
        for volume in pod_spec(workload)["volumes"]:
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] == "shared-docs"


@pytest.mark.parametrize("name", CI_NAMES)
def test_every_container_runs_non_root_on_a_read_only_root_without_capabilities(
    render: Render, name: str
) -> None:
    rendered = render(ci_values(name))
    for workload in workloads(rendered):
        spec = pod_spec(workload)
        pod_security = spec["securityContext"]
        assert pod_security["seccompProfile"] == {"type": "RuntimeDefault"}
        ids = [pod_security.get(key) for key in ("runAsUser", "runAsGroup", "fsGroup")]
        # OpenShift's restricted SCC assigns the ids and refuses pods that name their own.
        assert ids == ([None] * 3 if name == "openshift" else [10001] * 3), workload["metadata"]["name"]
        containers = spec["containers"] + spec.get("initContainers", [])
        for c in containers:
            security = c["securityContext"]
            where = f"{workload['metadata']['name']}/{c['name']}"
            assert security["readOnlyRootFilesystem"] is True, where
            assert security["allowPrivilegeEscalation"] is False, where
            assert security["capabilities"]["drop"] == ["ALL"], where
            assert security.get("runAsNonRoot", pod_security.get("runAsNonRoot")) is True, where
            assert "runAsUser" not in security, where
        # A read-only root needs somewhere writable for caches and temp files.
        assert "emptyDir" in {v["name"]: v for v in spec["volumes"]}["tmp"]
        # Only the operator (and its uninstall hook) talks to the API server.
        is_operator = workload["metadata"]["name"] in (OPERATOR, RELEASE_JOB)
        assert spec["automountServiceAccountToken"] is is_operator


@pytest.mark.parametrize("name", ["query-log", "legacy-sidecar"])
def test_the_query_log_sidecar_is_native_or_legacy(render: Render, name: str) -> None:
    rendered = render(ci_values(name))
    native = name == "query-log"
    for workload in (rendered.get("StatefulSet", INDEXER), rendered.get("Deployment", READER)):
        spec = pod_spec(workload)
        inits = {c["name"]: c for c in spec.get("initContainers", [])}
        plain = {c["name"]: c for c in spec["containers"]}
        sidecar = inits.get("query-log") if native else plain.get("query-log")
        assert sidecar is not None
        assert ("query-log" in inits, "query-log" in plain) == (native, not native)
        assert sidecar["args"] == ["tail-log", "--wait", "--file", "/var/log/ragdown/query-log.jsonl"]
        assert sidecar.get("restartPolicy") == ("Always" if native else None)
        server_env = env_of(plain["ragdown"])
        assert server_env["RAGDOWN_QUERY_LOG"] == "true"
        assert server_env["RAGDOWN_QUERY_LOG_FILE"] == "/var/log/ragdown/query-log.jsonl"
        # Prompts are logged as a hash unless includePrompts says otherwise (query-log's ci file does).
        keeps = ci_values(name)["queryLog"].get("includePrompts", False)
        assert server_env.get("RAGDOWN_QUERY_LOG_PROMPTS") == ("true" if keeps else None)
        assert {"name": "query-log", "emptyDir": {"sizeLimit": "64Mi"}} in spec["volumes"]


def test_the_query_log_is_off_by_default(default: Rendered) -> None:
    for workload in (default.get("StatefulSet", INDEXER), default.get("Deployment", READER)):
        spec = pod_spec(workload)
        names = [c["name"] for c in spec["containers"] + spec.get("initContainers", [])]
        assert "query-log" not in names
        env = env_of(container(workload, "ragdown"))
        assert not {"RAGDOWN_QUERY_LOG", "RAGDOWN_QUERY_LOG_FILE", "RAGDOWN_QUERY_LOG_PROMPTS"} & env.keys()
        assert "query-log" not in {v["name"] for v in spec["volumes"]}
    assert "query-log" not in default.notes


def test_include_prompts_logs_the_prompts_themselves(render: Render) -> None:
    rendered = render({"queryLog": {"enabled": True, "includePrompts": True}})
    for workload in (rendered.get("StatefulSet", INDEXER), rendered.get("Deployment", READER)):
        assert env_of(container(workload, "ragdown"))["RAGDOWN_QUERY_LOG_PROMPTS"] == "true"
    # Without a query log there is nothing to put prompts in.
    off = render({"queryLog": {"includePrompts": True}}).get("Deployment", READER)
    assert "RAGDOWN_QUERY_LOG_PROMPTS" not in env_of(container(off, "ragdown"))


def test_native_sidecars_are_refused_before_kubernetes_1_29(capfd: pytest.CaptureFixture[str]) -> None:
    # Lint runs templates in lint mode, where `fail` is logged to stderr by the library, not raised.
    helm.lint(CHART, ci_values("query-log"), namespace=NAMESPACE, kube_version="v1.28.0")
    assert "queryLog.nativeSidecar needs Kubernetes >= 1.29" in capfd.readouterr().err
    helm.lint(CHART, ci_values("legacy-sidecar"), namespace=NAMESPACE, kube_version="v1.28.0")
    helm.lint(CHART, ci_values("query-log"), namespace=NAMESPACE, kube_version="v1.29.0")
    # The default (no query log) runs on the oldest Kubernetes the chart supports.
    helm.lint(CHART, {}, namespace=NAMESPACE, kube_version="v1.27.0")
    assert "nativeSidecar" not in capfd.readouterr().err


def test_the_servers_get_their_role_paths_threads_token_and_hosts(render: Render) -> None:
    rendered = render(ci_values("tls-host"))
    indexer = env_of(container(rendered.get("StatefulSet", INDEXER), "ragdown"))
    reader = env_of(container(rendered.get("Deployment", READER), "ragdown"))
    assert indexer["RAGDOWN_ROLE"] == "primary"
    assert "RAGDOWN_PRIMARY_URL" not in indexer
    assert reader["RAGDOWN_ROLE"] == "reader"
    # Readers reach the indexer's internal listener, never its public port (docs/security.md).
    assert reader["RAGDOWN_PRIMARY_URL"] == f"http://{INDEXER}-internal:3001"
    assert indexer["RAGDOWN_INTERNAL_PORT"] == "3001"
    assert "RAGDOWN_INTERNAL_PORT" not in reader
    secret = f"{FULLNAME}-token"
    # The admin token is the indexer's (and the operator's) only; readers never hold it.
    assert indexer["RAGDOWN_ADMIN_TOKEN"] == {"secretKeyRef": {"name": secret, "key": "adminToken"}}
    assert "RAGDOWN_ADMIN_TOKEN" not in reader
    for env in (indexer, reader):
        assert env["RAGDOWN_INTERNAL_TOKEN"] == {"secretKeyRef": {"name": secret, "key": "internalToken"}}
    for env in (indexer, reader):
        assert env["RAGDOWN_DOCS_DIR"] == "/data/docs"
        assert env["RAGDOWN_DATA_DIR"] == "/data/index"
        assert (env["RAGDOWN_HOST"], env["PORT"], env["RAGDOWN_METRICS_PORT"]) == ("0.0.0.0", "3000", "9090")
        assert env["LANCE_CPU_THREADS"] == "2"
        assert env["RAGDOWN_THREADS"] == "2"
        assert env["XDG_CACHE_HOME"] == "/tmp/cache"
        assert env["RAGDOWN_EMBEDDER"] == "bge-small"
        assert env["RAGDOWN_MODELS"] == "/data/models"
        assert env["RAGDOWN_TOKEN"] == {"secretKeyRef": {"name": f"{FULLNAME}-token", "key": "token"}}
        hosts = env["RAGDOWN_ALLOWED_HOSTS"].split(",")
        # The ingress host, the in-cluster Service names and the extra hosts pass MCP's rebinding check.
        for host in (
            "ragdown.example.com",
            INDEXER,
            f"{INDEXER}.{NAMESPACE}.svc",
            READER,
            "docs.example.com",
        ):
            assert host in hosts
    # An empty embedder value leaves the variable unset: the server picks the index's embedder.
    default_env = env_of(container(render({}).get("StatefulSet", INDEXER), "ragdown"))
    assert "RAGDOWN_EMBEDDER" not in default_env
    assert "RAGDOWN_HUB_URL" not in default_env
    assert "ragdown.example.com" not in default_env["RAGDOWN_ALLOWED_HOSTS"]


def test_servers_expose_http_and_metrics_with_probes(default: Rendered) -> None:
    for workload in (default.get("StatefulSet", INDEXER), default.get("Deployment", READER)):
        server = container(workload, "ragdown")
        internal = {("internal", 3001)} if workload["kind"] == "StatefulSet" else set()
        assert {(p["name"], p["containerPort"]) for p in server["ports"]} == {
            ("http", 3000),
            ("metrics", 9090),
            *internal,
        }
        assert server["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
        assert server["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
        assert server["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
        assert server["startupProbe"]["failureThreshold"] * server["startupProbe"]["periodSeconds"] >= 600
    for name in (INDEXER, READER):
        service = default.get("Service", name)
        workload = default.get("StatefulSet" if name == INDEXER else "Deployment", name)
        ports = {(p["name"], p["port"], p["targetPort"]) for p in service["spec"]["ports"]}
        assert ports == {("http", 3000, "http"), ("metrics", 9090, "metrics")}
        pod_labels = workload["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= pod_labels.items()
        assert workload["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]


def test_three_tokens_each_generated_random_and_apart_or_given(render: Render) -> None:
    data = render({}).get("Secret", f"{FULLNAME}-token")["data"]
    generated = {
        key: base64.b64decode(data[key]).decode() for key in ("token", "adminToken", "internalToken")
    }
    for token in generated.values():
        assert len(token) == 40
        assert token.isalnum()
    assert len(set(generated.values())) == 3  # one role, one token
    given = render({"auth": {"token": "s3cret", "adminToken": "adm1n"}}).get("Secret", f"{FULLNAME}-token")
    assert base64.b64decode(given["data"]["token"]) == b"s3cret"
    assert base64.b64decode(given["data"]["adminToken"]) == b"adm1n"
    assert len(base64.b64decode(given["data"]["internalToken"])) == 40


def test_an_existing_secret_renders_no_secret_and_is_referenced(render: Render) -> None:
    rendered = render(ci_values("existing-secret"))
    assert not rendered.all("Secret")

    def reference(key: str) -> dict[str, Any]:
        return {"secretKeyRef": {"name": "ragdown-credentials", "key": key}}

    for workload in workloads(rendered):
        if workload["metadata"]["name"] == RELEASE_JOB:
            assert "secretKeyRef" not in str(pod_spec(workload))  # it needs no token at all
            continue
        if workload["metadata"]["name"] == TEST_POD:
            assert env_of(container(workload, "test")) == {"RAGDOWN_TOKEN": reference("bearer-token")}
            continue
        name = "operator" if workload["metadata"]["name"] == OPERATOR else "ragdown"
        env = env_of(container(workload, name))
        if name == "operator":
            assert env["RAGDOWN_ADMIN_TOKEN"] == reference("admin-token")
            assert "RAGDOWN_TOKEN" not in env  # the operator never speaks MCP
        else:
            assert env["RAGDOWN_TOKEN"] == reference("bearer-token")
            assert env["RAGDOWN_INTERNAL_TOKEN"] == reference("internal-token")
    assert "get secret ragdown-credentials" in rendered.notes
    assert "{.data.bearer-token}" in rendered.notes
    assert "{.data.admin-token}" in rendered.notes


def test_the_internal_port_is_a_clusterip_service_only_readers_may_reach(render: Render) -> None:
    rendered = render({"service": {"type": "LoadBalancer"}})
    internal = rendered.get("Service", f"{INDEXER}-internal")
    # Whatever type the public Services have, the internal one is never exposed outside the cluster.
    assert internal["spec"]["type"] == "ClusterIP"
    assert internal["spec"]["ports"] == [
        {"name": "internal", "port": 3001, "targetPort": "internal", "protocol": "TCP"}
    ]
    assert internal["spec"]["selector"] == rendered.get("Service", INDEXER)["spec"]["selector"]
    for name in (INDEXER, READER):
        assert "internal" not in {p["name"] for p in rendered.get("Service", name)["spec"]["ports"]}
    for ingress in rendered.all("Ingress"):
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                assert path["backend"]["service"]["port"] == {"name": "http"}
    policy = rendered.get("NetworkPolicy", INDEXER)
    assert policy["spec"]["podSelector"]["matchLabels"] == internal["spec"]["selector"]
    http_rule, metrics_rule, internal_rule = policy["spec"]["ingress"]
    # No peers named (networkPolicy.ingressController, .monitoring): these admit any source.
    assert "from" not in http_rule
    assert "from" not in metrics_rule
    assert [p["port"] for p in http_rule["ports"] + metrics_rule["ports"]] == ["http", "metrics"]
    assert internal_rule["ports"] == [{"port": "internal", "protocol": "TCP"}]
    reader_labels = rendered.get("Deployment", READER)["spec"]["template"]["metadata"]["labels"]
    assert internal_rule["from"] == [
        {"podSelector": {"matchLabels": rendered.get("Service", READER)["spec"]["selector"]}}
    ]
    assert rendered.get("Service", READER)["spec"]["selector"].items() <= reader_labels.items()
    assert not render({"networkPolicy": {"enabled": False}}).all("NetworkPolicy")


def test_the_operator_may_read_only_the_token_secrets_it_is_given(render: Render) -> None:
    names = ["team-a-token", "team-b.tokens"]
    role = render({"operator": {"tokenSecrets": names}}).get("Role", OPERATOR)
    (secrets,) = [rule for rule in role["rules"] if "secrets" in rule["resources"]]
    assert secrets == {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": names}
    others = [rule for rule in role["rules"] if rule is not secrets]
    assert all("resourceNames" not in rule for rule in others)


def test_no_operator_renders_no_operator_objects(render: Render) -> None:
    rendered = render(ci_values("no-operator"))
    for kind in ("Deployment", "ServiceAccount", "Role", "RoleBinding", "Service"):
        assert not rendered.has(kind, OPERATOR), kind
    assert rendered.has("Deployment", READER)
    assert "operator is disabled" in rendered.notes


def test_the_operator_role_grants_exactly_what_it_touches(default: Rendered) -> None:
    role = default.get("Role", OPERATOR)
    assert role["metadata"]["namespace"] == NAMESPACE
    assert not default.all("ClusterRole")
    assert not default.all("ClusterRoleBinding")
    grants = {
        (group, resource): set(rule["verbs"])
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert grants == {
        # Each verb used, as tests/cluster/test_operator_real.py shows on a real API server.
        ("ragdown.dev", "ragdownfolders"): {"get", "list", "watch", "patch"},
        ("ragdown.dev", "ragdownfolders/status"): {"patch"},
        ("ragdown.dev", "ragdownfolders/finalizers"): {"update"},
        ("networking.k8s.io", "ingresses"): {"get", "list", "watch", "create", "patch", "delete"},
        ("", "secrets"): {"get"},  # the Secrets spec.tokens names, re-read at each resync: no list, no watch
        ("", "events"): {"create"},
    }
    assert all("resourceNames" not in rule and "nonResourceURLs" not in rule for rule in role["rules"])
    binding = default.get("RoleBinding", OPERATOR)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": OPERATOR}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": OPERATOR, "namespace": NAMESPACE}]
    operator = default.get("Deployment", OPERATOR)
    assert pod_spec(operator)["serviceAccountName"] == OPERATOR
    assert default.has("ServiceAccount", OPERATOR)


def test_the_operator_runs_once_with_its_settings(render: Render) -> None:
    operator = render(ci_values("tls-host")).get("Deployment", OPERATOR)
    assert operator["spec"]["replicas"] == 1
    assert operator["spec"]["strategy"] == {"type": "Recreate"}
    main = container(operator, "operator")
    assert main["command"] == ["ragdown-operator"]
    assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    # Ready once kopf answers: the metrics Service sends scrapes only to a running operator.
    assert main["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert {(p["name"], p["containerPort"]) for p in main["ports"]} == {("health", 8080), ("metrics", 9090)}
    env = env_of(main)
    assert env["RAGDOWN_OPERATOR_INDEXER_URL"] == f"http://{INDEXER}:3000"
    assert env["RAGDOWN_OPERATOR_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["RAGDOWN_OPERATOR_READER_SERVICE"] == READER
    assert env["RAGDOWN_OPERATOR_READER_PORT"] == "3000"
    assert env["RAGDOWN_OPERATOR_INGRESS_CLASS"] == "traefik"
    assert env["RAGDOWN_OPERATOR_INGRESS_HOST"] == "ragdown.example.com"
    assert env["RAGDOWN_OPERATOR_INGRESS_TLS_SECRET"] == "ragdown-example-tls"
    # cert-manager's annotation stays on the base Ingress: one certificate, reused by the MCP routes.
    assert json.loads(env["RAGDOWN_OPERATOR_INGRESS_ANNOTATIONS"]) == {
        "traefik.ingress.kubernetes.io/router.entrypoints": "websecure",
        "traefik.ingress.kubernetes.io/router.middlewares": "ragdown-mcp-ratelimit@kubernetescrd",
    }
    assert env["RAGDOWN_OPERATOR_PUBLIC_URL"] == "https://ragdown.example.com"
    assert env["RAGDOWN_OPERATOR_RESYNC_S"] == "60"
    assert env["RAGDOWN_OPERATOR_INSTANCE"] == RELEASE
    assert env["RAGDOWN_OPERATOR_CLAIM_UNLABELLED"] == "true"
    assert env["RAGDOWN_OPERATOR_DELETION_TIMEOUT_S"] == "600"
    assert env["RAGDOWN_ADMIN_TOKEN"] == {"secretKeyRef": {"name": f"{FULLNAME}-token", "key": "adminToken"}}
    assert "RAGDOWN_TOKEN" not in env


@pytest.mark.parametrize(
    ("values", "public_url"),
    [
        ({}, ""),
        ({"ingress": {"host": "docs.local"}}, "http://docs.local"),
        (
            {"ingress": {"host": "docs.local"}, "operator": {"publicUrl": "https://mcp.example/"}},
            "https://mcp.example",
        ),
    ],
    ids=["no-host", "plain-host", "explicit"],
)
def test_the_operator_public_url_follows_the_ingress(render: Render, values: Obj, public_url: str) -> None:
    operator = render(values).get("Deployment", OPERATOR)
    assert env_of(container(operator, "operator"))["RAGDOWN_OPERATOR_PUBLIC_URL"] == public_url


def test_the_hpa_scales_the_readers_on_cpu(default: Rendered) -> None:
    hpa = default.get("HorizontalPodAutoscaler", READER)
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": READER}
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"]["type"] == "Utilization"
    reader = default.get("Deployment", READER)
    # The HPA owns the replica count; a fixed one would fight it on every upgrade.
    assert "replicas" not in reader["spec"]
    # Utilization is relative to requests: every container of the pod needs a CPU request.
    spec = pod_spec(reader)
    for c in spec["containers"] + spec.get("initContainers", []):
        assert c["resources"]["requests"]["cpu"], c["name"]
    # topology singleNode: every reader sits on the indexer's node, so no budget could let it drain.
    assert not default.all("PodDisruptionBudget")


def test_fixed_readers_render_replicas_and_no_hpa(render: Render) -> None:
    rendered = render(ci_values("fixed-readers"))
    assert not rendered.all("HorizontalPodAutoscaler")
    assert rendered.get("Deployment", READER)["spec"]["replicas"] == 3
    spread = render(
        {
            **ci_values("fixed-readers"),
            "topology": "multiNode",
            "persistence": ci_values("rwx")["persistence"],
        }
    )
    assert spread.get("PodDisruptionBudget", READER)["spec"]["minAvailable"] == 1


def test_a_single_reader_gets_no_disruption_budget(render: Render) -> None:
    # minAvailable 1 over one reader would block every node drain.
    rendered = render({**ci_values("rwx"), "reader": {"replicas": 1, "autoscaling": {"enabled": False}}})
    assert not rendered.all("PodDisruptionBudget")


def test_autoscaling_bounds_out_of_order_are_refused(chart: helm.Chart) -> None:
    with pytest.raises(helm.HelmRenderError, match="minReplicas is above"):
        chart.render({"reader": {"autoscaling": {"minReplicas": 5, "maxReplicas": 2}}}, name=RELEASE)


def test_the_ingress_routes_people_to_the_indexer(default: Rendered, render: Render) -> None:
    ingress = default.get("Ingress", FULLNAME)
    assert "ingressClassName" not in ingress["spec"]
    assert "tls" not in ingress["spec"]
    (rule,) = ingress["spec"]["rules"]
    assert "host" not in rule
    paths = {(p["path"], p["pathType"]): p["backend"]["service"] for p in rule["http"]["paths"]}
    backend = {"name": INDEXER, "port": {"name": "http"}}
    # /mcp goes to the readers, never to the indexer through "/" (docs/cluster.md#exposure).
    assert paths == {
        ("/", "Prefix"): backend,
        ("/api", "Prefix"): backend,
        ("/mcp", "Prefix"): {"name": READER, "port": {"name": "http"}},
    }

    tls = render(ci_values("tls-host")).get("Ingress", FULLNAME)
    assert tls["spec"]["ingressClassName"] == "traefik"
    assert tls["spec"]["rules"][0]["host"] == "ragdown.example.com"
    assert tls["spec"]["tls"] == [{"secretName": "ragdown-example-tls", "hosts": ["ragdown.example.com"]}]
    assert tls["metadata"]["annotations"] == {
        "traefik.ingress.kubernetes.io/router.entrypoints": "websecure",
        "cert-manager.io/cluster-issuer": "letsencrypt",  # the certificate is issued here, once
    }
    assert not render({"ingress": {"enabled": False}}).all("Ingress")


def test_the_dashboard_config_map_is_found_by_grafana(render: Render, chart: helm.Chart) -> None:
    rendered = render(ci_values("servicemonitor"))
    config_map = rendered.get("ConfigMap", f"{FULLNAME}-dashboard")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["labels"]["team"] == "docs"
    assert config_map["metadata"]["annotations"] == {"grafana_folder": "ragdown"}
    dashboard = json.loads(config_map["data"]["ragdown.json"])
    # Compared with the file as the chart loaded it (the file on disk may be edited meanwhile).
    (source,) = [f["data"] for f in chart.files if f["name"] == "dashboards/ragdown.json"]
    assert dashboard == json.loads(source)
    assert dashboard["title"]
    assert not render({"grafana": {"dashboard": {"enabled": False}}}).all("ConfigMap")


@pytest.mark.parametrize("name", CI_NAMES)
def test_every_object_carries_the_recommended_labels(render: Render, name: str) -> None:
    rendered = render(ci_values(name))
    for obj in rendered.objects:
        labels = obj["metadata"]["labels"]
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        assert labels.keys() >= LABEL_KEYS, where
        assert labels["app.kubernetes.io/instance"] == RELEASE, where
        assert labels["app.kubernetes.io/part-of"] == "ragdown", where
        assert labels["app.kubernetes.io/managed-by"] == "Helm", where
        if obj["kind"] != "CustomResourceDefinition":  # cluster-wide
            assert obj["metadata"]["namespace"] == NAMESPACE, where
        template = obj.get("spec", {}).get("template")
        if template is not None:
            assert template["metadata"]["labels"].keys() >= LABEL_KEYS, where


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"reader": {"autoscaling": {"maxReplicas": "many"}}}, "/reader/autoscaling/maxReplicas"),
        ({"replicaCount": 3}, "replicaCount"),
        ({"ingress": {"hots": "typo.example"}}, "hots"),
        ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy"),
        ({"server": {"lanceCpuThreads": 1}}, "/server/lanceCpuThreads"),
        ({"server": {"embedder": "gpt"}}, "/server/embedder"),
        ({"operator": {"tokenSecrets": ["Team_A"]}}, "/operator/tokenSecrets"),
    ],
    ids=["type", "unknown-top-level", "unknown-nested", "enum", "minimum", "pattern", "secret-name"],
)
def test_the_values_schema_refuses_bad_values(chart: helm.Chart, values: Obj, message: str) -> None:
    with pytest.raises(helm.HelmValuesError, match="schema") as refused:
        chart.render(values, name=RELEASE, namespace=NAMESPACE)
    assert message in str(refused.value)


CHART_CRD = CHART / "files" / "crds" / "ragdownfolder.yaml"


def test_the_chart_crd_is_the_repository_crd(chart: helm.Chart, default: Rendered) -> None:
    """One source: the chart's copy is byte for byte the repository's, and the rendered CRD is it."""
    assert CHART_CRD.read_bytes() == (REPO / "crds" / "ragdownfolder.yaml").read_bytes()
    # Nothing in crds/: Helm would install it once and never upgrade it.
    assert chart.crds == []
    assert not (CHART / "crds").exists()
    crd = default.get("CustomResourceDefinition", "ragdownfolders.ragdown.dev")
    source = yaml.safe_load(CHART_CRD.read_text())
    assert {k: v for k, v in crd.items() if k != "metadata"} == {
        k: v for k, v in source.items() if k != "metadata"
    }
    assert crd["metadata"]["labels"].items() >= source["metadata"]["labels"].items()
    # Uninstall leaves it: deleting a CRD deletes every RagdownFolder in the cluster.
    assert crd["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert "annotations" not in render_crd(chart, {"crds": {"keep": False}})["metadata"]
    assert not Rendered(chart.render({"crds": {"install": False}}, name=RELEASE, namespace=NAMESPACE)).all(
        "CustomResourceDefinition"
    )


def render_crd(chart: helm.Chart, values: Obj, **how: Any) -> Obj:
    (crd,) = Rendered(chart.render(values, name=RELEASE, namespace=NAMESPACE, **how)).all(
        "CustomResourceDefinition"
    )
    return crd


def test_an_upgrade_applies_a_changed_crd(tmp_path: Path) -> None:
    """Helm never upgrades crds/: a CRD that changed between chart versions must be in the upgrade's
    manifests. A new chart version whose CRD gained a field renders it in the upgrade."""
    copy = tmp_path / "ragdown"
    shutil.copytree(CHART, copy)
    crd_file = copy / "files" / "crds" / "ragdownfolder.yaml"
    source = yaml.safe_load(crd_file.read_text())
    version = source["spec"]["versions"][0]
    version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["owner"] = {
        "type": "string",
        "description": "added in the next chart version",
    }
    version["additionalPrinterColumns"].append({"name": "Owner", "type": "string", "jsonPath": ".spec.owner"})
    crd_file.write_text(yaml.safe_dump(source))
    with helm.Chart.load(copy) as upgraded:
        assert upgraded.crds == []
        crd = render_crd(upgraded, {}, is_upgrade=True, revision=2)
    (rendered_version,) = crd["spec"]["versions"]
    assert rendered_version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["owner"] == {
        "type": "string",
        "description": "added in the next chart version",
    }
    assert {"name": "Owner", "type": "string", "jsonPath": ".spec.owner"} in rendered_version[
        "additionalPrinterColumns"
    ]
    kubernetes_validate.validate(crd, latest_version(), strict=True)


def test_chart_metadata(chart: helm.Chart) -> None:
    metadata = chart.metadata
    assert (metadata["apiVersion"], metadata["name"], metadata["version"]) == ("v2", "ragdown", "0.2.0")
    assert metadata["appVersion"] == "0.1.0"
    assert metadata["kubeVersion"] == ">=1.27.0-0"
    image = container(Rendered(chart.render({}, name=RELEASE)).get("Deployment", READER), "ragdown")["image"]
    assert image == "ragdown:0.1.0"


def test_notes_tell_the_next_steps(default: Rendered, render: Render) -> None:
    assert "kubectl -n ragdown-test apply -f deploy/k8s/work.yaml" in default.notes
    assert "get rdf -w" in default.notes
    assert f"get secret {FULLNAME}-token" in default.notes
    assert "export ADMIN_TOKEN=" in default.notes
    assert f"port-forward svc/{INDEXER}" in default.notes
    notes = render(ci_values("tls-host")).notes
    expected = (
        "claude mcp add --transport http work https://ragdown.example.com/mcp/work "
        '--header "Authorization: Bearer $TOKEN"'
    )
    assert expected in notes


def test_with_the_index_on_object_storage_readers_mount_no_claim_and_spread(render: Render) -> None:
    """docs/cluster.md#index-on-object-storage: the readers' only volume is their own scratch."""
    rendered = render(ci_values("object-store"))
    indexer = rendered.get("StatefulSet", INDEXER)
    reader = rendered.get("Deployment", READER)
    (scratch,) = [v for v in pod_spec(reader)["volumes"] if v["name"] == "data"]
    assert scratch == {"name": "data", "emptyDir": {"sizeLimit": "2Gi"}}
    assert not any("persistentVolumeClaim" in v for v in pod_spec(reader)["volumes"])
    (mount,) = [m for m in container(reader, "ragdown")["volumeMounts"] if m["name"] == "data"]
    assert mount["readOnly"] is False  # its copy of the folders and the models are written there
    reader_env, indexer_env = env_of(container(reader, "ragdown")), env_of(container(indexer, "ragdown"))
    # It reads its copy of the folders: the empty value clears the image's RAGDOWN_DOCS_DIR.
    assert reader_env["RAGDOWN_DOCS_DIR"] == ""
    assert indexer_env["RAGDOWN_DOCS_DIR"] == "/data/docs"
    for env in (reader_env, indexer_env):
        assert env["RAGDOWN_INDEX_URI"] == "s3://ragdown-index/team"
        assert env["RAGDOWN_INDEX_REFRESH_SECONDS"] == "1"
        assert env["AWS_ENDPOINT_URL"] == "http://minio.storage.svc:9000"
        assert env["AWS_REGION"] == "us-east-1"
    # The indexer writes with read-write credentials, the readers read with their own read-only ones
    # (docs/cluster.md#object-storage-credentials).
    for workload, secret, account in (
        (indexer, "ragdown-index-credentials", f"{FULLNAME}-server"),
        (reader, "ragdown-index-read-credentials", READER),
    ):
        assert container(workload, "ragdown")["envFrom"] == [{"secretRef": {"name": secret}}]
        assert pod_spec(workload)["serviceAccountName"] == account
        assert pod_spec(workload)["automountServiceAccountToken"] is False
    # No claim ties the readers to the indexer's node: they only prefer to spread.
    affinity = pod_spec(reader)["affinity"]
    assert "podAffinity" not in affinity
    assert affinity["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert "affinity" not in pod_spec(indexer)
    server_account = rendered.get("ServiceAccount", f"{FULLNAME}-server")
    assert server_account["metadata"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ragdown-index"
    }
    # The claim still holds the folders.
    assert rendered.has("PersistentVolumeClaim", f"{FULLNAME}-data")


def test_without_an_object_store_nothing_of_it_is_rendered(default: Rendered) -> None:
    for workload in (default.get("StatefulSet", INDEXER), default.get("Deployment", READER)):
        env = env_of(container(workload, "ragdown"))
        assert not {"RAGDOWN_INDEX_URI", "AWS_ENDPOINT_URL", "AWS_REGION"} & env.keys()
        assert env["RAGDOWN_DOCS_DIR"] == "/data/docs"
        assert "serviceAccountName" not in pod_spec(workload)
        assert "envFrom" not in container(workload, "ragdown")
    assert not default.has("ServiceAccount", f"{FULLNAME}-server")


@pytest.mark.parametrize("uri", ["http://bucket/x", "s3://", "s3://bucket/x?region=y", "file:///data"])
def test_an_object_store_uri_no_store_serves_is_refused(chart: helm.Chart, uri: str) -> None:
    with pytest.raises(Exception, match="uri"):
        chart.render({"index": {"objectStore": {"uri": uri}}}, name=RELEASE, namespace=NAMESPACE)


def test_the_kind_walk_through_of_the_object_store_renders_and_validates(render: Render) -> None:
    """deploy/k8s: values-kind.yaml with values-kind-object-store.yaml over it, and the moto S3 pod."""

    def merged(base: Obj, over: Obj) -> Obj:
        out = dict(base)
        for key, value in over.items():
            out[key] = (
                merged(out[key], value)
                if isinstance(value, dict) and isinstance(out.get(key), dict)
                else value
            )
        return out

    kind_dir = REPO / "deploy" / "k8s"
    values = merged(
        yaml.safe_load((kind_dir / "values-kind.yaml").read_text()),
        yaml.safe_load((kind_dir / "values-kind-object-store.yaml").read_text()),
    )
    rendered = render(values)
    for obj in rendered.objects:
        kubernetes_validate.validate(obj, latest_version(), strict=True)
    reader = rendered.get("Deployment", READER)
    assert not any("persistentVolumeClaim" in v for v in pod_spec(reader)["volumes"])
    assert env_of(container(reader, "ragdown"))["AWS_ENDPOINT_URL"] == "http://moto-s3:5000"
    store = [doc for doc in yaml.safe_load_all((kind_dir / "moto-s3.yaml").read_text()) if doc]
    assert {doc["kind"] for doc in store} == {"Secret", "Deployment", "Service"}
    for doc in store:
        kubernetes_validate.validate(doc, latest_version(), strict=True)
    (secret,) = [doc for doc in store if doc["kind"] == "Secret"]
    assert secret["metadata"]["name"] == values["index"]["objectStore"]["existingSecret"]
