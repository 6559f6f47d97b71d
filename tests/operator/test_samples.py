"""The sample resources in deploy/k8s/ are what the API server would admit
(docs/design.md#how-it-is-tested).

Every `RagdownFolder` document there is checked the way `tests/operator/test_crd.py` emulates the
API server (defaults, strict fields, the OpenAPI schema, the CEL rules), and broken copies of the
samples are refused, so the check cannot pass by accepting anything. The kind values file is
checked against the chart's own `values.schema.json`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.operator.test_crd import SCHEMA, admit, apply_defaults

ROOT = Path(__file__).resolve().parents[2]
SAMPLES_DIR = ROOT / "deploy" / "k8s"
VALUES_SCHEMA_PATH = ROOT / "charts" / "ragdown" / "values.schema.json"


def load_samples() -> dict[str, dict[str, Any]]:
    """Every RagdownFolder document under deploy/k8s, keyed by file and position."""
    samples = {}
    for path in sorted(SAMPLES_DIR.glob("*.yaml")):
        for index, document in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if isinstance(document, dict) and document.get("kind") == "RagdownFolder":
                samples[f"{path.name}#{index}"] = document
    return samples


SAMPLES = load_samples()


def sample(name: str) -> dict[str, Any]:
    return copy.deepcopy(SAMPLES[f"{name}#0"])


def test_the_documented_samples_are_there() -> None:
    assert sorted(SAMPLES) == ["private.yaml#0", "team-a.yaml#0", "team-runbooks.yaml#0", "work.yaml#0"]
    for document in SAMPLES.values():
        assert document["apiVersion"] == "ragdown.dev/v1alpha1"
        # No namespace: `kubectl apply -n <release namespace>` decides it.
        assert "namespace" not in document["metadata"]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_is_admitted(name: str) -> None:
    assert admit(SAMPLES[name]) == []


def test_samples_mean_what_their_comments_say() -> None:
    """The spec each sample has once the API server has applied the CRD's defaults."""
    work = apply_defaults(SCHEMA, sample("work.yaml"))["spec"]
    assert (work["folder"], work["title"], work["mcp"], work["deletionPolicy"]) == (
        "work",
        "Work notes",
        True,
        "Retain",
    )
    assert set(work["hook"]) == {"topK", "minScore", "minRatio", "maxChars"}

    runbooks = apply_defaults(SCHEMA, sample("team-runbooks.yaml"))["spec"]
    assert (runbooks["folder"], runbooks["mcp"], runbooks["readOnly"]) == ("runbooks", True, True)
    assert runbooks["disabledTools"] == ["ragdown_delete"]
    assert runbooks["deletionPolicy"] == "Retain"

    team = apply_defaults(SCHEMA, sample("team-a.yaml"))["spec"]
    assert (team["mcp"], team["tokens"]) == (
        True,
        [{"name": "team-a", "secretKeyRef": {"name": "team-a-token", "key": "token"}}],
    )

    private = apply_defaults(SCHEMA, sample("private.yaml"))["spec"]
    assert private["mcp"] is False
    assert "folder" not in private  # the operator uses metadata.name


def broken(name: str, path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of a sample with spec.<path> set to `value`."""
    obj = sample(name)
    node = obj["spec"]
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return obj


@pytest.mark.parametrize(
    ("name", "path", "value"),
    [
        pytest.param("work.yaml", ("folder",), "../etc", id="folder-traversal"),
        pytest.param("work.yaml", ("folder",), ".hidden", id="folder-dot"),
        pytest.param("private.yaml", ("mcp",), "yes", id="mcp-string"),
        pytest.param("work.yaml", ("hook", "topK"), 500, id="topK-500"),
        pytest.param("team-runbooks.yaml", ("disabledTools",), ["ragdown_nope"], id="unknown-tool"),
        pytest.param("work.yaml", ("deletionPolicy",), "Purge", id="deletionPolicy-Purge"),
        pytest.param("private.yaml", ("owner",), "me", id="unknown-spec-key"),
        pytest.param("team-a.yaml", ("tokens",), [{"name": "team-a", "token": "inline"}], id="inline-token"),
    ],
)
def test_broken_samples_are_refused(name: str, path: tuple[str, ...], value: Any) -> None:
    assert admit(broken(name, path, value)) != []


def test_changing_a_samples_folder_is_refused() -> None:
    """`spec.folder` is immutable: re-applying team-runbooks.yaml with another folder fails."""
    old = sample("team-runbooks.yaml")
    assert admit(broken("team-runbooks.yaml", ("folder",), "playbooks"), old=old) != []
    assert admit(broken("team-runbooks.yaml", ("title",), "Runbooks"), old=old) == []


# --- the Helm values for kind ---------------------------------------------------------------------


def kind_values() -> dict[str, Any]:
    values = yaml.safe_load((SAMPLES_DIR / "values-kind.yaml").read_text(encoding="utf-8"))
    assert isinstance(values, dict)
    return values


def values_validator() -> jsonschema.Draft7Validator:
    schema = json.loads(VALUES_SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


def test_kind_values_match_the_charts_schema() -> None:
    errors = [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in values_validator().iter_errors(kind_values())
    ]
    assert errors == []


def test_values_schema_refuses_a_misspelt_key() -> None:
    """The schema check above means something only if the schema is closed."""
    values = kind_values()
    values["ingress"]["hostname"] = values["ingress"].pop("host")
    assert list(values_validator().iter_errors(values))


def test_kind_values_fit_a_laptop() -> None:
    values = kind_values()
    assert values["ingress"]["className"] == "traefik"
    assert values["ingress"]["host"] == "ragdown.localtest.me"
    autoscaling = values["reader"]["autoscaling"]
    assert (autoscaling["enabled"], autoscaling["minReplicas"], autoscaling["maxReplicas"]) == (True, 1, 3)
    # The HPA computes utilization against the CPU request: without one it never scales.
    assert values["reader"]["resources"]["requests"]["cpu"]
