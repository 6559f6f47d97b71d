"""The Ingress that routes `/mcp/<folder>` to the readers (docs/design.md#processes-and-roles): one per MCP
folder."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ragdown_operator.constants import (
    GROUP,
    LABEL_COMPONENT,
    LABEL_FOLDER,
    LABEL_INSTANCE,
    LABEL_MANAGED_BY,
    LABEL_NAME,
    MANAGED_BY,
)
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import ingress_name


def mcp_path(folder: str) -> str:
    """The folder's MCP path as the server routes it (percent-encoded, as in `mcp_path` of the API)."""
    return "/mcp/" + quote(folder, safe="")


def folder_ingress(resource: str, folder: str, settings: OperatorSettings) -> dict[str, Any]:
    """The wanted Ingress for `folder`. Prefix matching keeps sub-folder endpoints
    (`/mcp/<folder>/<sub>`) reachable through the same route."""
    backend = {"service": {"name": settings.reader_service, "port": {"number": settings.reader_port}}}
    rule: dict[str, Any] = {
        "http": {"paths": [{"path": mcp_path(folder), "pathType": "Prefix", "backend": backend}]}
    }
    if settings.ingress_host:
        rule["host"] = settings.ingress_host
    spec: dict[str, Any] = {"rules": [rule]}
    if settings.ingress_class:
        spec["ingressClassName"] = settings.ingress_class
    if settings.ingress_tls_secret and settings.ingress_host:
        spec["tls"] = [{"hosts": [settings.ingress_host], "secretName": settings.ingress_tls_secret}]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": ingress_name(resource),
            "labels": {
                LABEL_NAME: "ragdown",
                LABEL_INSTANCE: settings.instance,
                LABEL_COMPONENT: "mcp-route",
                LABEL_MANAGED_BY: MANAGED_BY,
                # a label value allows no spaces: the resource name says which folder
                LABEL_FOLDER: resource[:63].rstrip("-."),
            },
            "annotations": {**settings.ingress_annotations, f"{GROUP}/folder": folder},
        },
        "spec": spec,
    }
