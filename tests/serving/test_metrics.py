"""`/metrics` over real HTTP: pre-created series, hook calls and injections, drops per gate, tool
outcomes, build info, histograms, labels that never take a path or a query, and two `Metrics` in
one process that do not see each other's numbers."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from ragdown.serving.guard import Guard
from ragdown.serving.metrics import HOOK_GATES, SEARCH_KINDS, Metrics, serve_metrics
from ragdown.settings import ServerSettings
from tests.serving.conftest import free_port

FOLDERS = ("ops", "notes")
TOOLS = ("ragdown_recall", "ragdown_context", "ragdown_write")

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(url: str) -> Samples:
    response = httpx.get(url + "/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


LOCAL = Guard.of(ServerSettings())


@pytest.fixture
def served() -> Iterator[Callable[[Metrics], str]]:
    stops: list[Callable[[], None]] = []

    def start(metrics: Metrics) -> str:
        port = free_port()
        stops.append(serve_metrics(metrics, "127.0.0.1", port, LOCAL))
        return f"http://127.0.0.1:{port}"

    yield start
    for stop in stops:
        stop()


@pytest.fixture
def metrics() -> Metrics:
    metrics = Metrics()
    metrics.precreate(FOLDERS, tools=TOOLS)
    return metrics


def test_precreated_series_are_zero_before_any_call(
    metrics: Metrics, served: Callable[[Metrics], str]
) -> None:
    samples = scrape(served(metrics))
    for folder in FOLDERS:
        for name in (
            "ragdown_hook_calls_total",
            "ragdown_hook_injections_total",
            "ragdown_hook_injected_sections_total",
        ):
            assert value(samples, name, folder=folder) == 0
        for gate in HOOK_GATES:
            assert value(samples, "ragdown_hook_drops_total", folder=folder, gate=gate) == 0
        for kind in SEARCH_KINDS:
            assert value(samples, "ragdown_search_seconds_count", folder=folder, kind=kind) == 0
    for tool in TOOLS:
        for outcome in ("ok", "error", "overloaded"):
            assert value(samples, "ragdown_tool_calls_total", tool=tool, outcome=outcome) == 0
    assert value(samples, "ragdown_admission_rejections_total") == 0


def test_hook_calls_move_always_and_injections_only_when_a_section_went_out(
    metrics: Metrics, served: Callable[[Metrics], str]
) -> None:
    url = served(metrics)
    metrics.observe_hook("ops", injected=2, drops={"min_score": 3, "seen": 1})
    metrics.observe_hook("ops", injected=0, drops={"ratio": 4, "top_k": 0})
    metrics.observe_hook("ops", injected=1, drops={"max_chars": 2, "seen": 1})
    samples = scrape(url)
    assert value(samples, "ragdown_hook_calls_total", folder="ops") == 3
    assert value(samples, "ragdown_hook_injections_total", folder="ops") == 2
    assert value(samples, "ragdown_hook_injected_sections_total", folder="ops") == 3
    drops = {gate: value(samples, "ragdown_hook_drops_total", folder="ops", gate=gate) for gate in HOOK_GATES}
    assert drops == {"min_score": 3, "seen": 2, "ratio": 4, "top_k": 0, "max_chars": 2}
    assert value(samples, "ragdown_hook_calls_total", folder="notes") == 0

    metrics.observe_hook("notes", injected=0, drops={})
    samples = scrape(url)
    assert value(samples, "ragdown_hook_calls_total", folder="notes") == 1
    assert value(samples, "ragdown_hook_injections_total", folder="notes") == 0


def test_tool_outcomes_rejections_and_build_info(metrics: Metrics, served: Callable[[Metrics], str]) -> None:
    url = served(metrics)
    metrics.observe_tool("ragdown_recall", "ok")
    metrics.observe_tool("ragdown_recall", "ok")
    metrics.observe_tool("ragdown_recall", "overloaded")
    metrics.observe_tool("ragdown_write", "error")
    metrics.rejected()
    metrics.set_build_info("0.1.0", "reader", "minilm")
    metrics.set_build_info("0.1.0", "primary", "minilm")  # a reader that took over
    samples = scrape(url)
    assert value(samples, "ragdown_tool_calls_total", tool="ragdown_recall", outcome="ok") == 2
    assert value(samples, "ragdown_tool_calls_total", tool="ragdown_recall", outcome="overloaded") == 1
    assert value(samples, "ragdown_tool_calls_total", tool="ragdown_recall", outcome="error") == 0
    assert value(samples, "ragdown_tool_calls_total", tool="ragdown_write", outcome="error") == 1
    assert value(samples, "ragdown_admission_rejections_total") == 1
    build = {labels: v for (name, labels), v in samples.items() if name == "ragdown_build_info"}
    assert build == {frozenset({"version": "0.1.0", "role": "primary", "embedder": "minilm"}.items()): 1}


def test_histograms_gauges_and_the_root_folder(metrics: Metrics, served: Callable[[Metrics], str]) -> None:
    url = served(metrics)
    metrics.observe_search("ops", "recall", 0.004)
    metrics.observe_search("ops", "recall", 0.3)
    metrics.observe_search("", "context", 0.02)
    metrics.observe_sync(1.5, at_epoch_s=1_700_000_000.0)
    metrics.set_index("ops", documents=12, chunks=80)
    metrics.set_embed_queue_depth(7)
    samples = scrape(url)
    assert value(samples, "ragdown_search_seconds_count", folder="ops", kind="recall") == 2
    assert value(samples, "ragdown_search_seconds_bucket", folder="ops", kind="recall", le="0.005") == 1
    assert value(samples, "ragdown_search_seconds_bucket", folder="ops", kind="recall", le="2.0") == 2
    assert value(samples, "ragdown_search_seconds_sum", folder="ops", kind="recall") == pytest.approx(0.304)
    assert value(samples, "ragdown_search_seconds_count", folder="_root", kind="context") == 1
    assert value(samples, "ragdown_sync_seconds_count") == 1
    assert value(samples, "ragdown_last_sync_timestamp_seconds") == 1_700_000_000.0
    assert value(samples, "ragdown_index_documents", folder="ops") == 12
    assert value(samples, "ragdown_index_chunks", folder="ops") == 80
    assert value(samples, "ragdown_embed_queue_depth") == 7
    assert ("ragdown_index_documents", frozenset({("folder", "notes")})) not in samples


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.observe_search("ops/db/x.md", "recall", 0.01),
        lambda m: m.observe_search("ops\\db", "recall", 0.01),
        lambda m: m.observe_search("how do I\nrestore", "recall", 0.01),
        lambda m: m.observe_search(".git", "recall", 0.01),
        lambda m: m.observe_search("x" * 300, "recall", 0.01),
        lambda m: m.observe_search("ops", "how do I restore", 0.01),
        lambda m: m.observe_hook("ops/backups.md", injected=1, drops={}),
        lambda m: m.observe_hook("ops", injected=1, drops={"session-1234": 1}),
        lambda m: m.observe_hook("ops", injected=-1, drops={}),
        lambda m: m.observe_tool("ragdown_recall", "maybe"),
        lambda m: m.observe_tool("restore the db please", "ok"),
        lambda m: m.set_index("/abs/ops", documents=1, chunks=1),
        lambda m: m.precreate(["ops/db"]),
    ],
)
def test_paths_and_queries_never_become_labels(
    metrics: Metrics, served: Callable[[Metrics], str], call: Callable[[Metrics], None]
) -> None:
    """A path, a query or a session id where a label goes is refused (ValueError), not mapped to the
    folder: the caller has a bug, and nothing is recorded."""
    url = served(metrics)
    before = scrape(url)
    with pytest.raises(ValueError, match="metrics"):
        call(metrics)
    after = scrape(url)
    assert after == before
    labels = {v for _, label_set in after for _, v in label_set}
    assert not any("/" in v or "\\" in v or " " in v for v in labels)


def test_other_paths_are_404(metrics: Metrics, served: Callable[[Metrics], str]) -> None:
    url = served(metrics)
    assert httpx.get(url + "/", timeout=10).status_code == 404
    assert httpx.get(url + "/metrics/x", timeout=10).status_code == 404
    assert httpx.get(url + "/mcp/ops", timeout=10).status_code == 404
    assert httpx.get(url + "/metrics?name[]=x", timeout=10).status_code == 200


def test_two_metrics_in_one_process_do_not_collide(served: Callable[[Metrics], str]) -> None:
    first, second = Metrics(), Metrics()
    first.precreate(["ops"], tools=["ragdown_recall"])
    second.precreate(["ops", "notes"], tools=["ragdown_recall"])
    first_url, second_url = served(first), served(second)
    first.observe_hook("ops", injected=1, drops={})
    first.observe_tool("ragdown_recall", "ok")
    second.set_build_info("0.1.0", "reader", "hash")
    a, b = scrape(first_url), scrape(second_url)
    assert value(a, "ragdown_hook_calls_total", folder="ops") == 1
    assert value(b, "ragdown_hook_calls_total", folder="ops") == 0
    assert value(b, "ragdown_tool_calls_total", tool="ragdown_recall", outcome="ok") == 0
    assert ("ragdown_hook_calls_total", frozenset({("folder", "notes")})) not in a
    assert not any(name == "ragdown_build_info" for name, _ in a)
    assert first.render() != second.render()


def test_stop_frees_the_port(metrics: Metrics) -> None:
    port = free_port()
    stop = serve_metrics(metrics, "127.0.0.1", port, LOCAL)
    assert httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).status_code == 200
    stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)
    serve_metrics(metrics, "127.0.0.1", port, LOCAL)()


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:9090", 200),
        ("localhost:9090", 200),
        ("10.244.1.7:9090", 200),  # a scraper names the pod's address
        ("[fd00::7]:9090", 200),
        ("rebind.attacker.example:9090", 421),  # DNS rebinding needs a name: refused
        ("ragdown-indexer.prod.svc", 421),
        ("", 421),
    ],
)
def test_the_metrics_port_answers_only_hosts_it_knows_and_addresses(
    metrics: Metrics, host: str, status: int
) -> None:
    """docs/security.md#tenants item 8: a page on a rebound name cannot read every folder's name."""
    port = free_port()
    stop = serve_metrics(metrics, "127.0.0.1", port, LOCAL)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(f"GET /metrics HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            answer = b"".join(iter(lambda: sock.recv(65536), b""))
    finally:
        stop()
    assert answer.startswith(f"HTTP/1.0 {status} ".encode()), answer[:100]
    if status == 421:
        assert b"ragdown_" not in answer
        assert b"RAGDOWN_ALLOWED_HOSTS" in answer
    allowed = Guard.of(ServerSettings(allowed_hosts="ragdown-indexer.prod.svc"))
    assert allowed.scrape_allowed("ragdown-indexer.prod.svc")


def test_the_search_kinds_said_are_the_kinds_there_are(
    metrics: Metrics, served: Callable[[Metrics], str]
) -> None:
    """The help text and docs/cluster.md name exactly SEARCH_KINDS: no kind of a removed search."""
    metrics.precreate(["ops"])
    url = served(metrics)
    text = httpx.get(url + "/metrics", timeout=10).text
    (help_line,) = [line for line in text.splitlines() if line.startswith("# HELP ragdown_search_seconds ")]
    assert help_line.endswith(f"({', '.join(SEARCH_KINDS)}).")
    kinds = {dict(labels)["kind"] for name, labels in scrape(url) if name == "ragdown_search_seconds_count"}
    assert kinds == set(SEARCH_KINDS)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cluster.md").read_text(encoding="utf-8")
    (row,) = [line for line in docs.splitlines() if line.startswith("| `ragdown_search_seconds`")]
    assert row.split("|")[2].strip() == "`folder`, `kind` (" + ", ".join(f"`{k}`" for k in SEARCH_KINDS) + ")"
