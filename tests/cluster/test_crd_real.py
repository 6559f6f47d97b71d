"""The RagdownFolder CRD on a real API server (docs/cluster.md#a-real-control-plane).

tests/operator/test_crd.py emulates the server (jsonschema, cel-python); here the real kube-apiserver
judges the same cases through the real kubectl: the CRD is established, every sample under deploy/k8s
is admitted, each invalid spec is refused with the message a user sees, the printer columns show, and
status is written only through its subresource.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.cluster.conftest import REPO, Cluster
from tests.operator.test_crd import FULL, IMMUTABLE_MESSAGE, INVALID_SPECS, folder
from tests.operator.test_samples import SAMPLES

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

CRD_NAME = "ragdownfolders.ragdown.dev"


@pytest.fixture(scope="module")
def crd(cluster: Cluster) -> Cluster:
    cluster.kubectl("apply", "-f", str(REPO / "crds" / "ragdownfolder.yaml"))
    cluster.kubectl("wait", "--for", "condition=Established", f"crd/{CRD_NAME}", "--timeout", "60s")
    return cluster


def apply(cluster: Cluster, namespace: str, obj: dict[str, Any], *extra: str) -> Any:
    return cluster.kubectl("apply", "-n", namespace, "-f", "-", *extra, input=json.dumps(obj), check=False)


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
    assert stored["spec"]["folder"] == SAMPLES[key]["spec"].get("folder", stored["spec"].get("folder"))


def test_defaults_are_applied_by_the_server(crd: Cluster, namespace: str) -> None:
    assert apply(crd, namespace, folder(name="bare")).returncode == 0
    stored = crd.get("ragdownfolder", "-n", namespace, "bare")
    assert stored["spec"] == {"mcp": False, "readOnly": False, "deletionPolicy": "Retain"}


@pytest.mark.parametrize("spec", INVALID_SPECS)
def test_invalid_specs_are_refused_by_the_server(crd: Cluster, namespace: str, spec: dict[str, Any]) -> None:
    done = apply(crd, namespace, folder(spec, name="bad"))
    assert done.returncode != 0, f"the API server admitted {spec}"
    message = done.stderr
    # What the user sees: the resource named, and the offending field under spec.
    assert 'RagdownFolder.ragdown.dev "bad" is invalid' in message or "strict decoding error" in message, (
        message
    )
    assert "spec." in message, message
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
        "replace", "-n", namespace, "-f", "-", input=json.dumps(folder(new_spec, name="kept")), check=False
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
    refused = crd.kubectl(
        "patch", "ragdownfolder", "st", "-n", namespace, "--subresource", "status", "--type", "merge",
        "-p", '{"status":{"files":-1}}', check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "status.files" in refused.stderr
    # ...and a status write leaves the spec alone.
    assert crd.get("ragdownfolder", "-n", namespace, "st")["spec"]["folder"] == "work"
