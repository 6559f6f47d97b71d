"""ruff and mypy are part of the test run: style and types are checked wherever the suite runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "server", "operator", "tests", "bench"],
        ["ruff", "format", "--check", "server", "operator", "tests", "bench"],
        ["mypy"],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_the_code_is_clean(command: list[str]) -> None:
    result = subprocess.run(
        [str(BIN / command[0]), *command[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_server_and_operator_folders_are_not_packages() -> None:
    """The stdlib has a module named `operator`: these folders only hold packages."""
    assert not (REPO / "server/__init__.py").exists()
    assert not (REPO / "operator/__init__.py").exists()
    import operator

    assert hasattr(operator, "itemgetter")
