"""Prometheus metrics (docs/cluster.md#server-metrics): the `ragdown_` series of one process and the small
HTTP
server that exposes them on their own port (`GET /metrics`, no auth, never behind the ingress).

Each `Metrics` owns its own `CollectorRegistry`, so tests and several servers in one process never
collide. Labels hold only bounded, non-secret values: folder names, search kinds, hook gates, tool
names and outcomes. A folder label that looks like a path, a query or anything else than a folder
name is refused with `ValueError` (never mapped to a folder): a caller passing `ops/db/x.md` has a
bug that should fail its tests, not quietly create a series per document."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from ragdown.serving.guard import Guard, wrong_host

ROOT_FOLDER = "_root"
"""The folder label of the single-folder (stdio) mode, whose folder name is ""."""

SEARCH_KINDS = ("recall", "context")
HOOK_GATES = ("min_score", "seen", "ratio", "top_k", "max_chars")
TOOL_OUTCOMES = ("ok", "error", "overloaded")

SEARCH_BUCKETS_S = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
SYNC_BUCKETS_S = (0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)

_MAX_FOLDER_LABEL = 255
_FORBIDDEN_IN_FOLDER = re.compile(r"[/\\\x00-\x1f\x7f]")
_TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def folder_label(folder: str) -> str:
    """The label value for `folder`: the folder name itself, `_root` for ""; ValueError for anything
    that is not a top-level folder name (a path, a dot-name, control characters, overlong text)."""
    if folder == "":
        return ROOT_FOLDER
    if (
        len(folder) > _MAX_FOLDER_LABEL
        or folder.startswith(".")
        or folder == "node_modules"
        or folder != folder.strip()
        or _FORBIDDEN_IN_FOLDER.search(folder)
    ):
        raise ValueError(f"metrics folder label must be a top-level folder name, got {folder[:40]!r}")
    return folder


def _one_of(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"metrics {what} must be one of {', '.join(allowed)}, got {value[:40]!r}")
    return value


def _tool_label(tool: str) -> str:
    if not _TOOL_NAME.fullmatch(tool):
        raise ValueError(f"metrics tool label must be a tool name, got {tool[:40]!r}")
    return tool


def _count(value: int, what: str) -> int:
    if value < 0:
        raise ValueError(f"metrics {what} must be >= 0, got {value}")
    return value


class Metrics:
    """The `ragdown_` metrics of one server, on a registry of its own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        self.search_seconds = Histogram(
            "ragdown_search_seconds",
            "Search duration per folder and kind (recall, context).",
            ["folder", "kind"],
            buckets=SEARCH_BUCKETS_S,
            registry=reg,
        )
        self.hook_calls = Counter(
            "ragdown_hook_calls", "ragdown_context calls per folder.", ["folder"], registry=reg
        )
        self.hook_injections = Counter(
            "ragdown_hook_injections",
            "ragdown_context calls that injected at least one section, per folder.",
            ["folder"],
            registry=reg,
        )
        self.hook_injected_sections = Counter(
            "ragdown_hook_injected_sections",
            "Sections injected by ragdown_context, per folder.",
            ["folder"],
            registry=reg,
        )
        self.hook_drops = Counter(
            "ragdown_hook_drops",
            "Candidate sections dropped by ragdown_context, per folder and gate.",
            ["folder", "gate"],
            registry=reg,
        )
        self.tool_calls = Counter(
            "ragdown_tool_calls", "MCP tool calls per tool and outcome.", ["tool", "outcome"], registry=reg
        )
        self.index_documents = Gauge(
            "ragdown_index_documents", "Indexed documents per folder.", ["folder"], registry=reg
        )
        self.index_chunks = Gauge(
            "ragdown_index_chunks", "Indexed chunks per folder.", ["folder"], registry=reg
        )
        self.sync_seconds = Histogram(
            "ragdown_sync_seconds", "Duration of index syncs.", buckets=SYNC_BUCKETS_S, registry=reg
        )
        self.last_sync = Gauge(
            "ragdown_last_sync_timestamp_seconds", "Unix time the last sync finished.", registry=reg
        )
        self.admission_rejections = Counter(
            "ragdown_admission_rejections", "Calls refused as overloaded by admission control.", registry=reg
        )
        self.embed_queue_depth = Gauge(
            "ragdown_embed_queue_depth", "Files the running sync has still to read or embed.", registry=reg
        )
        self.build_info = Gauge(
            "ragdown_build_info",
            "Always 1; the labels say version, role and embedder.",
            ["version", "role", "embedder"],
            registry=reg,
        )
        self._build_lock = threading.Lock()

    def precreate(self, folders: Iterable[str], tools: Iterable[str] = ()) -> None:
        """Create every per-folder and per-tool series at 0, so rates exist from the first scrape.
        The index gauges are left until `set_index`: a 0 there would read as an empty index."""
        for folder in folders:
            label = folder_label(folder)
            for kind in SEARCH_KINDS:
                self.search_seconds.labels(label, kind)
            self.hook_calls.labels(label)
            self.hook_injections.labels(label)
            self.hook_injected_sections.labels(label)
            for gate in HOOK_GATES:
                self.hook_drops.labels(label, gate)
        for tool in tools:
            name = _tool_label(tool)
            for outcome in TOOL_OUTCOMES:
                self.tool_calls.labels(name, outcome)

    def observe_search(self, folder: str, kind: str, seconds: float) -> None:
        self.search_seconds.labels(folder_label(folder), _one_of(kind, SEARCH_KINDS, "kind")).observe(seconds)

    def observe_hook(self, folder: str, injected: int, drops: Mapping[str, int]) -> None:
        """One `ragdown_context` call: `injected` sections went out, `drops[gate]` candidates were
        dropped by each gate. A call with `injected >= 1` counts one injection."""
        label = folder_label(folder)
        _count(injected, "injected sections")
        checked = {
            _one_of(gate, HOOK_GATES, "gate"): _count(n, f"drops[{gate}]") for gate, n in drops.items()
        }
        self.hook_calls.labels(label).inc()
        if injected > 0:
            self.hook_injections.labels(label).inc()
            self.hook_injected_sections.labels(label).inc(injected)
        for gate, n in checked.items():
            if n:
                self.hook_drops.labels(label, gate).inc(n)

    def observe_tool(self, tool: str, outcome: str) -> None:
        self.tool_calls.labels(_tool_label(tool), _one_of(outcome, TOOL_OUTCOMES, "outcome")).inc()

    def observe_sync(self, seconds: float, at_epoch_s: float) -> None:
        self.sync_seconds.observe(seconds)
        self.last_sync.set(at_epoch_s)

    def set_index(self, folder: str, documents: int, chunks: int) -> None:
        label = folder_label(folder)
        self.index_documents.labels(label).set(_count(documents, "documents"))
        self.index_chunks.labels(label).set(_count(chunks, "chunks"))

    def set_embed_queue_depth(self, depth: int) -> None:
        self.embed_queue_depth.set(_count(depth, "embed queue depth"))

    def rejected(self) -> None:
        """One call refused by admission control (answered "overloaded")."""
        self.admission_rejections.inc()

    def set_build_info(self, version: str, role: str, embedder: str) -> None:
        """Replace the build info series (a reader that takes over becomes the primary)."""
        with self._build_lock:
            self.build_info.clear()
            self.build_info.labels(version, role, embedder).set(1)

    def render(self) -> bytes:
        """The text exposition format, as served on `/metrics`."""
        return generate_latest(self.registry)


class _MetricsHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], metrics: Metrics, guard: Guard) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.metrics = metrics
        self.guard = guard
        super().__init__(address, _MetricsHandler)


class _MetricsHandler(BaseHTTPRequestHandler):
    server: _MetricsHTTPServer

    def do_GET(self) -> None:
        host = self.headers.get("Host")
        if not self.server.guard.scrape_allowed(host):
            # Folder names are in the labels: a page on a rebound name must not read them.
            self._reply(421, (wrong_host(host) + "\n").encode(), "text/plain; charset=utf-8")
            return
        if urlsplit(self.path).path != "/metrics":
            self._reply(404, b"not found; metrics are on /metrics\n", "text/plain; charset=utf-8")
            return
        self._reply(200, self.server.metrics.render(), CONTENT_TYPE_LATEST)

    def _reply(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Scrapes every few seconds would drown the server's own log."""


def serve_metrics(metrics: Metrics, host: str, port: int, guard: Guard) -> Callable[[], None]:
    """Serve `GET /metrics` on host:port from a daemon thread to the Hosts `guard` lets scrape;
    return the function that stops it. Raises OSError when the port cannot be bound."""
    server = _MetricsHTTPServer((host, port), metrics, guard)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="ragdown-metrics", daemon=True
    )
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return stop
