"""Production defaults from the platform review (issue 25): pods that a chart bump does not restart,
bounded scratch space, storage that can bind, and the image a user builds and pushes themselves."""

from __future__ import annotations

import shutil
from pathlib import Path

import helm_python as helm
import pytest
import yaml

from tests.chart.test_chart import (
    CHART,
    CI_NAMES,
    NAMESPACE,
    RELEASE,
    Render,
    Rendered,
    ci_values,
    pod_spec,
    workloads,
)


def templates_of(rendered: Rendered) -> dict[str, object]:
    return {
        obj["metadata"]["name"]: obj["spec"]["template"]
        for obj in rendered.objects
        if obj["kind"] in {"Deployment", "StatefulSet", "Job"}
    }


def test_a_chart_version_bump_alone_restarts_no_pod(tmp_path: Path) -> None:
    """helm.sh/chart stays on the objects' labels, never on a pod template (nor a selector): any change
    to a pod template rolls its pods."""
    copy = tmp_path / "ragdown"
    shutil.copytree(CHART, copy)
    metadata = yaml.safe_load((copy / "Chart.yaml").read_text())
    metadata["version"] = "9.9.9"
    (copy / "Chart.yaml").write_text(yaml.safe_dump(metadata))
    values = {"auth": {"token": "t" * 20, "adminToken": "a" * 20, "internalToken": "i" * 20}}
    with helm.Chart.load(CHART) as before, helm.Chart.load(copy) as after:
        old = Rendered(before.render(values, name=RELEASE, namespace=NAMESPACE))
        new = Rendered(after.render(values, name=RELEASE, namespace=NAMESPACE))
    assert templates_of(old)
    assert templates_of(new) == templates_of(old)
    for obj in new.objects:
        assert obj["metadata"]["labels"]["helm.sh/chart"] == "ragdown-9.9.9", obj["metadata"]["name"]
        template = obj.get("spec", {}).get("template")
        if template is not None:
            assert "helm.sh/chart" not in template["metadata"]["labels"], obj["metadata"]["name"]
        selector = obj.get("spec", {}).get("selector") or {}
        assert "helm.sh/chart" not in str(selector), obj["metadata"]["name"]


@pytest.mark.parametrize("name", CI_NAMES)
def test_every_pod_bounds_its_scratch_space_and_requests_it(render: Render, name: str) -> None:
    """An emptyDir without sizeLimit may fill the node's disk; without an ephemeral-storage request
    the scheduler places pods as if they wrote nothing."""
    rendered = render(ci_values(name))
    for workload in workloads(rendered):
        spec = pod_spec(workload)
        where = workload["metadata"]["name"]
        for volume in spec["volumes"]:
            if "emptyDir" in volume:
                assert volume["emptyDir"].get("sizeLimit"), (where, volume["name"])
        assert {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}} in spec["volumes"], where
        for c in spec["containers"] + spec.get("initContainers", []):
            assert c["resources"]["requests"].get("ephemeral-storage"), (where, c["name"])


def test_the_tmp_size_limit_is_a_value(render: Render) -> None:
    rendered = render({"tmpSizeLimit": "256Mi"})
    for workload in workloads(rendered):
        assert {"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}} in pod_spec(workload)["volumes"]


def test_read_write_many_without_a_storage_class_is_refused(chart: helm.Chart) -> None:
    with pytest.raises(helm.HelmRenderError, match=r"ReadWriteMany with no persistence\.storageClassName"):
        chart.render({"persistence": {"accessModes": ["ReadWriteMany"]}}, name=RELEASE, namespace=NAMESPACE)
    # Named, or the user's own claim (whose class the chart cannot see), it renders.
    chart.render(
        {"persistence": {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs-client"}},
        name=RELEASE,
        namespace=NAMESPACE,
    )
    chart.render(
        {"persistence": {"accessModes": ["ReadWriteMany"], "existingClaim": "shared"}},
        name=RELEASE,
        namespace=NAMESPACE,
    )
