"""checkov and trivy over every render of charts/ragdown/ci/*-values.yaml (docs/cluster.md#chart-lint).

Each render is written out as the manifests Helm would apply (NOTES.txt aside) and both linters run
over them with their own configuration in tests/chart/lint/: a check they skip or ignore is one the
chart stands by for the reason docs/cluster.md gives; any other finding fails. The linters are not
Python dependencies of the project: CI installs checkov into a venv of its own and builds trivy from
its Go module, both cached outside the repository (.ci/run), and sets RAGDOWN_REQUIRE_CHART_LINT so
that they must run there. Elsewhere a missing linter skips its test and says how to get it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from tests.chart.test_chart import CI_FILES, NAMESPACE, RELEASE, REPO

LINT = Path(__file__).resolve().parent / "lint"
CHECKOV_CONFIG = LINT / "checkov.yaml"
TRIVY_IGNORE = LINT / "trivyignore.yaml"
DOCS = REPO / "docs" / "cluster.md"
# The versions .ci/run installs; RAGDOWN_CHECKOV / RAGDOWN_TRIVY name other binaries.
CHECKOV_VERSION = "3.3.30"
TRIVY_VERSION = "v0.74.0"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def linter(variable: str, cached: Path, name: str, how: str) -> str:
    """The linter's path, or a skip (a failure where CI requires the lint) saying how to get it."""
    found = os.environ.get(variable) or (str(cached) if cached.is_file() else None) or shutil.which(name)
    if found:
        return found
    message = f"{name} not found ({variable}, {cached} or PATH): {how}"
    if os.environ.get("RAGDOWN_REQUIRE_CHART_LINT"):
        pytest.fail(message + "; RAGDOWN_REQUIRE_CHART_LINT is set, so CI must run the chart lint")
    pytest.skip(message)


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file per ci values file: every object of that render, as a multi-document YAML."""
    out = tmp_path_factory.mktemp("renders")
    with helm.Chart.load(REPO / "charts" / "ragdown") as chart:
        for path in CI_FILES:
            values = yaml.safe_load(path.read_text()) or {}
            manifests = chart.render(values, name=RELEASE, namespace=NAMESPACE)
            documents = [text for name, text in sorted(manifests.items()) if not name.endswith("NOTES.txt")]
            (out / path.name.replace("-values", "")).write_text("\n---\n".join(documents))
    return out


def explained() -> set[str]:
    """The check ids docs/cluster.md#chart-lint explains (a table row each: `| `ID` | ...`)."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("### Chart lint") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    return set(re.findall(r"^\| `([A-Z0-9_-]+)` \|", section, flags=re.M))


def checkov_skips() -> list[str]:
    return list(yaml.safe_load(CHECKOV_CONFIG.read_text())["skip-check"])


def trivy_ignores() -> list[str]:
    return [entry["id"] for entry in yaml.safe_load(TRIVY_IGNORE.read_text())["misconfigurations"]]


def test_every_suppressed_check_is_explained_in_the_docs() -> None:
    skips, ignores = checkov_skips(), trivy_ignores()
    assert len(set(skips)) == len(skips)
    assert len(set(ignores)) == len(ignores)
    for entry in yaml.safe_load(TRIVY_IGNORE.read_text())["misconfigurations"]:
        assert entry.get("statement"), entry["id"]  # the reason, in the linter's own file too
    assert set(skips) | set(ignores) == explained()


@pytest.mark.slow  # checkov over 14 renders: tens of seconds
def test_checkov_finds_nothing_unexplained(renders: Path) -> None:
    checkov = linter(
        "RAGDOWN_CHECKOV",
        CACHE / "ragdown-checkov" / CHECKOV_VERSION / "bin" / "checkov",
        "checkov",
        f"pip install checkov=={CHECKOV_VERSION} (into a venv of its own), as .ci/run does",
    )
    done = subprocess.run(
        [checkov, "--config-file", str(CHECKOV_CONFIG), "-d", str(renders), "-o", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: findings, read below
    reports: Any = json.loads(done.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    failed = [
        f"{f['check_id']} {f['resource']} in {Path(f['file_path']).name}: {f['check_name']}"
        for report in reports
        for f in report["results"]["failed_checks"]
    ]
    assert failed == []
    # Guards the run itself: every render's objects were read and checked.
    summary = reports[0]["summary"]
    assert summary["parsing_errors"] == 0
    assert summary["passed"] > 1000
    assert {Path(f["file_path"]).name for f in reports[0]["results"]["passed_checks"]} == {
        path.name.replace("-values", "") for path in CI_FILES
    }


@pytest.mark.slow  # trivy over 14 renders: seconds, plus its start
def test_trivy_finds_nothing_unexplained(renders: Path, tmp_path: Path) -> None:
    trivy = linter(
        "RAGDOWN_TRIVY",
        CACHE / "ragdown-trivy" / TRIVY_VERSION / "trivy",
        "trivy",
        f"GOEXPERIMENT=jsonv2 go install github.com/aquasecurity/trivy/cmd/trivy@{TRIVY_VERSION} (.ci/run)",
    )
    done = subprocess.run(
        [
            trivy,
            "config",
            "--cache-dir",
            str(tmp_path / "cache"),
            # The checks built into the binary: no download (docs/cluster.md#chart-lint).
            "--skip-check-update",
            "--misconfig-scanners",
            "kubernetes",
            "--ignorefile",
            str(TRIVY_IGNORE),
            "--format",
            "json",
            "--exit-code",
            "0",
            str(renders),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    results = report.get("Results") or []
    failed = [
        f"{m['ID']} in {result['Target']}: {m['Title']} ({m.get('CauseMetadata', {}).get('Resource', '')})"
        for result in results
        for m in result.get("Misconfigurations") or []
        if m["Status"] == "FAIL"
    ]
    assert failed == []
    # Guards the run itself: every render was scanned, with checks that passed.
    assert {result["Target"] for result in results} == {path.name.replace("-values", "") for path in CI_FILES}
    assert sum(result["MisconfSummary"]["Successes"] for result in results) > 500
