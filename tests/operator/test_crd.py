"""The RagdownFolder CRD, checked offline (docs/cluster.md, docs/design.md#how-it-is-tested).

No API server is reachable here, so the CRD is checked the ways that can be real: as a
Kubernetes manifest (`kubernetes-validate --strict`), against the structural-schema rules the
API server enforces, and by validating sample resources the way the API server would: defaults
applied, unknown fields refused (kubectl's default strict field validation), the OpenAPI schema
as JSON Schema, and the CEL rules (`x-kubernetes-validations`) evaluated with cel-python.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import kubernetes_validate
import pytest
import yaml
from celpy.adapter import json_to_cel

from ragdown.folders.manage import FOLDER_TOOLS, MAX_TOKENS, TOKEN_NAME_RE

ROOT = Path(__file__).resolve().parents[2]
CRD_PATH = ROOT / "crds" / "ragdownfolder.yaml"
CHART_CRD_PATH = ROOT / "charts" / "ragdown" / "files" / "crds" / "ragdownfolder.yaml"

TOOLS = list(FOLDER_TOOLS)  # the CRD enum must be exactly the server's folder tools
IMMUTABLE_MESSAGE = "folder cannot be changed: create a new RagdownFolder instead"


def load_crd() -> dict[str, Any]:
    data = yaml.safe_load(CRD_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


CRD = load_crd()
VERSION = CRD["spec"]["versions"][0]
SCHEMA: dict[str, Any] = VERSION["schema"]["openAPIV3Schema"]
SPEC = SCHEMA["properties"]["spec"]


# --- the API server's handling of a resource, emulated -------------------------------------------


def as_json_schema(node: Any) -> Any:
    """The OpenAPI schema as Draft 7 JSON Schema, closed like strict field validation.

    The `x-kubernetes-*` keys are dropped; an object schema with `properties` refuses other
    keys, as the API server does under `fieldValidation=Strict` (kubectl's default), unless it
    preserves unknown fields.
    """
    if isinstance(node, list):
        return [as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: as_json_schema(v) for k, v in node.items() if not k.startswith("x-kubernetes-")}
    if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


VALIDATOR = jsonschema.Draft7Validator(
    as_json_schema(SCHEMA), format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
)


def apply_defaults(schema: dict[str, Any], value: Any) -> Any:
    """Structural defaulting: a missing property with a default gets it, then recurse."""
    if isinstance(value, dict):
        for name, prop in schema.get("properties", {}).items():
            if name not in value and "default" in prop:
                value[name] = copy.deepcopy(prop["default"])
        for name, item in value.items():
            if name in schema.get("properties", {}):
                apply_defaults(schema["properties"][name], item)
    elif isinstance(value, list) and "items" in schema:
        for item in value:
            apply_defaults(schema["items"], item)
    return value


CEL = celpy.Environment()


def cel_failures(schema: dict[str, Any], new: Any, old: Any = None, *, has_old: bool = False) -> list[str]:
    """The messages of the CEL rules that fail, evaluated where the API server evaluates them.

    A rule runs where its value is present; a transition rule (one naming oldSelf) only on an
    update where the old value is present too.
    """
    failures = []
    for rule in schema.get("x-kubernetes-validations", []):
        transition = "oldSelf" in rule["rule"]
        if transition and not has_old:
            continue
        activation = {"self": json_to_cel(new)}
        if transition:
            activation["oldSelf"] = json_to_cel(old)
        result = CEL.program(CEL.compile(rule["rule"])).evaluate(activation)
        if result != celpy.celtypes.BoolType(True):  # the rule did not hold
            failures.append(rule.get("message", rule["rule"]))
    if isinstance(new, dict):
        for name, prop in schema.get("properties", {}).items():
            if name in new:
                old_here = old.get(name) if has_old and isinstance(old, dict) else None
                in_old = has_old and isinstance(old, dict) and name in old
                failures += cel_failures(prop, new[name], old_here, has_old=in_old)
    return failures


def duplicates(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """The API server's list-type checks: a `set` holds no value twice, a `map` no key twice."""
    found = []
    if isinstance(value, list):
        kind = schema.get("x-kubernetes-list-type")
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen = [
            repr([item.get(k) for k in keys] if kind == "map" and isinstance(item, dict) else item)
            for item in value
        ]
        if kind in ("set", "map") and len(set(seen)) < len(seen):
            found.append(f"{path}: Duplicate value")
        for item in value:
            found += duplicates(schema.get("items", {}), item, path + "[]")
    elif isinstance(value, dict):
        for name, prop in schema.get("properties", {}).items():
            if name in value:
                found += duplicates(prop, value[name], f"{path}.{name}")
    return found


def admit(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    """What the API server would say to a create (old None) or an update: [] when admitted."""
    obj = apply_defaults(SCHEMA, copy.deepcopy(obj))
    errors = [error.message for error in VALIDATOR.iter_errors(obj)] + duplicates(SCHEMA, obj)
    if errors:
        return errors
    if old is not None:
        old = apply_defaults(SCHEMA, copy.deepcopy(old))
    return cel_failures(SCHEMA, obj, old, has_old=old is not None)


def token(name: str, secret: str = "team-token", key: str = "token") -> dict[str, Any]:
    return {"name": name, "secretKeyRef": {"name": secret, "key": key}}


def folder(spec: dict[str, Any] | None = None, name: str = "work") -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "ragdown.dev/v1alpha1",
        "kind": "RagdownFolder",
        "metadata": {"name": name, "namespace": "default"},
    }
    if spec is not None:
        obj["spec"] = spec
    return obj


FULL = folder(
    {
        "folder": "Work notes_2.0",
        "title": "Work notes",
        "mcp": True,
        "readOnly": False,
        "disabledTools": ["ragdown_delete", "ragdown_move"],
        "hook": {"topK": 6, "minScore": 0.75, "minRatio": 0.95, "maxChars": 6000},
        "tokens": [
            {"name": "team-a", "secretKeyRef": {"name": "team-a-token", "key": "token"}},
            {"name": "ci.bot_2", "secretKeyRef": {"name": "ci.tokens", "key": "ragdown.work_token"}},
        ],
        "deletionPolicy": "Delete",
    }
)
FULL["status"] = {
    "conditions": [
        {
            "type": "Ready",
            "status": "True",
            "reason": "Reconciled",
            "message": "settings written, ingress in place",
            "lastTransitionTime": "2026-01-02T03:04:05Z",
            "observedGeneration": 3,
        },
        {
            "type": "Synced",
            "status": "True",
            "reason": "Written",
            "message": "",
            "lastTransitionTime": "2026-01-02T03:04:05Z",
        },
        {
            "type": "Routed",
            "status": "Unknown",
            "reason": "Pending",
            "message": "not reconciled yet",
            "lastTransitionTime": "2026-01-02T03:04:05Z",
        },
    ],
    "files": 42,
    "chunks": 910,
    "endpoint": "https://ragdown.example/mcp/work",
    "observedGeneration": 3,
}


# --- the file -----------------------------------------------------------------------------------


def test_chart_copy_is_identical() -> None:
    assert CHART_CRD_PATH.read_bytes() == CRD_PATH.read_bytes()


@pytest.mark.parametrize(
    "version", ["1.29.0", kubernetes_validate.utils.latest_version()], ids=["1.29", "latest"]
)
def test_valid_kubernetes_manifest(version: str) -> None:
    kubernetes_validate.validate(load_crd(), version, strict=True)


def test_manifest_check_catches_a_misspelt_field() -> None:
    crd = load_crd()
    crd["spec"]["versions"][0]["subresource"] = {"status": {}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(crd, kubernetes_validate.utils.latest_version(), strict=True)


def test_names_scope_and_version() -> None:
    spec = CRD["spec"]
    assert CRD["apiVersion"] == "apiextensions.k8s.io/v1"
    assert CRD["kind"] == "CustomResourceDefinition"
    assert CRD["metadata"]["name"] == "ragdownfolders.ragdown.dev"
    assert spec["group"] == "ragdown.dev"
    assert spec["scope"] == "Namespaced"
    names = spec["names"]
    assert (names["kind"], names["plural"], names["singular"]) == (
        "RagdownFolder",
        "ragdownfolders",
        "ragdownfolder",
    )
    assert names["shortNames"] == ["rdf"]
    assert [(v["name"], v["served"], v["storage"]) for v in spec["versions"]] == [("v1alpha1", True, True)]
    assert VERSION["subresources"] == {"status": {}}


def test_printer_columns() -> None:
    columns = {c["name"]: c for c in VERSION["additionalPrinterColumns"]}
    assert list(columns) == ["Title", "MCP", "Files", "Chunks", "Endpoint", "Ready", "Age"]
    assert columns["Title"]["jsonPath"] == ".spec.title"
    assert (columns["MCP"]["jsonPath"], columns["MCP"]["type"]) == (".spec.mcp", "boolean")
    assert (columns["Files"]["jsonPath"], columns["Files"]["type"]) == (".status.files", "integer")
    assert (columns["Chunks"]["jsonPath"], columns["Chunks"]["type"]) == (".status.chunks", "integer")
    assert columns["Endpoint"]["jsonPath"] == ".status.endpoint"
    assert columns["Ready"]["jsonPath"] == '.status.conditions[?(@.type=="Ready")].status'
    assert (columns["Age"]["jsonPath"], columns["Age"]["type"]) == (".metadata.creationTimestamp", "date")


def walk(node: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = [(path or "<root>", node)]
    for name, prop in node.get("properties", {}).items():
        found += walk(prop, f"{path}.{name}")
    if "items" in node:
        found += walk(node["items"], f"{path}[]")
    return found


def test_schema_is_structural_and_described() -> None:
    for path, node in walk(SCHEMA):
        # Every node has a type; the API server refuses additionalProperties beside properties.
        assert "type" in node, path
        assert not ("properties" in node and "additionalProperties" in node), path
        if path not in {".apiVersion", ".kind", ".metadata"}:
            assert node.get("description"), f"{path} has no description for kubectl explain"
        if "default" in node:
            assert not list(jsonschema.Draft7Validator(as_json_schema(node)).iter_errors(node["default"]))
        if node.get("x-kubernetes-list-type") == "map":
            assert set(node["x-kubernetes-list-map-keys"]) <= set(node["items"]["required"]), path


def test_defaults() -> None:
    assert SPEC["properties"]["mcp"]["default"] is False
    assert SPEC["properties"]["readOnly"]["default"] is False
    assert SPEC["properties"]["deletionPolicy"]["default"] == "Retain"
    assert "default" not in SPEC["properties"]["folder"]  # the operator uses metadata.name
    defaulted = apply_defaults(SCHEMA, folder())
    assert defaulted["spec"] == {"mcp": False, "readOnly": False, "deletionPolicy": "Retain"}


def test_field_schemas() -> None:
    props = SPEC["properties"]
    assert props["folder"]["pattern"] == "^[A-Za-z0-9_][A-Za-z0-9 _.-]{0,63}$"
    assert props["title"]["maxLength"] == 200
    assert props["disabledTools"]["items"]["enum"] == TOOLS
    assert props["disabledTools"]["x-kubernetes-list-type"] == "set"
    assert props["deletionPolicy"]["enum"] == ["Retain", "Delete"]
    hook = props["hook"]["properties"]
    assert (hook["topK"]["minimum"], hook["topK"]["maximum"]) == (0, 50)
    assert (hook["minScore"]["minimum"], hook["minScore"]["maximum"]) == (0, 1)
    assert (hook["minRatio"]["minimum"], hook["minRatio"]["maximum"]) == (0, 1)
    assert (hook["maxChars"]["minimum"], hook["maxChars"]["maximum"]) == (0, 100000)
    tokens = props["tokens"]
    assert (tokens["x-kubernetes-list-type"], tokens["x-kubernetes-list-map-keys"]) == ("map", ["name"])
    assert tokens["maxItems"] <= MAX_TOKENS  # the indexer takes at most that many
    assert tokens["items"]["properties"]["name"]["pattern"] == TOKEN_NAME_RE.pattern
    assert "default" not in tokens  # left out means "leave the folder's tokens alone" (docs/cluster.md)
    status = SCHEMA["properties"]["status"]["properties"]
    assert status["conditions"]["x-kubernetes-list-type"] == "map"
    assert status["conditions"]["x-kubernetes-list-map-keys"] == ["type"]
    assert status["conditions"]["items"]["properties"]["status"]["enum"] == ["True", "False", "Unknown"]


def test_folder_is_immutable_by_rule() -> None:
    rules = SPEC["properties"]["folder"]["x-kubernetes-validations"]
    immutable = [r for r in rules if r["rule"] == "self == oldSelf"]
    assert immutable
    assert immutable[0]["message"] == IMMUTABLE_MESSAGE
    assert "create a new RagdownFolder" in immutable[0]["message"]
    # A rule on an optional field runs only when it is set in both: adding or removing it is
    # caught one level up, on spec.
    spec_rules = [r["rule"] for r in SPEC["x-kubernetes-validations"]]
    assert "has(self.folder) == has(oldSelf.folder)" in spec_rules


# --- sample resources ---------------------------------------------------------------------------


def test_full_resource_is_admitted() -> None:
    assert admit(FULL) == []


# Specs the API server must admit; tests/cluster/test_crd_real.py sends each to a real one.
VALID_SPECS: list[dict[str, Any]] = [
    {},
    {"folder": "work"},
    {"folder": "_inbox"},
    {"folder": "My notes.v2-final"},
    {"folder": "a" * 64},
    {"title": "t" * 200},
    {"disabledTools": TOOLS},
    {"hook": {}},
    {"hook": {"topK": 0, "minScore": 0, "minRatio": 1, "maxChars": 100000}},
    {"hook": {"topK": 50, "minScore": 1}},
    {"deletionPolicy": "Retain"},
    {"tokens": []},
    {"tokens": [{"name": "a", "secretKeyRef": {"name": "s", "key": "k"}}]},
    {"tokens": [{"name": n, "secretKeyRef": {"name": "s", "key": "k"}} for n in ("a", "b", "A", "a.b")]},
    {"tokens": [{"name": "n" * 64, "secretKeyRef": {"name": "s" * 253, "key": "K" * 253}}]},
]


@pytest.mark.parametrize("spec", VALID_SPECS)
def test_valid_specs(spec: dict[str, Any]) -> None:
    assert admit(folder(spec)) == []


def test_no_spec_is_admitted_with_defaults() -> None:
    assert admit(folder()) == []


# Specs the API server must refuse; tests/cluster/test_crd_real.py sends each to a real one.
INVALID_SPECS = [
    pytest.param({"folder": ".hidden"}, id="dot"),
    pytest.param({"folder": "-dash"}, id="dash"),
    pytest.param({"folder": " space"}, id="leading-space"),
    pytest.param({"folder": "a/b"}, id="slash"),
    pytest.param({"folder": "a" * 65}, id="too-long"),
    pytest.param({"folder": ""}, id="empty"),
    pytest.param({"folder": "trailing "}, id="trailing-space"),
    pytest.param({"folder": "node_modules"}, id="node_modules"),
    pytest.param({"title": "t" * 201}, id="long-title"),
    pytest.param({"mcp": "yes"}, id="mcp-string"),
    pytest.param({"hook": {"minScore": 1.5}}, id="minScore"),
    pytest.param({"hook": {"minRatio": -0.1}}, id="minRatio"),
    pytest.param({"hook": {"topK": -1}}, id="topK-negative"),
    pytest.param({"hook": {"topK": 51}}, id="topK-big"),
    pytest.param({"hook": {"topK": 2.5}}, id="topK-float"),
    pytest.param({"hook": {"maxChars": 100001}}, id="maxChars"),
    pytest.param({"hook": {"top_k": 6}}, id="unknown-hook-key"),
    pytest.param({"deletionPolicy": "Orphan"}, id="deletionPolicy"),
    pytest.param({"disabledTools": ["ragdown_search"]}, id="unknown-tool"),
    pytest.param({"disabledTools": "ragdown_delete"}, id="tools-not-a-list"),
    pytest.param({"disabledTools": ["ragdown_delete", "ragdown_delete"]}, id="tools-twice"),
    pytest.param({"folders": "work"}, id="unknown-spec-key"),
    pytest.param({"tokens": [token("a"), token("a")]}, id="token-names-twice"),
    pytest.param({"tokens": [token(f"t{i}") for i in range(21)]}, id="too-many-tokens"),
    pytest.param({"tokens": [token("a b")]}, id="token-name-space"),
    pytest.param({"tokens": [token("")]}, id="token-name-empty"),
    pytest.param({"tokens": [token("n" * 65)]}, id="token-name-long"),
    pytest.param({"tokens": [token("a", secret="Team_A")]}, id="secret-not-a-dns-name"),
    pytest.param({"tokens": [token("a", secret="a/b")]}, id="secret-with-slash"),
    pytest.param({"tokens": [token("a", key="a/b")]}, id="key-with-slash"),
    pytest.param({"tokens": [token("a", key="")]}, id="key-empty"),
    pytest.param({"tokens": [{"name": "a"}]}, id="no-secretKeyRef"),
    pytest.param({"tokens": [{"name": "a", "secretKeyRef": {"name": "s"}}]}, id="no-key"),
    pytest.param({"tokens": [{"name": "a", "value": "s3cret"}]}, id="inline-token"),
    pytest.param({"tokens": [{**token("a"), "namespace": "other"}]}, id="other-namespace"),
    pytest.param({"tokens": {"a": "s"}}, id="tokens-not-a-list"),
    pytest.param({"tokens": ["s3cret"]}, id="token-a-string"),
]


@pytest.mark.parametrize("spec", INVALID_SPECS)
def test_invalid_specs_are_refused(spec: dict[str, Any]) -> None:
    assert admit(folder(spec)) != []


def test_token_names_are_unique_by_the_list_type_and_by_a_rule_with_a_message() -> None:
    twice = folder({"tokens": [token("a"), token("a", secret="other")]})
    assert "token names must be unique in spec.tokens" in cel_failures(SCHEMA, twice)
    assert ".spec.tokens: Duplicate value" in admit(twice)


# Statuses the API server must refuse (the cluster tier writes each through the status subresource).
INVALID_STATUSES: list[dict[str, Any]] = [
    {"files": -1},
    {"conditions": [{"type": "Ready", "status": "Maybe"}]},
    {"conditions": [{"status": "True"}]},
]


def test_invalid_status_is_refused() -> None:
    for status in INVALID_STATUSES:
        obj = copy.deepcopy(FULL)
        obj["status"] = status
        assert admit(obj) != [], status


def test_long_name_needs_a_folder() -> None:
    name = "n" * 70
    assert admit(folder({}, name=name)) == [
        "metadata.name is longer than a folder name may be (64 characters): set spec.folder"
    ]
    assert admit(folder({"folder": "short"}, name=name)) == []


# --- updates (transition rules) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("old_spec", "new_spec"),
    [
        pytest.param({"folder": "work"}, {"folder": "other"}, id="changed"),
        pytest.param({"folder": "work"}, {}, id="removed"),
        pytest.param({}, {"folder": "other"}, id="added"),
        pytest.param(None, {"folder": "other"}, id="added-to-defaulted-spec"),
    ],
)
def test_folder_cannot_change(old_spec: dict[str, Any] | None, new_spec: dict[str, Any]) -> None:
    assert admit(folder(new_spec), old=folder(old_spec)) == [IMMUTABLE_MESSAGE]


@pytest.mark.parametrize(
    ("old_spec", "new_spec"),
    [
        pytest.param({"folder": "work"}, {"folder": "work", "mcp": True, "title": "Work"}, id="set"),
        pytest.param({}, {"mcp": True, "deletionPolicy": "Delete"}, id="unset"),
        pytest.param(None, {"hook": {"topK": 3}}, id="defaulted"),
    ],
)
def test_other_fields_can_change(old_spec: dict[str, Any] | None, new_spec: dict[str, Any]) -> None:
    assert admit(folder(new_spec), old=folder(old_spec)) == []


# metav1.Condition as the API server's own types declare it (k8s.io/apimachinery/pkg/apis/meta/v1).
CONDITION_REQUIRED = {"type", "status", "lastTransitionTime", "reason", "message"}
CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


def with_conditions(conditions: list[dict[str, Any]]) -> dict[str, Any]:
    resource = copy.deepcopy(FULL)
    resource["status"]["conditions"] = conditions
    return resource


def test_the_conditions_are_metav1_conditions() -> None:
    items = SCHEMA["properties"]["status"]["properties"]["conditions"]["items"]
    assert set(items["required"]) == CONDITION_REQUIRED
    props = items["properties"]
    assert (props["type"]["pattern"], props["type"]["maxLength"]) == (CONDITION_TYPE_PATTERN, 316)
    assert props["reason"]["pattern"] == CONDITION_REASON_PATTERN
    assert (props["reason"]["minLength"], props["reason"]["maxLength"]) == (1, 1024)
    assert props["message"]["maxLength"] == 32768
    assert props["status"]["enum"] == ["True", "False", "Unknown"]
    assert props["lastTransitionTime"]["format"] == "date-time"
    assert (props["observedGeneration"]["format"], props["observedGeneration"]["minimum"]) == ("int64", 0)
    good = {
        "type": "Ready",
        "status": "True",
        "reason": "Reconciled",
        "message": "",
        "lastTransitionTime": "2026-01-02T03:04:05Z",
    }
    assert admit(with_conditions([good])) == []
    for key in sorted(CONDITION_REQUIRED):
        missing = {k: v for k, v in good.items() if k != key}
        assert admit(with_conditions([missing])), key
    for bad in ({"reason": "not a reason"}, {"reason": ""}, {"type": "-Ready"}, {"type": "a/b/c"}):
        assert admit(with_conditions([{**good, **bad}])), bad


def test_every_condition_the_operator_writes_is_admitted() -> None:
    from ragdown_operator.status import Condition, conditions

    reasons = ["InvalidSpec", "IndexerUnreachable", "TokenSecretMissing", "IngressConflict", "McpOff"]
    for reason in reasons:
        written = conditions([], [Condition("Synced", False, reason, "why")], 3)
        written = conditions(written, [Condition("Routed", True, reason, "")], 3)
        assert admit(with_conditions(written)) == [], reason
