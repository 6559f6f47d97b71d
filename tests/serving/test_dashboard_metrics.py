"""The chart's Grafana dashboard and alert rules query only what ragdown exports
(docs/cluster.md#server-metrics).

A dashboard that names a metric or label the server does not export shows "No data" forever, and an
alert on one never fires; nobody notices either. So a real server process is started, called over
MCP with the official client, and scraped; the operator's metrics are read from its registry; and
every metric name and label in the dashboard's queries and the chart's PrometheusRule is checked
against them, sample name by sample name (`ragdown_search_seconds_bucket`, not the family). The
`namespace` and `release` labels come from the scrape, not the process: those are the ones the
chart's ServiceMonitor gives every series.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import helm_python as helm
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from ragdown_operator import metrics as operator_metrics
from tests.chart.test_chart import CHART, NAMESPACE, RELEASE, Rendered
from tests.serving.conftest import free_port, start_serve, wait_ready

REPO = Path(__file__).resolve().parents[2]
DASHBOARD_PATH = REPO / "charts" / "ragdown" / "dashboards" / "ragdown.json"
TOKEN = "dashboard-token"

METRIC = re.compile(r"ragdown_[a-z_]+")
SELECTOR = re.compile(r"(ragdown_[a-z_]+)\s*\{([^}]*)\}")
MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
LABEL_VALUES = re.compile(
    r"label_values\(\s*(ragdown_[a-z_]+)\s*(?:\{[^}]*\})?\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)"
)
# Every ragdown name in a query, with the selector after it if any.
SELECTED = re.compile(r"(ragdown_[a-z_]+)(\{[^}]*\})?")
# What the Prometheus Operator puts on every series it scrapes through a ServiceMonitor.
TARGET_LABELS = {"namespace", "service", "pod", "container", "endpoint", "job", "instance"}
SCOPE = 'namespace="$namespace", release="$release"'


@dataclass
class Exposition:
    """One scrape: every sample, and per sample name every label name seen on it."""

    samples: list[tuple[str, dict[str, str], float]]

    @property
    def labels(self) -> dict[str, set[str]]:
        names: dict[str, set[str]] = {}
        for name, labels, _ in self.samples:
            names.setdefault(name, set()).update(labels)
        return names

    def value(self, name: str, **labels: str) -> float:
        return next(v for n, got, v in self.samples if n == name and got == labels)


def load_dashboard() -> dict[str, Any]:
    data = json.loads(DASHBOARD_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def all_panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Top-level panels and those nested in collapsed rows."""
    found = []
    for panel in dashboard["panels"]:
        found.append(panel)
        found += panel.get("panels", [])
    return found


def panel_exprs(dashboard: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in all_panels(dashboard) for target in panel.get("targets", [])]


def variable_queries(dashboard: dict[str, Any]) -> list[str]:
    queries = []
    for variable in dashboard["templating"]["list"]:
        if variable["type"] != "query":
            continue
        query = variable["query"]
        queries.append(query["query"] if isinstance(query, dict) else query)
    return queries


def render_chart(values: dict[str, Any]) -> Rendered:
    with helm.Chart.load(CHART) as chart:
        return Rendered(chart.render(values, name=RELEASE, namespace=NAMESPACE))


@pytest.fixture(scope="module")
def monitored() -> Rendered:
    """The chart with its ServiceMonitor and PrometheusRule (every optional alert on)."""
    values: dict[str, Any] = {
        "metrics": {"serviceMonitor": {"enabled": True}, "prometheusRule": {"enabled": True}}
    }
    values["metrics"]["prometheusRule"]["syncMaxAgeSeconds"] = 3600
    return render_chart(values)


def scrape_labels(rendered: Rendered) -> set[str]:
    """Labels every scraped series carries besides its own: the Prometheus Operator's, and those the
    chart's ServiceMonitor adds by relabeling."""
    (monitor,) = rendered.all("ServiceMonitor")
    added = {
        relabel["targetLabel"]
        for endpoint in monitor["spec"]["endpoints"]
        for relabel in endpoint.get("relabelings", [])
    }
    return TARGET_LABELS | added


def rule_exprs(rendered: Rendered) -> list[str]:
    (rule,) = rendered.all("PrometheusRule")
    return [r["expr"] for group in rule["spec"]["groups"] for r in group["rules"]]


def operator_exposition() -> dict[str, set[str]]:
    """Sample name → label names of the operator's metrics, from its registry. Most are labelled
    and have no sample until a reconcile happens, so their label names are read from the metric
    objects (prometheus_client keeps them in `_labelnames`)."""
    exported: dict[str, set[str]] = {}
    suffixes = {"counter": ("_total", "_created"), "gauge": ("",), "histogram": ("_bucket", "_sum", "_count")}
    for collector in vars(operator_metrics).values():
        if not isinstance(collector, MetricWrapperBase):
            continue
        labels = set(collector._labelnames)
        for family in collector.describe():
            for suffix in suffixes[family.type]:
                exported[family.name + suffix] = labels | ({"le"} if suffix == "_bucket" else set())
    assert exported["ragdown_operator_reconciles_total"] == {"trigger", "outcome"}
    return exported


def scrape(url: str) -> Exposition:
    response = httpx.get(url + "/metrics", timeout=10)
    response.raise_for_status()
    return Exposition(
        [
            (sample.name, dict(sample.labels), sample.value)
            for family in text_string_to_metric_families(response.text)
            for sample in family.samples
        ]
    )


@pytest.fixture(scope="module")
def exposition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exposition]:
    """`/metrics` of a real `ragdown serve` on the example notes after hook and recall calls, once
    the periodic index gauges have been filled in."""
    import anyio

    # Only the example notes: one folder, so the test knows every folder label to expect.
    work = tmp_path_factory.mktemp("dashboard")
    shutil.copytree(REPO / "examples" / "notes", work / "docs" / "notes")
    port, metrics_port = free_port(), free_port()
    process = start_serve(work / "docs", work / "data", port, TOKEN, RAGDOWN_METRICS_PORT=str(metrics_port))
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process)
        anyio.run(call_tools, url)
        metrics_url = f"http://127.0.0.1:{metrics_port}"
        wanted = {
            name
            for expr in panel_exprs(load_dashboard())
            for name in METRIC.findall(expr)
            if not name.startswith("ragdown_operator_")
        }
        # The index gauges are refreshed every few seconds, not on each scrape: wait for them.
        deadline = time.monotonic() + 60
        scraped = scrape(metrics_url)
        while not wanted <= scraped.labels.keys() and time.monotonic() < deadline:
            time.sleep(0.5)
            scraped = scrape(metrics_url)
        yield scraped
    finally:
        with process:  # its pipes closed on the way out
            process.terminate()
            process.wait(timeout=30)


async def call_tools(url: str) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp/notes", http_client=http)) as client,
    ):
        for tool, arguments in (
            ("ragdown_context", {"prompt": "how do I restore a postgres backup", "session_id": "dash"}),
            ("ragdown_recall", {"query": "restore a postgres backup", "top_k": 3}),
        ):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content


def known_series(exposition: Exposition, monitored: Rendered) -> dict[str, set[str]]:
    """Sample name → label names, as Prometheus stores them: the server's and the operator's own
    labels, plus those the scrape adds."""
    added = scrape_labels(monitored)
    own = {**exposition.labels, **operator_exposition()}
    return {name: labels | added for name, labels in own.items()}


def missing_labels(exprs: list[str], exported: dict[str, set[str]]) -> list[str]:
    missing = []
    for expr in exprs:
        for name, matchers in SELECTOR.findall(expr):
            for label in MATCHER.findall(matchers):
                if label not in exported.get(name, set()):
                    missing.append(f"{name}{{{label}}} in {expr}")
        # Every grouping label must exist on every ragdown series the expression aggregates.
        for grouping in GROUPING.findall(expr):
            for label in filter(None, (part.strip() for part in grouping.split(","))):
                for name in METRIC.findall(expr):
                    if label not in exported.get(name, set()):
                        missing.append(f"by ({label}) over {name} in {expr}")
    return missing


@pytest.mark.slow  # scrapes a real `ragdown serve` process
def test_every_queried_metric_is_exported(exposition: Exposition, monitored: Rendered) -> None:
    dashboard = load_dashboard()
    exported = known_series(exposition, monitored)
    queried = {
        name
        for query in panel_exprs(dashboard) + variable_queries(dashboard)
        for name in METRIC.findall(query)
    }
    # Guards the parsing itself: the panels the brief names are all there.
    assert {
        "ragdown_hook_injections_total",
        "ragdown_hook_calls_total",
        "ragdown_hook_drops_total",
        "ragdown_search_seconds_bucket",
        "ragdown_tool_calls_total",
        "ragdown_index_documents",
        "ragdown_index_chunks",
        "ragdown_sync_seconds_bucket",
        "ragdown_sync_seconds_sum",
        "ragdown_sync_seconds_count",
        "ragdown_last_sync_timestamp_seconds",
        "ragdown_build_info",
        "ragdown_admission_rejections_total",
        "ragdown_embed_queue_depth",
        "ragdown_operator_reconciles_total",
        "ragdown_operator_folders",
    } <= queried
    assert sorted(queried - exported.keys()) == []
    alerted = {name for expr in rule_exprs(monitored) for name in METRIC.findall(expr)}
    assert alerted == {
        "ragdown_hook_injections_total",
        "ragdown_hook_calls_total",
        "ragdown_search_seconds_bucket",
        "ragdown_last_sync_timestamp_seconds",
        "ragdown_admission_rejections_total",
        "ragdown_embed_queue_depth",
        "ragdown_operator_reconciles_total",
        "ragdown_operator_indexer_up",
    }
    assert sorted(alerted - exported.keys()) == []


@pytest.mark.slow  # scrapes a real `ragdown serve` process
def test_every_queried_label_exists_on_its_metric(exposition: Exposition, monitored: Rendered) -> None:
    dashboard = load_dashboard()
    exported = known_series(exposition, monitored)
    missing = missing_labels(panel_exprs(dashboard) + rule_exprs(monitored), exported)
    for query in variable_queries(dashboard):
        for name, label in LABEL_VALUES.findall(query):
            if label not in exported.get(name, set()):
                missing.append(f"label_values({name}, {label})")
    assert missing == []


def test_every_panel_shows_the_chosen_namespace_and_release() -> None:
    """Two releases (or two namespaces) in one Prometheus must never add up in one panel."""
    dashboard = load_dashboard()
    unscoped = [
        f"{name} in {expr}"
        for expr in panel_exprs(dashboard)
        for name, selector in SELECTED.findall(expr)
        if not selector.startswith("{" + SCOPE)
    ]
    assert unscoped == []
    assert all(SCOPE in query for query in variable_queries(dashboard) if "folder)" in query)


@pytest.mark.slow  # scrapes a real `ragdown serve` process
def test_label_parsing_sees_a_label_the_server_lacks(exposition: Exposition) -> None:
    """The check above would pass vacuously if the regexes found nothing; a wrong label is caught."""
    expr = 'sum by (pod_path) (rate(ragdown_hook_calls_total{session="x"}[5m]))'
    labels = [label for _, matchers in SELECTOR.findall(expr) for label in MATCHER.findall(matchers)]
    grouped = [label.strip() for grouping in GROUPING.findall(expr) for label in grouping.split(",")]
    assert labels == ["session"]
    assert grouped == ["pod_path"]
    assert not {"session", "pod_path"} & exposition.labels["ragdown_hook_calls_total"]


def test_dashboard_shape() -> None:
    dashboard = load_dashboard()
    assert (dashboard["uid"], dashboard["title"]) == ("ragdown", "ragdown")
    assert dashboard["schemaVersion"] >= 36
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    folder = variables["folder"]
    assert (folder["multi"], folder["includeAll"]) == (True, True)
    # One namespace and one release at a time; the folders are those of that release.
    assert [name for name in variables if name != "datasource"] == ["namespace", "release", "folder"]
    for name in ("namespace", "release"):
        assert (variables[name]["multi"], variables[name]["includeAll"]) == (False, False)
    assert variable_queries(dashboard) == [
        "label_values(ragdown_build_info, namespace)",
        'label_values(ragdown_build_info{namespace="$namespace"}, release)',
        f"label_values(ragdown_hook_calls_total{{{SCOPE}}}, folder)",
    ]

    panels = all_panels(dashboard)
    ids = [panel["id"] for panel in panels]
    assert len(ids) == len(set(ids)), "duplicate panel ids"
    reference = {"type": "prometheus", "uid": "${datasource}"}
    queried = [panel for panel in panels if panel["type"] != "row"]
    assert len(queried) >= 10
    for panel in queried:
        assert panel["type"] in {"timeseries", "stat"}, panel["title"]
        assert panel.get("description"), panel["title"]
        assert panel["datasource"] == reference, panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == reference, panel["title"]
    for name in ("namespace", "release", "folder"):
        assert variables[name]["datasource"] == reference


@pytest.mark.slow  # scrapes a real `ragdown serve` process
def test_the_calls_show_up_where_the_panels_look(exposition: Exposition) -> None:
    """The folder variable lists the served folder, and the hook, search and tool panels see the
    calls made; a lone server is the primary, so it adds nothing to the reader count."""
    folders = {
        labels["folder"] for name, labels, _ in exposition.samples if name == "ragdown_hook_calls_total"
    }
    assert folders == {"notes"}
    assert exposition.value("ragdown_hook_calls_total", folder="notes") == 1
    assert exposition.value("ragdown_search_seconds_count", folder="notes", kind="recall") == 1
    assert exposition.value("ragdown_tool_calls_total", tool="ragdown_recall", outcome="ok") == 1
    assert exposition.value("ragdown_tool_calls_total", tool="ragdown_context", outcome="ok") == 1
    assert exposition.value("ragdown_index_documents", folder="notes") > 0
    roles = [labels["role"] for name, labels, _ in exposition.samples if name == "ragdown_build_info"]
    assert roles == ["primary"]
