"""The architecture is checked, not only drawn: `lint-imports` holds the contracts in pyproject.toml's
`[tool.importlinter]` (the layers of docs/design.md#layering, the operator's few imports, no cycles)
over this checkout's code, and fails on an import that breaks one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` over the packages under `root`/server and `root`/operator (not an installed copy)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "server"), str(root / "operator")]))
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(REPO / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_import_contracts_hold() -> None:
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers(tmp_path: Path) -> None:
    """The contracts see the code they are run on: documents importing the engine is refused."""
    for part in ("server", "operator"):
        shutil.copytree(REPO / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__", "static"))
    lines = tmp_path / "server/ragdown/documents/lines.py"
    upward = "\nimport ragdown.engine  # noqa: E402\n"
    lines.write_text(lines.read_text(encoding="utf-8") + upward, encoding="utf-8")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "ragdown.documents is not allowed to import ragdown.engine" in result.stdout
    assert "ragdown.documents.lines -> ragdown.engine" in result.stdout
