"""The nginx.conf the cluster-shape test renders from Ingresses (tests/operator/nginx.py;
docs/cluster.md#routes-through-nginx): ingress-nginx's path rules, and refusals of what it would refuse
or what would not make a sound configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.operator.nginx import locations, render


def ingress(path: str, path_type: str = "Prefix", **annotations: str) -> dict[str, Any]:
    backend = {"service": {"name": "reader", "port": {"number": 3000}}}
    paths = [{"path": path, "pathType": path_type, "backend": backend}]
    return {
        "metadata": {
            "name": "r",
            "annotations": {f"nginx.ingress.kubernetes.io/{k}": v for k, v in annotations.items()},
        },
        "spec": {"rules": [{"host": "docs.test", "http": {"paths": paths}}]},
    }


def test_paths_become_ingress_nginx_locations() -> None:
    assert locations("/mcp/work", "Prefix") == ["= /mcp/work", "/mcp/work/"]  # whole path elements
    assert locations("/", "Prefix") == ["/"]
    assert locations("/mcp/work", "Exact") == ["= /mcp/work"]
    assert locations("/mcp/notes.v2", "ImplementationSpecific") == ["/mcp/notes.v2"]


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (ingress("/mcp/notes.v2"), "cannot be used with pathType Prefix"),  # ingress-nginx's admission check
        (ingress("/mcp/a b", "ImplementationSpecific"), "nginx.conf can hold"),
        (ingress("/mcp/a;}", "ImplementationSpecific"), "nginx.conf can hold"),
        (ingress("/mcp/a", **{"proxy-body-size": "1m; return 200"}), "not a valid value"),
        (ingress("/mcp/a", **{"proxy-read-timeout": "60s"}), "not a valid value"),
    ],
)
def test_what_would_be_refused_never_reaches_the_configuration(bad: dict[str, Any], why: str) -> None:
    config, refused = render([bad], {("reader", 3000): "127.0.0.1:9"}, 8080, Path("/tmp/x"), "nginx")
    assert len(refused) == 1
    assert why in refused[0]
    assert "proxy_pass" not in config


def test_annotations_and_hosts_reach_their_locations() -> None:
    good = ingress("/mcp/work", **{"proxy-body-size": "8m", "proxy-read-timeout": "300"})
    config, refused = render([good], {("reader", 3000): "127.0.0.1:9"}, 8080, Path("/tmp/x"), "nginx")
    assert refused == []
    assert "server_name docs.test;" in config
    assert config.count("client_max_body_size 8m;") == 2  # both locations of the Prefix path
    assert config.count("proxy_read_timeout 300s;") == 2
    assert config.count("proxy_pass http://127.0.0.1:9;") == 2
    other = {**good, "spec": {**good["spec"], "ingressClassName": "other"}}
    assert "proxy_pass" not in render([other], {}, 8080, Path("/tmp/x"), "nginx")[0]  # another class's
