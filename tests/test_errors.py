"""Each error tree is what its drawing says, and is defined in one place (docs/design.md#errors): every
class of ragdown's lives in ragdown/errors.py, drawn in its docstring, and the operator's in
ragdown_operator/errors.py; a refusal says its status by its class; the web UI's codes.js is made from
`errors.Code`."""

from __future__ import annotations

import ast
import builtins
import pickle
import re
from pathlib import Path
from types import ModuleType

import pytest

from ragdown import errors
from ragdown.codes_js import CODES_JS, codes_js
from ragdown.errors import (
    BadRequestError,
    Code,
    ConflictError,
    ForbiddenError,
    NotAFileError,
    NotAFolderError,
    NotFoundError,
    RagdownError,
    Refusal,
    TooLargeError,
    Unauthorized,
)
from ragdown_operator import errors as operator_errors
from ragdown_operator.errors import OperatorError
from tests.conftest import parse_source

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "server" / "ragdown"
OPERATOR = REPO / "operator" / "ragdown_operator"
# A line of a drawing: the tree's glyphs, then a class name.
BRANCH = re.compile(r"^(?P<lead>[ │├└─]*)(?P<name>[A-Z]\w*)\b")
NAMED_STATUSES = (BadRequestError, ForbiddenError, NotFoundError, ConflictError, TooLargeError)
BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}

Edges = set[tuple[str, str]]


def drawn(doc: str | None, root: str) -> Edges:
    """The (parent, child) pairs of the tree drawn in `doc` from the line holding only `root`; each
    level is indented by four characters (`├── `, `│   `)."""
    lines = (doc or "").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == root)
    indent = len(lines[start]) - len(lines[start].lstrip())
    path, edges = [root], set()
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        match = BRANCH.match(line[indent:])
        assert match, f"not a line of the tree: {line!r}"
        depth = len(match["lead"]) // 4
        del path[depth:]
        edges.add((path[-1], match["name"]))
        path.append(match["name"])
    return edges


def subclassed(root: type[BaseException]) -> Edges:
    """The (parent, child) pairs of the classes below `root`, as Python knows them."""
    edges: Edges = set()
    for child in root.__subclasses__():
        edges.add((root.__name__, child.__name__))
        edges |= subclassed(child)
    return edges


def below(root: type[BaseException]) -> list[type[BaseException]]:
    return [child for sub in root.__subclasses__() for child in (sub, *below(sub))]


@pytest.mark.parametrize(
    ("module", "root"), [(errors, RagdownError), (operator_errors, OperatorError)], ids=["server", "operator"]
)
def test_the_drawing_is_the_tree(module: ModuleType, root: type[BaseException]) -> None:
    assert drawn(module.__doc__, root.__name__) == subclassed(root), (
        f"{module.__name__}'s drawing differs from its classes: draw a new class where it derives"
    )
    assert {cls.__module__ for cls in below(root)} == {root.__module__}


def exception_classes(package: Path, home: Path, tree: set[str]) -> list[str]:
    """Classes under `package`, outside `home`, that derive from an exception (by the names of their
    bases). A private one (`_Name`) is a module's own signal, caught in that module and never shown."""
    known = BUILTIN_EXCEPTIONS | tree
    found = []
    for path in sorted(package.rglob("*.py")):
        if path == home:
            continue
        for node in ast.walk(parse_source(path)):
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            bases = [
                b.id if isinstance(b, ast.Name) else b.attr
                for b in node.bases
                if isinstance(b, ast.Name | ast.Attribute)
            ]
            if any(base in known or base.endswith(("Error", "Exception")) for base in bases):
                found.append(f"{path.relative_to(REPO)}: {node.name}")
    return found


def test_every_exception_class_lives_in_its_errors_module() -> None:
    server_tree = {RagdownError.__name__, *(cls.__name__ for cls in below(RagdownError))}
    assert exception_classes(SERVER, SERVER / "errors.py", server_tree) == []
    operator_tree = {OperatorError.__name__, *(cls.__name__ for cls in below(OperatorError))}
    assert exception_classes(OPERATOR, OPERATOR / "errors.py", operator_tree) == []


def literal_status(call: ast.Call) -> int | None:
    """The status a `Refusal(<status>, …)` call writes out, if it does."""
    if not (isinstance(call.func, ast.Name) and call.func.id == Refusal.__name__ and call.args):
        return None
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, int) else None


def literal_statuses(package: Path) -> list[str]:
    """`Refusal(<status>, …)` calls whose status has a class of its own."""
    named = {cls.status: cls.__name__ for cls in NAMED_STATUSES}
    found = []
    for path in sorted(package.rglob("*.py")):
        calls = [node for node in ast.walk(parse_source(path)) if isinstance(node, ast.Call)]
        for call in calls:
            status = literal_status(call)
            if status in named:
                found.append(f"{path.relative_to(REPO)}:{call.lineno}: {named[status]}(message)")
    return found


def test_a_refusal_says_its_status_by_its_class() -> None:
    assert literal_statuses(SERVER) == []


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (BadRequestError("x"), 400),
        (NotAFolderError("x"), 400),
        (Unauthorized(), 401),
        (ForbiddenError("x"), 403),
        (NotFoundError("x"), 404),
        (ConflictError("x", Code.CHANGED), 409),
        (NotAFileError("x"), 409),
        (TooLargeError("x"), 413),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, RagdownError) else str(value),
)
def test_a_named_refusal_carries_its_status_across_processes(error: Refusal, status: int) -> None:
    assert isinstance(error, Refusal)
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.status, copy.message, copy.code) == (
        type(error),
        status,
        error.message,
        error.code,
    )


def test_a_code_reads_as_the_word_clients_branch_on() -> None:
    error = ConflictError("x was deleted since it was opened", Code.CHANGED)
    assert error.code == "changed"
    assert repr(error) == "ConflictError(409, 'x was deleted since it was opened', code='changed')"
    assert all(code.value == code.name.lower() for code in Code)


def test_an_unauthorized_answer_says_whether_the_token_was_missing() -> None:
    assert str(Unauthorized()) == "Unauthorized: send Authorization: Bearer <token>"
    assert Unauthorized().challenge == 'Bearer realm="ragdown"'
    unknown = Unauthorized(missing=False)
    assert str(unknown).startswith("Unauthorized: the bearer token is not one this server knows")
    assert unknown.challenge == (
        'Bearer realm="ragdown", error="invalid_token", error_description="the bearer token is not one '
        'this server knows (check it, and that it is for this route)"'
    )
    # The reason is a quoted parameter: a quote or a backslash in it cannot end it early.
    odd = Unauthorized('say "hi" \\ there', missing=False)
    assert odd.challenge.endswith("error_description=\"say 'hi' / there\"")


def test_the_web_ui_codes_are_made_from_the_servers() -> None:
    assert CODES_JS.read_text(encoding="utf-8") == codes_js(), (
        "web/static/codes.js differs from ragdown.errors.Code: run `python -m ragdown.codes_js`"
    )
    for code in Code:
        assert f'  {code.name}: "{code}",' in codes_js()
