"""Biome lints the web UI's ES modules (server/ragdown/web/static/*.js) with the repository's
biome.json (docs/web.md#the-scripts): any finding fails.

Biome is not a Python dependency of the project: CI installs it from npm, pinned, into a cache outside
the repository (.ci/run: `npm install --prefix ~/.cache/ragdown-biome/<version>`), and sets
RAGDOWN_REQUIRE_JS_LINT so that the lint must run there. Elsewhere a missing Biome (or node, which
runs it) skips the test and says how to get it; RAGDOWN_BIOME names another binary of that version.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "server" / "ragdown" / "web" / "static"
CONFIG = REPO / "biome.json"
# The version .ci/run installs; biome.json's `$schema` names the same one.
BIOME_VERSION = "2.6.9"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
CACHED = CACHE / "ragdown-biome" / BIOME_VERSION / "node_modules" / ".bin" / "biome"
INSTALL = f"npm install --prefix {CACHED.parents[2]} @biomejs/biome@{BIOME_VERSION}"


def biome() -> str:
    """Biome's path, or a skip (a failure where CI requires the lint) saying how to get it."""
    found = os.environ.get("RAGDOWN_BIOME") or (str(CACHED) if CACHED.is_file() else None)
    missing = None
    if found is None:
        missing = f"Biome {BIOME_VERSION} not found (RAGDOWN_BIOME or {CACHED}): {INSTALL}"
    elif shutil.which("node") is None and not os.environ.get("RAGDOWN_BIOME"):
        missing = "node is not installed (apt-get install nodejs npm): it runs Biome's launcher"
    if missing is None:
        return str(found)
    if os.environ.get("RAGDOWN_REQUIRE_JS_LINT"):
        pytest.fail(missing + "; RAGDOWN_REQUIRE_JS_LINT is set, so CI must run the JavaScript lint")
    pytest.skip(missing)


def test_one_version_is_pinned_everywhere() -> None:
    schema = json.loads(CONFIG.read_text(encoding="utf-8"))["$schema"]
    assert f"/{BIOME_VERSION}/" in schema
    assert f"@biomejs/biome@{BIOME_VERSION}" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_modules_lint_clean() -> None:
    binary = biome()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    assert BIOME_VERSION in version, f"{binary} is {version.strip()}; biome.json is for {BIOME_VERSION}"
    result = subprocess.run(
        [binary, "lint", "--error-on-warnings", "--max-diagnostics=none", "--colors=off"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    # Every module was looked at (biome.json's `files.includes` still names them), and the config.
    modules = len(list(STATIC.glob("*.js")))
    checked = re.search(r"Checked (\d+) files?", report)
    assert checked is not None, report
    assert int(checked.group(1)) == modules + 1, report
