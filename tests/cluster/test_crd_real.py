"""The RagdownFolder CRD on a real API server (docs/cluster.md#a-real-control-plane).

tests/operator/test_crd.py emulates the server (jsonschema, cel-python); here the real kube-apiserver
judges the same cases through the real kubectl: the CRD is established, every sample under deploy/k8s
is admitted, each invalid spec is refused with the message a user sees, the printer columns show, and
status is written only through its subresource.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.cluster.conftest import REPO, Cluster
from tests.operator.test_crd import (
    FULL,
    IMMUTABLE_MESSAGE,
    INVALID_SPECS,
    INVALID_STATUSES,
    VALID_SPECS,
    folder,
)
from tests.operator.test_samples import SAMPLES

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

CRD_NAME = "ragdownfolders.ragdown.dev"


@pytest.fixture(scope="module")
def crd(cluster: Cluster) -> Cluster:
    cluster.kubectl("apply", "-f", str(REPO / "crds" / "ragdownfolder.yaml"))
    cluster.kubectl("wait", "--for", "condition=Established", f"crd/{CRD_NAME}", "--timeout", "60s")
    return cluster


def placed(obj: dict[str, Any], namespace: str) -> str:
    """The object as JSON, in the test's namespace."""
    return json.dumps({**obj, "metadata": {**obj["metadata"], "namespace": namespace}})


def apply(cluster: Cluster, namespace: str, obj: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return cluster.kubectl("apply", "-n", namespace, "-f", "-", input=placed(obj, namespace), check=False)


def test_crd_is_established_with_the_names_kubectl_uses(crd: Cluster) -> None:
    found = crd.get("crd", CRD_NAME)
    conditions = {c["type"]: c["status"] for c in found["status"]["conditions"]}
    assert conditions["Established"] == "True"
    assert conditions["NamesAccepted"] == "True"
    assert found["status"]["acceptedNames"]["shortNames"] == ["rdf"]


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_every_sample_is_admitted(crd: Cluster, namespace: str, key: str) -> None:
    done = apply(crd, namespace, SAMPLES[key])
    assert done.returncode == 0, done.stderr
    stored = crd.get("ragdownfolder", "-n", namespace, SAMPLES[key]["metadata"]["name"])
    # Stored as written, with the schema's defaults filled in by the server.
    assert stored["spec"] == {
        "mcp": False,
        "readOnly": False,
        "deletionPolicy": "Retain",
        **SAMPLES[key]["spec"],
    }


@pytest.mark.parametrize("spec", VALID_SPECS)
def test_valid_specs_are_admitted_by_the_server(crd: Cluster, namespace: str, spec: dict[str, Any]) -> None:
    done = apply(crd, namespace, folder(spec, name="good"))
    assert done.returncode == 0, done.stderr


def test_defaults_are_applied_by_the_server(crd: Cluster, namespace: str) -> None:
    assert apply(crd, namespace, folder(name="bare")).returncode == 0
    stored = crd.get("ragdownfolder", "-n", namespace, "bare")
    assert stored["spec"] == {"mcp": False, "readOnly": False, "deletionPolicy": "Retain"}


# What the real server says to each invalid spec of tests/operator/test_crd.py, as `kubectl apply`
# shows it: schema errors name the field ('The RagdownFolder "bad" is invalid: spec.…'), unknown fields
# are refused while decoding (kubectl's default strict field validation).
SERVER_SAYS = {
    "dot": "spec.folder in body should match '^[A-Za-z0-9_][A-Za-z0-9 _.-]{0,63}$'",
    "dash": "spec.folder in body should match",
    "leading-space": "spec.folder in body should match",
    "slash": "spec.folder in body should match",
    "too-long": "spec.folder: Too long: may not be more than 64 bytes",
    "empty": 'spec.folder: Invalid value: "": spec.folder in body should match',
    "trailing-space": 'spec.folder: Invalid value: "trailing ": not a valid folder name',
    "node_modules": 'spec.folder: Invalid value: "node_modules": not a valid folder name',
    "long-title": "spec.title: Too long: may not be more than 200 bytes",
    "mcp-string": "spec.mcp in body must be of type boolean",
    "minScore": "spec.hook.minScore in body should be less than or equal to 1",
    "minRatio": "spec.hook.minRatio in body should be greater than or equal to 0",
    "topK-negative": "spec.hook.topK in body should be greater than or equal to 0",
    "topK-big": "spec.hook.topK in body should be less than or equal to 50",
    "topK-float": "spec.hook.topK in body must be of type integer",
    "maxChars": "spec.hook.maxChars in body should be less than or equal to 100000",
    "unknown-hook-key": 'strict decoding error: unknown field "spec.hook.top_k"',
    "deletionPolicy": 'spec.deletionPolicy: Unsupported value: "Orphan": supported values: "Retain"',
    "unknown-tool": 'spec.disabledTools[0]: Unsupported value: "ragdown_search"',
    "tools-not-a-list": "spec.disabledTools in body must be of type array",
    "tools-twice": 'spec.disabledTools[1]: Duplicate value: "ragdown_delete"',
    "unknown-spec-key": 'strict decoding error: unknown field "spec.folders"',
    "token-names-twice": "spec.tokens: Invalid value: token names must be unique in spec.tokens",
    "too-many-tokens": "spec.tokens: Too many: 21: must have at most 20 items",
    "token-name-space": "spec.tokens[0].name in body should match '^[A-Za-z0-9_.-]{1,64}$'",
    "token-name-empty": "spec.tokens[0].name in body should be at least 1 chars long",
    "token-name-long": "spec.tokens[0].name: Too long: may not be more than 64 bytes",
    "secret-not-a-dns-name": 'spec.tokens[0].secretKeyRef.name: Invalid value: "Team_A"',
    "secret-with-slash": 'spec.tokens[0].secretKeyRef.name: Invalid value: "a/b"',
    "key-with-slash": 'spec.tokens[0].secretKeyRef.key: Invalid value: "a/b"',
    "key-empty": "spec.tokens[0].secretKeyRef.key in body should be at least 1 chars long",
    "no-secretKeyRef": "spec.tokens[0].secretKeyRef: Required value",
    "no-key": "spec.tokens[0].secretKeyRef.key: Required value",
    "inline-token": 'strict decoding error: unknown field "spec.tokens[0].value"',
    "other-namespace": 'strict decoding error: unknown field "spec.tokens[0].namespace"',
    # Not "must be of type array": an object decodes field by field, and its key is unknown.
    "tokens-not-a-list": 'strict decoding error: unknown field "spec.tokens.a"',
    "token-a-string": "spec.tokens[0] in body must be of type object",
}


def test_every_emulated_invalid_case_has_the_servers_message() -> None:
    assert sorted(SERVER_SAYS) == sorted(str(case.id) for case in INVALID_SPECS)


@pytest.mark.parametrize(("case", "spec"), [pytest.param(c.id, c.values[0], id=c.id) for c in INVALID_SPECS])
def test_invalid_specs_are_refused_by_the_server(
    crd: Cluster, namespace: str, case: str, spec: dict[str, Any]
) -> None:
    done = apply(crd, namespace, folder(spec, name="bad"))
    assert done.returncode != 0, f"the API server admitted {spec}"
    if "strict decoding error" in SERVER_SAYS[case]:
        assert "cannot be handled as a RagdownFolder" in done.stderr
    else:
        assert done.stderr.startswith('The RagdownFolder "bad" is invalid: '), done.stderr
    assert SERVER_SAYS[case] in done.stderr, done.stderr
    assert crd.kubectl("get", "ragdownfolder", "-n", namespace, "bad", check=False).returncode != 0


def test_long_name_needs_a_folder(crd: Cluster, namespace: str) -> None:
    done = apply(crd, namespace, folder({}, name="n" * 70))
    assert done.returncode != 0
    assert "metadata.name is longer than a folder name may be (64 characters): set spec.folder" in done.stderr
    assert apply(crd, namespace, folder({"folder": "short"}, name="n" * 70)).returncode == 0


@pytest.mark.parametrize(
    ("old_spec", "new_spec"),
    [
        pytest.param({"folder": "work"}, {"folder": "other"}, id="changed"),
        pytest.param({"folder": "work"}, {}, id="removed"),
        pytest.param({}, {"folder": "other"}, id="added"),
    ],
)
def test_folder_cannot_change(
    crd: Cluster, namespace: str, old_spec: dict[str, Any], new_spec: dict[str, Any]
) -> None:
    assert apply(crd, namespace, folder(old_spec, name="kept")).returncode == 0
    # A replace, not apply: apply would merge the old folder back into a spec that leaves it out.
    done = crd.kubectl(
        "replace",
        "-n",
        namespace,
        "-f",
        "-",
        input=placed(folder(new_spec, name="kept"), namespace),
        check=False,
    )
    assert done.returncode != 0
    assert IMMUTABLE_MESSAGE in done.stderr


def test_printer_columns(crd: Cluster, namespace: str) -> None:
    obj = {key: value for key, value in FULL.items() if key != "status"}
    assert apply(crd, namespace, obj).returncode == 0
    crd.kubectl(
        "patch", "ragdownfolder", "work", "-n", namespace, "--subresource", "status", "--type", "merge",
        "-p", json.dumps({"status": FULL["status"]}),
    )  # fmt: skip
    table = crd.kubectl("get", "ragdownfolders", "-n", namespace).stdout.splitlines()
    assert table[0].split() == ["NAME", "TITLE", "MCP", "FILES", "CHUNKS", "ENDPOINT", "READY", "AGE"]
    row = table[1]
    for shown in ("work", "Work notes", "true", "42", "910", "https://ragdown.example/mcp/work", "True"):
        assert shown in row, row
    # The short name works too.
    assert "work" in crd.kubectl("get", "rdf", "-n", namespace).stdout


def test_status_is_written_only_through_its_subresource(crd: Cluster, namespace: str) -> None:
    obj = folder({"folder": "work"}, name="st")
    obj["status"] = {"files": 7}
    assert apply(crd, namespace, obj).returncode == 0
    assert "status" not in crd.get("ragdownfolder", "-n", namespace, "st") or not crd.get(
        "ragdownfolder", "-n", namespace, "st"
    )["status"].get("files")
    # A patch of the resource itself leaves status alone...
    crd.kubectl(
        "patch", "ragdownfolder", "st", "-n", namespace, "--type", "merge", "-p", '{"status":{"files":8}}'
    )
    assert crd.get("ragdownfolder", "-n", namespace, "st").get("status", {}).get("files") is None
    # ...the subresource writes it, and validates it.
    crd.kubectl(
        "patch", "ragdownfolder", "st", "-n", namespace, "--subresource", "status", "--type", "merge",
        "-p", '{"status":{"files":9}}',
    )  # fmt: skip
    assert crd.get("ragdownfolder", "-n", namespace, "st")["status"]["files"] == 9
    for status, field in zip(
        INVALID_STATUSES,
        [
            "status.files: Invalid value: -1: files in body should be greater than or equal to 0",
            'status.conditions[0].status: Unsupported value: "Maybe"',
            "status.conditions[0].type: Required value",
        ],
        strict=True,
    ):
        refused = crd.kubectl(
            "patch", "ragdownfolder", "st", "-n", namespace, "--subresource", "status", "--type", "merge",
            "-p", json.dumps({"status": status}), check=False,
        )  # fmt: skip
        assert refused.returncode != 0, status
        assert field in refused.stderr, refused.stderr
    assert crd.get("ragdownfolder", "-n", namespace, "st")["status"]["files"] == 9
    # ...and a status write leaves the spec alone.
    assert crd.get("ragdownfolder", "-n", namespace, "st")["spec"]["folder"] == "work"
