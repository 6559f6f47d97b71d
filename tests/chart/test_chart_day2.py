"""Day 2 with the chart: pods roll when the tokens change, uninstall lets go of the folders first,
`helm test` proves a release answers (its script run here against a real `ragdown serve`), and the
PrometheusRule's alerts select this release. The README and NOTES say what Helm cannot do."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator

import helm_python as helm
import promql_parser
import pytest

from tests.chart.test_chart import (
    CHART,
    FULLNAME,
    INDEXER,
    NAMESPACE,
    OPERATOR,
    READER,
    RELEASE,
    REPO,
    Obj,
    Render,
    Rendered,
    ci_values,
    container,
    env_of,
    pod_spec,
)
from tests.serving.conftest import free_port, start_serve, stop_process, wait_ready

RELEASE_JOB = f"{OPERATOR}-release"
TEST_POD = f"{FULLNAME}-test"
SECRET = f"{FULLNAME}-token"
GIVEN = {"auth": {"token": "agents-1", "adminToken": "admin-1", "internalToken": "internal-1"}}


def checksums(rendered: Rendered) -> dict[str, str | None]:
    """checksum/secret of each long-running workload's pods (None: no such annotation)."""
    return {
        workload["metadata"]["name"]: (workload["spec"]["template"]["metadata"].get("annotations") or {}).get(
            "checksum/secret"
        )
        for workload in rendered.objects
        if workload["kind"] in {"Deployment", "StatefulSet"}
    }


def data_digest(rendered: Rendered) -> str:
    """SHA-256 of the rendered Secret's data as Helm's toJson writes it (sorted keys, no spaces)."""
    data = rendered.get("Secret", SECRET)["data"]
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# --- tokens -------------------------------------------------------------------------------------------------


def test_pods_carry_the_hash_of_the_secret_they_read(chart: helm.Chart, render: Render) -> None:
    given = render(GIVEN)
    assert checksums(given) == dict.fromkeys((INDEXER, READER, OPERATOR), data_digest(given))
    # Generated tokens: the hash is of the very tokens the Secret of the same render holds.
    generated = render({})
    assert set(checksums(generated).values()) == {data_digest(generated)}
    # An upgrade that changes no token rolls no pod; changing one rolls every pod that reads it.
    again = Rendered(chart.render(GIVEN, name=RELEASE, namespace=NAMESPACE))
    assert checksums(again) == checksums(given)
    changed = render({"auth": {**GIVEN["auth"], "internalToken": "internal-2"}})
    assert set(checksums(changed).values()).isdisjoint(checksums(given).values())


def test_an_existing_secret_is_not_hashed(render: Render) -> None:
    """The chart cannot read a Secret it does not render (not under `helm template` at least): the
    README says to roll the pods or run a reloader; the pods' own annotations stay."""
    rendered = render({**ci_values("existing-secret"), "reader": {"podAnnotations": {"team": "docs"}}})
    assert checksums(rendered) == dict.fromkeys((INDEXER, READER, OPERATOR))
    reader = rendered.get("Deployment", READER)
    assert reader["spec"]["template"]["metadata"]["annotations"] == {"team": "docs"}
    with_annotations = render({"indexer": {"podAnnotations": {"team": "docs"}}})
    annotations = with_annotations.get("StatefulSet", INDEXER)["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"team": "docs", "checksum/secret": data_digest(with_annotations)}


def test_token_drift_under_helm_template_is_explained(default: Rendered, render: Render) -> None:
    readme = (CHART / "README.md").read_text(encoding="utf-8")
    for needed in ("helm template", "Argo CD", "lookup", "existingSecret", "rollout restart", "reloader"):
        assert needed in readme, needed
    assert "helm template" in default.notes
    # Tokens all given, or a Secret of one's own: nothing drifts, nothing to warn about.
    assert "helm template" not in render(GIVEN).notes
    existing = render(ci_values("existing-secret")).notes
    assert "rollout restart" in existing


def test_the_readme_says_how_to_upgrade_and_uninstall() -> None:
    readme = (CHART / "README.md").read_text(encoding="utf-8")
    assert "`helm upgrade` applies a changed" in readme  # Helm never upgrades crds/: a template does
    assert "meta.helm.sh/release-name=<release>" in readme  # adopting the CRD an older chart installed
    assert "--cascade=orphan" in readme  # serviceName of the StatefulSet is immutable
    assert "helm uninstall" in readme
    assert "kubectl delete crd ragdownfolders.ragdown.dev" in readme


# --- uninstall ----------------------------------------------------------------------------------------------


def test_uninstall_first_releases_the_folders(default: Rendered, render: Render) -> None:
    job = default.get("Job", RELEASE_JOB)
    assert job["metadata"]["annotations"] == {
        "helm.sh/hook": "pre-delete",
        "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
    }
    assert job["spec"]["backoffLimit"] >= 1
    assert job["spec"]["activeDeadlineSeconds"] > 0
    spec = pod_spec(job)
    operator = default.get("Deployment", OPERATOR)
    assert spec["restartPolicy"] == "Never"
    assert spec["serviceAccountName"] == pod_spec(operator)["serviceAccountName"] == OPERATOR
    assert spec["automountServiceAccountToken"] is True
    assert spec["securityContext"] == pod_spec(operator)["securityContext"]
    (main,) = spec["containers"]
    running = container(operator, "operator")
    assert main["command"] == ["ragdown-operator", "release-all"]
    assert main["image"] == running["image"]
    assert env_of(main) == {
        "RAGDOWN_OPERATOR_NAMESPACE": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        "RAGDOWN_OPERATOR_INSTANCE": RELEASE,
        # It releases exactly what the operator claims.
        "RAGDOWN_OPERATOR_CLAIM_UNLABELLED": env_of(running)["RAGDOWN_OPERATOR_CLAIM_UNLABELLED"],
    }
    assert main["resources"] == running["resources"]
    assert main["securityContext"] == running["securityContext"]
    # Its pods are not the operator's: neither the Deployment nor the metrics Service selects them.
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert not operator["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert not render(ci_values("no-operator")).all("Job")


# --- helm test ----------------------------------------------------------------------------------------------


def test_the_helm_test_pod(default: Rendered, render: Render) -> None:
    pod = default.get("Pod", TEST_POD)
    assert pod["metadata"]["annotations"] == {
        "helm.sh/hook": "test",
        "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
    }
    spec = pod_spec(pod)
    assert spec["restartPolicy"] == "Never"
    (test,) = spec["containers"]
    assert test["image"] == container(default.get("Deployment", READER), "ragdown")["image"]
    assert test["command"] == ["python", "-c", (CHART / "files" / "helm-test.py").read_text(encoding="utf-8")]
    assert test["args"] == [f"http://{INDEXER}:3000/api/status", f"http://{READER}:3000/mcp"]
    # The agents' token only: the test needs neither the admin's nor the internal one.
    assert env_of(test) == {"RAGDOWN_TOKEN": {"secretKeyRef": {"name": SECRET, "key": "token"}}}
    named = pod_spec(render({"test": {"mcpFolder": "work"}}).get("Pod", TEST_POD))["containers"][0]
    assert named["args"] == [*test["args"], "work"]
    assert not render({"test": {"enabled": False}}).all("Pod")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `ragdown serve` with one MCP folder and one human-only folder."""
    work = tmp_path_factory.mktemp("helm-test")
    for folder, mcp in (("runbooks", True), ("private", False)):
        (work / "docs" / folder).mkdir(parents=True)
        (work / "docs" / folder / ".ragdown.json").write_text(json.dumps({"title": folder, "mcp": mcp}))
        (work / "docs" / folder / "restore.md").write_text("# Restore\n\nRun pg_restore.\n")
    port = free_port()
    process = start_serve(work / "docs", work / "data", port, "agents-token")
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process)
        yield url
    finally:
        stop_process(process)


def run_helm_test(render: Render, url: str, folder: str, token: str) -> subprocess.CompletedProcess[str]:
    """The rendered test container's command, with the Service URLs pointed at the local server."""
    rendered = render({"test": {"mcpFolder": folder}})
    (test,) = pod_spec(rendered.get("Pod", TEST_POD))["containers"]
    assert test["command"][0] == "python"
    args = [
        arg.replace(f"http://{INDEXER}:3000", url).replace(f"http://{READER}:3000", url)
        for arg in test["args"]
    ]
    return subprocess.run(
        [sys.executable, *test["command"][1:], *args],
        env={"RAGDOWN_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # a real `ragdown serve` process
def test_the_helm_test_passes_against_a_real_server(render: Render, served: str) -> None:
    listed = run_helm_test(render, served, "runbooks", "agents-token")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "ready" in listed.stdout
    assert "ragdown_recall" in listed.stdout  # the folder's tools, listed
    fresh = run_helm_test(render, served, "", "agents-token")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "took the token and the Host" in fresh.stdout


@pytest.mark.slow  # the same real `ragdown serve` process
@pytest.mark.parametrize(
    ("folder", "token", "said"),
    [
        ("runbooks", "not-the-token", "403"),
        ("", "not-the-token", "403"),  # a fresh install still proves the token
        ("private", "agents-token", "404"),  # human-only: no MCP to list
    ],
    ids=["wrong-token", "wrong-token-no-folder", "human-only-folder"],
)
def test_the_helm_test_fails_when_mcp_does_not_answer(
    render: Render, served: str, folder: str, token: str, said: str
) -> None:
    result = run_helm_test(render, served, folder, token)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"answered {said}" in result.stdout


def test_the_helm_test_fails_without_an_indexer(render: Render) -> None:
    result = run_helm_test(render, f"http://127.0.0.1:{free_port()}", "", "agents-token")
    assert result.returncode == 1
    assert result.stdout.startswith("FAIL http://127.0.0.1:")


# --- alerts -------------------------------------------------------------------------------------------------


def alerts(rendered: Rendered) -> dict[str, Obj]:
    rule = rendered.get("PrometheusRule", FULLNAME)
    return {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}


def selectors(expr: str) -> list[tuple[str, dict[str, tuple[str, str]]]]:
    """Every series selector of a parsed PromQL expression: metric name → {label: (op, value)}.
    Parsing (promql-parser, Prometheus' grammar) refuses what Prometheus would refuse to load."""
    found: list[tuple[str, dict[str, tuple[str, str]]]] = []

    def visit(node: object) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            matchers = {m.name: (str(m.op).rsplit(".", 1)[-1], m.value) for m in node.matchers.matchers}
            found.append((node.name or "", matchers))

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found


# The labels only the chart's ServiceMonitor gives a series: an alert selecting one never fires when
# the pods are scraped another way.
SERVICE_MONITOR_ONLY = {"release", "job", "service", "endpoint"}
EXPECTED_ALERTS = {
    "RagdownIndexerDown",
    "RagdownIndexerAbsent",
    "RagdownReaderTargetsDown",
    "RagdownOperatorIndexerUnreachable",
    "RagdownSyncStuck",
    "RagdownHookInjectionsStopped",
    "RagdownSearchSlow",
    "RagdownIndexNotSynced",
    "RagdownSyncStale",
    "RagdownOverloaded",
    "RagdownOperatorReconcileFailing",
}


def test_the_prometheus_rule_alerts_on_this_release(render: Render, default: Rendered) -> None:
    assert not default.all("PrometheusRule")
    rendered = render(ci_values("prometheusrule"))
    rule = rendered.get("PrometheusRule", FULLNAME)
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["labels"]["release"] == "prometheus"
    found = alerts(rendered)
    assert set(found) == EXPECTED_ALERTS
    for name, alert in found.items():
        assert re.fullmatch(r"[0-9]+m", alert["for"]), name
        assert alert["labels"]["severity"] in {"warning", "critical"}, name
        summary, description = alert["annotations"]["summary"], alert["annotations"]["description"]
        assert summary, name
        assert description, name
        found_selectors = selectors(alert["expr"])
        assert found_selectors, name
        for metric, matchers in found_selectors:
            assert matchers["namespace"] == ("Equal", NAMESPACE), (name, metric)
            # This release's pods by name; never a label only the ServiceMonitor adds.
            op, pods = matchers["pod"]
            assert op == "Re", (name, metric)
            assert pods.startswith(FULLNAME + "-"), (name, metric)
            assert not SERVICE_MONITOR_ONLY & matchers.keys(), (name, metric)
    assert found["RagdownSearchSlow"]["expr"].endswith("> 0.5")
    assert found["RagdownSyncStale"]["expr"].endswith("> 21600")
    assert 'outcome!="ok"' in found["RagdownOperatorReconcileFailing"]["expr"]
    # The new alerts watch what the outage that matters looks like.
    assert selectors(found["RagdownIndexerDown"]["expr"])[0][0] == "up"
    assert found["RagdownIndexerAbsent"]["expr"].startswith("absent(up{")
    assert found["RagdownIndexerDown"]["labels"]["severity"] == "critical"
    assert "ragdown_operator_indexer_up" in found["RagdownOperatorIndexerUnreachable"]["expr"]
    assert "ragdown_embed_queue_depth" in found["RagdownSyncStuck"]["expr"]
    # Syncs follow changes, not a clock: the age alert is there only when asked for; a stuck sync is
    # alerted on by default.
    plain = render({"metrics": {"prometheusRule": {"enabled": True}}})
    assert "RagdownSyncStale" not in alerts(plain)
    assert "RagdownSyncStuck" in alerts(plain)
    assert "[30m]" in alerts(plain)["RagdownSyncStuck"]["expr"]
    assert alerts(plain)["RagdownSearchSlow"]["expr"].endswith("> 1")
    off = render({"metrics": {"prometheusRule": {"enabled": True, "syncStuckMinutes": 0}}})
    assert "RagdownSyncStuck" not in alerts(off)


@pytest.mark.parametrize(
    ("pod", "component"),
    [
        (f"{FULLNAME}-indexer-0", "indexer"),
        (f"{FULLNAME}-reader-7d9f8b6c5d-x2x9q", "reader"),
        (f"{FULLNAME}-operator-5b7c9d8f6-k8p2m", "operator"),
    ],
)
def test_the_alerts_select_the_pods_by_their_names(render: Render, pod: str, component: str) -> None:
    """Rendered alone (no ServiceMonitor), every selector still matches the pods it is about, and
    never another release's."""
    rendered = render({"metrics": {"prometheusRule": {"enabled": True}}})
    assert not rendered.all("ServiceMonitor")
    about = {
        "indexer": {"RagdownIndexerDown", "RagdownIndexerAbsent", "RagdownSyncStuck"},
        "reader": {"RagdownReaderTargetsDown"},
        "operator": {"RagdownOperatorIndexerUnreachable", "RagdownOperatorReconcileFailing"},
    }[component]
    for name in about:
        for _, matchers in selectors(alerts(rendered)[name]["expr"]):
            pattern = matchers["pod"][1]
            assert re.fullmatch(pattern, pod), (name, pattern)
            assert not re.fullmatch(pattern, pod.replace(FULLNAME, "other-ragdown")), (name, pattern)


def test_a_broken_alert_expression_is_refused_by_the_parser() -> None:
    """The parse above is a real check: what Prometheus would refuse, it refuses too."""
    with pytest.raises(ValueError, match="parenthesis"):
        selectors('sum by (namespace) (rate(ragdown_hook_calls_total{namespace="x"}[5m])')
    with pytest.raises(ValueError, match="invalid promql"):
        selectors('up{namespace="x"} ==')


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", markdown, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_alert_has_a_runbook_section_in_the_docs(render: Render) -> None:
    anchors = github_anchors((REPO / "docs" / "cluster.md").read_text(encoding="utf-8"))
    rendered = render({"metrics": {"prometheusRule": {"enabled": True, "syncMaxAgeSeconds": 60}}})
    found = alerts(rendered)
    assert set(found) == EXPECTED_ALERTS
    for name, alert in found.items():
        url = alert["annotations"]["runbook_url"]
        assert url == f"docs/cluster.md#{name.lower()}", name
        assert url.split("#", 1)[1] in anchors, name
    given = render(
        {
            "metrics": {
                "prometheusRule": {"enabled": True, "runbookBaseUrl": "https://git.example/ops/cluster.md"}
            }
        }
    )
    assert alerts(given)["RagdownIndexerDown"]["annotations"]["runbook_url"] == (
        "https://git.example/ops/cluster.md#ragdownindexerdown"
    )


def test_the_readme_lists_every_alert() -> None:
    readme = (CHART / "README.md").read_text(encoding="utf-8")
    template = (CHART / "templates" / "prometheusrule.yaml").read_text(encoding="utf-8")
    for name in re.findall(r"alert: (\w+)", template):
        assert f"`{name}`" in readme, name
