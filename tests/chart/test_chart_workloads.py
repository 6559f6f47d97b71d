"""Production defaults from the platform review (issue 25): pods that a chart bump does not restart,
bounded scratch space, storage that can bind, and the image a user builds and pushes themselves
(deploy/build-image.sh, run with a stand-in container engine that records what it is asked)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import helm_python as helm
import pytest
import yaml

from tests.chart.test_chart import (
    CHART,
    CI_NAMES,
    NAMESPACE,
    RELEASE,
    REPO,
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
        chart.render(
            {"topology": "multiNode", "persistence": {"accessModes": ["ReadWriteMany"]}},
            name=RELEASE,
            namespace=NAMESPACE,
        )
    # Named, or the user's own claim (whose class the chart cannot see), it renders.
    chart.render(
        {
            "topology": "multiNode",
            "persistence": {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs-client"},
        },
        name=RELEASE,
        namespace=NAMESPACE,
    )
    chart.render(
        {
            "topology": "multiNode",
            "persistence": {"accessModes": ["ReadWriteMany"], "existingClaim": "shared"},
        },
        name=RELEASE,
        namespace=NAMESPACE,
    )


# --- the image: built and pushed by the user, to a registry they name ---------------------------------------

BUILD_IMAGE = REPO / "deploy" / "build-image.sh"


def build_image(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    """Run the script with a stand-in container engine that records each call it gets."""
    calls = tmp_path / "calls"
    engine = tmp_path / "engine"
    engine.write_text(f'#!/bin/sh\nprintf "%s\\037" "$@" >> {calls}\necho >> {calls}\n')
    engine.chmod(0o755)
    env = {**os.environ, "CONTAINER_ENGINE": str(engine)}
    done = subprocess.run(
        ["bash", str(BUILD_IMAGE), *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    recorded = calls.read_text().splitlines() if calls.exists() else []
    return done, [line.rstrip("\x1f").split("\x1f") for line in recorded]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "no target image given"),
        (("--push",), "no target image given"),
        (("ghcr.io/acme/ragdown",), "has no tag"),
        (("localhost:5000/ragdown",), "has no tag"),
        (("ragdown:dev", "--push"), "names no registry"),
        (("ghcr.io/Acme/ragdown:1",), "not a valid image name"),
        (("ghcr.io/acme/ragdown:1", "--pussh"), "unknown option --pussh"),
        (("ghcr.io/acme/ragdown@sha256:" + "0" * 64,), "has a digest"),
        (("a/b:1", "c/d:2"), "one target only"),
    ],
    ids=["none", "push-only", "no-tag", "port-no-tag", "no-registry-push", "upper", "typo", "digest", "two"],
)
def test_build_image_refuses_a_bad_target_in_one_line(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    done, calls = build_image(tmp_path, *args)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("build-image: ")
    assert message in line
    assert calls == []  # nothing built, nothing pushed


def test_build_image_builds_the_dockerfile_and_pushes_where_told(tmp_path: Path) -> None:
    target = "registry.example.com:5000/team/ragdown:0.1.0"
    done, calls = build_image(tmp_path, target, "--push", "--", "--build-arg", "BAKE_EMBEDDERS=bge-small")
    assert done.returncode == 0, done.stderr
    assert calls == [
        [
            "build",
            "-t",
            target,
            "-f",
            str(REPO / "Dockerfile"),
            "--build-arg",
            "BAKE_EMBEDDERS=bge-small",
            str(REPO),
        ],
        ["push", target],
    ]
    # The values that pull it, split the way the chart's image.registry/repository/tag are.
    expected = (
        "--set image.registry=registry.example.com:5000/team"
        " --set image.repository=ragdown --set image.tag=0.1.0"
    )
    assert expected in done.stdout
    # A local build (kind load) needs no registry and pushes nothing.
    local = tmp_path / "local"
    local.mkdir()
    done, calls = build_image(local, "ragdown:dev")
    assert done.returncode == 0, done.stderr
    assert [call[0] for call in calls] == ["build"]


def test_the_default_image_is_said_to_be_built_and_pushed_first(default: Rendered, render: Render) -> None:
    """ragdown:<appVersion> is Docker Hub's library/ragdown: values.yaml opens with it, NOTES warns."""
    values_text = (CHART / "values.yaml").read_text(encoding="utf-8")
    head = values_text[: values_text.index("\nimage:")]
    assert "deploy/build-image.sh" in head
    assert "image.registry" in head
    assert "library/ragdown" in head
    assert "deploy/build-image.sh" in default.notes
    assert "docker.io/library/ragdown" in default.notes
    pulled = render({"image": {"registry": "ghcr.io/acme"}}).notes
    assert "build-image.sh" not in pulled
    assert "build-image.sh" not in render({"image": {"repository": "acme/ragdown"}}).notes
