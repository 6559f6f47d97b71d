"""ruff and mypy are part of the test run: style and types are checked wherever the suite runs. Also the
layout rules: plain folders for the two packages, and a server that needs nothing of the operator extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import parse_source

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


def test_the_server_never_imports_the_operator_extra() -> None:
    """`pip install ragdown` leaves kopf and aiohttp out (the `operator` extra), so no module of the
    server may import them, at any depth of a function."""
    import ast

    extra = {"kopf", "aiohttp"}
    found = []
    for path in (REPO / "server" / "ragdown").rglob("*.py"):
        for node in ast.walk(parse_source(path)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found += [f"{path.relative_to(REPO)}: {name}" for name in names if name.split(".")[0] in extra]
    assert found == []


def test_the_operator_without_its_extra_says_how_to_install_it() -> None:
    # kopf made unimportable in the child, as on a laptop install without the extra.
    script = "import sys; sys.modules['kopf'] = None; from ragdown_operator.main import main; main([])"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "pip install 'ragdown[operator]'" in result.stderr
    assert "Traceback" not in result.stderr
