"""The chart and the code agree on configuration: every variable the chart sets is one the server or the
operator reads, and the values it renders are accepted by their settings classes — so a renamed
setting or a malformed value fails here, not in a pod's crash loop."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import AliasChoices

from ragdown.settings import ServerSettings
from ragdown_operator.settings import OperatorSettings
from tests.chart.test_chart import CI_NAMES, RELEASE, Render, ci_values, pod_spec, workloads

REPO = Path(__file__).resolve().parents[2]
# Read by libraries or the runtime, not by our settings classes.
FOREIGN = {"LANCE_CPU_THREADS", "XDG_CACHE_HOME", "PYTHONUNBUFFERED"}


def env_names(settings: type[ServerSettings] | type[OperatorSettings]) -> set[str]:
    prefix = str(settings.model_config.get("env_prefix", ""))
    names = set()
    for name, field in settings.model_fields.items():
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            names |= {str(choice) for choice in alias.choices}
        else:
            names.add((prefix + name).upper())
    return names


def read_in_code() -> set[str]:
    """`RAGDOWN_*` names the code reads directly (os.environ), outside the settings classes, and the
    AWS SDK's names it reads for an index on object storage (indexing/index_location.py)."""
    found: set[str] = set()
    for root in (REPO / "server" / "ragdown", REPO / "operator" / "ragdown_operator"):
        for path in root.rglob("*.py"):
            found |= set(re.findall(r'"((?:RAGDOWN|AWS)_[A-Z0-9_]+)"', path.read_text(encoding="utf-8")))
    return found


def containers(rendered: Any) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for workload in workloads(rendered):
        spec = pod_spec(workload)
        for key in ("initContainers", "containers"):
            for container in spec.get(key, []):
                out.append((f"{workload['metadata']['name']}/{container['name']}", container))
    return out


def literal_env(container: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the process sees it; a Secret reference reads as a token."""
    return {e["name"]: e.get("value", "secret-from-a-reference") for e in container.get("env", [])}


@pytest.mark.parametrize("name", CI_NAMES)
def test_every_variable_the_chart_sets_is_read_by_the_code(render: Render, name: str) -> None:
    known = env_names(ServerSettings) | env_names(OperatorSettings) | read_in_code() | FOREIGN
    for where, container in containers(render(ci_values(name))):
        unknown = set(literal_env(container)) - known
        assert not unknown, f"{where} sets variables nothing reads: {sorted(unknown)}"


@pytest.mark.parametrize("name", CI_NAMES)
def test_the_rendered_values_are_valid_settings(
    render: Render, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = 0
    for where, container in containers(render(ci_values(name))):
        env = literal_env(container)
        with monkeypatch.context() as patched:
            for key in [k for k in os.environ if k.startswith("RAGDOWN_")]:
                patched.delenv(key)
            for key, value in env.items():
                patched.setenv(key, value)
            command = container.get("command") or []
            if command[:1] == ["ragdown-operator"]:  # the operator, and its uninstall hook
                settings: Any = OperatorSettings()
                assert settings.instance == RELEASE, where  # labels and finds the release's objects
                if command == ["ragdown-operator"]:
                    assert settings.indexer_url.startswith("http://"), where
                    assert settings.reader_service.endswith("-reader"), where
            elif "RAGDOWN_ROLE" in env:
                settings = ServerSettings()
                assert settings.role in ("primary", "reader"), where
                assert settings.token, where  # serve refuses to start without one
            else:
                continue
            checked += 1
    assert checked >= 2  # at least the indexer and the readers
