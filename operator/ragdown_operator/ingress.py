"""The Ingress that routes `/mcp/<folder>` to the readers (docs/design.md#processes-and-roles): one per MCP
folder."""

from __future__ import annotations

import re
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

# What every controller admits for `Prefix` paths: ingress-nginx's admission check
# (strict-validate-path-type) refuses any other character there, '.' and '%' included
# (docs/cluster.md#mcp-ingresses).
PREFIX_SAFE = re.compile(r"^/[A-Za-z0-9/_-]*$")


def mcp_path(folder: str) -> str:
    """The folder's MCP path as the server routes it (percent-encoded, as in `mcp_path` of the API)."""
    return "/mcp/" + quote(folder, safe="")


def folder_ingress(resource: str, folder: str, settings: OperatorSettings) -> dict[str, Any]:
    """The wanted Ingress for `folder`. Prefix matching keeps sub-folder endpoints
    (`/mcp/<folder>/<sub>`) reachable through the same route; a path `Prefix` may not hold is
    `ImplementationSpecific`, which controllers match as a plain prefix."""
    backend = {"service": {"name": settings.reader_service, "port": {"number": settings.reader_port}}}
    path = mcp_path(folder)
    path_type = "Prefix" if PREFIX_SAFE.match(path) else "ImplementationSpecific"
    rule: dict[str, Any] = {"http": {"paths": [{"path": path, "pathType": path_type, "backend": backend}]}}
    if settings.ingress_host:
        rule["host"] = settings.ingress_host
    spec: dict[str, Any] = {"rules": [rule]}
    if settings.ingress_class:
        spec["ingressClassName"] = settings.ingress_class
    if settings.ingress_tls_secret:
        # As the chart's base Ingress: without a host the Secret is the controller's default certificate.
        tls: dict[str, Any] = {"secretName": settings.ingress_tls_secret}
        if settings.ingress_host:
            tls["hosts"] = [settings.ingress_host]
        spec["tls"] = [tls]
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
