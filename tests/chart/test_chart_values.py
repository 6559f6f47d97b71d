"""values.yaml and values.schema.json stay in step: every value is typed and described in the
schema, and documented in values.yaml where it is set (helm-docs' `# --` comments), so a key added
to one and forgotten in the other fails here rather than at a user's `helm install`."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from tests.chart.test_chart import CHART

VALUES_TEXT = (CHART / "values.yaml").read_text(encoding="utf-8")
VALUES = yaml.safe_load(VALUES_TEXT)
SCHEMA = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z][A-Za-z0-9]*):(?P<rest>.*)$")


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """A schema node with its local `$ref` followed."""
    while "$ref" in node:
        name = node["$ref"].removeprefix("#/definitions/")
        node = SCHEMA["definitions"][name]
    return node


def schema_paths() -> list[tuple[str, dict[str, Any] | None]]:
    """Every key of values.yaml with its schema node: into the objects the schema lists properties
    of in place, not into shared definitions (resources, probe timing: described once) nor into
    free-form maps (annotations, security contexts)."""
    found: list[tuple[str, dict[str, Any] | None]] = []

    def walk(values: dict[str, Any], properties: dict[str, Any], prefix: str) -> None:
        for key, value in values.items():
            node = properties.get(key)
            found.append((prefix + key, node if node is None else resolve(node)))
            if node is not None and isinstance(value, dict) and "properties" in node:
                walk(value, node["properties"], f"{prefix}{key}.")

    walk(VALUES, SCHEMA["properties"], "")
    return found


PATHS = schema_paths()


@pytest.mark.parametrize(("path", "node"), PATHS, ids=[path for path, _ in PATHS])
def test_every_value_is_typed_and_described_in_the_schema(path: str, node: dict[str, Any] | None) -> None:
    assert node is not None, f"{path} is in values.yaml but not in values.schema.json"
    assert "type" in node or "oneOf" in node, f"{path} has no type"
    assert node.get("description"), f"{path} has no description"


def test_the_schema_walk_reaches_the_new_keys() -> None:
    """Guards the walk above: nested keys are checked, not only the top level."""
    paths = {path for path, _ in PATHS}
    assert {
        "image.digest",
        "server.modelsDir",
        "queryLog.includePrompts",
        "reader.preStopSeconds",
        "reader.topologySpreadConstraints",
        "metrics.prometheusRule.searchP95Seconds",
        "test.mcpFolder",
        "openshift",
    } <= paths


def undocumented_values() -> list[str]:
    """Keys of values.yaml that hold a value but have no `# --` comment, neither their own (the
    comment block right above) nor one of an enclosing key that documents it as a whole."""
    lines = VALUES_TEXT.splitlines()
    missing: list[str] = []
    stack: list[tuple[int, bool, str]] = []  # (indent, documented, path) of enclosing keys
    for number, line in enumerate(lines):
        match = KEY_LINE.match(line)
        if match is None:
            continue
        indent = len(match["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([*(entry[2].rsplit(".", 1)[-1] for entry in stack), match["key"]])
        block = []
        above = number - 1
        while above >= 0 and lines[above].strip().startswith("#"):
            block.append(lines[above].strip())
            above -= 1
        documented = any(line.startswith("# --") for line in block) or any(entry[1] for entry in stack)
        following = next(
            (ln for ln in lines[number + 1 :] if ln.strip() and not ln.strip().startswith("#")), ""
        )
        has_children = not match["rest"].strip() and len(following) - len(following.lstrip()) > indent
        if not has_children and not documented:
            missing.append(path)
        stack.append((indent, documented, path))
    return missing


def test_every_value_is_documented_where_it_is_set() -> None:
    assert undocumented_values() == []


def test_the_documentation_check_sees_a_bare_key() -> None:
    global VALUES_TEXT
    kept = VALUES_TEXT
    try:
        VALUES_TEXT = kept.replace("  # -- Seconds the indexer gets to finish a sync when stopped.\n", "")
        assert undocumented_values() == ["indexer.terminationGracePeriodSeconds"]
    finally:
        VALUES_TEXT = kept
