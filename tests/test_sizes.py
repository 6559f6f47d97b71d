"""Small parts, held by CI: no module of the server or the operator over 400 lines, no function over
60 (decorators aside, a nested function counted in its parent too). ruff's C90 bounds their
complexity (pyproject.toml); this bounds their length, which C90 does not see."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import parse_source

REPO = Path(__file__).resolve().parents[1]
ROOTS = [REPO / "server" / "ragdown", REPO / "operator" / "ragdown_operator"]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def sources() -> list[Path]:
    return sorted(path for root in ROOTS for path in root.rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    long = {}
    for path in sources():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            long[str(path.relative_to(REPO))] = lines
    assert long == {}


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in sources():
        for node in ast.walk(parse_source(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(REPO)}:{node.lineno} {node.name}"] = lines
    assert long == {}
