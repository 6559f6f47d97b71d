"""The operator's Prometheus metrics (`/metrics` on RAGDOWN_OPERATOR_METRICS_PORT)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

REGISTRY = CollectorRegistry(auto_describe=True)
RECONCILES = Counter(
    "ragdown_operator_reconciles",
    "RagdownFolder reconciliations by trigger and outcome (ok, retry, invalid).",
    ["trigger", "outcome"],
    registry=REGISTRY,
)
CHANGES = Counter(
    "ragdown_operator_changes",
    "Changes the operator made, by what changed (folder_created, settings_applied, ingress_created, …).",
    ["change"],
    registry=REGISTRY,
)
INDEXER_UP = Gauge(
    "ragdown_operator_indexer_up",
    "1 when the indexer's API answered the last call, else 0.",
    registry=REGISTRY,
)
FOLDERS = Gauge(
    "ragdown_operator_folders",
    "RagdownFolders last reconciled, by whether they are ready.",
    ["ready"],
    registry=REGISTRY,
)


def serve(port: int) -> None:
    if port:
        start_http_server(port, registry=REGISTRY)
