"""Every error ragdown means to show to a person or an agent derives from `RagdownError`: a message
saying what was wrong and what to do, the HTTP status that fits it, and an optional `code` a client
can branch on. Each front end handles the tree once: the CLI prints the message and exits 2, an MCP
tool answers an `isError` result with it, the HTTP app a JSON `{"error", "code"?}` with the status.
Anything else is a bug, logged with its traceback and answered as such.

    RagdownError
    ├── Refusal                    a request understood and turned down (400 … 429)
    │   ├── NotAFolderError        a folder on a path is a file or a symlink (files.py)
    │   ├── NotAFileError          a name that is not a regular file (files.py)
    │   ├── ScopeError             a path_prefix that leaves the scope (folders/scope.py)
    │   └── FilterError            a search filter that is not one (search/filters.py)
    ├── UnavailableError           the server cannot do it now; retry later (503)
    │   ├── OverloadedError        too many tool calls at once (serving/admission.py)
    │   ├── PrimaryUnreachableError  a reader's primary does not answer (roles/client.py)
    │   ├── IndexNotReadyError     the index does not exist yet or needs a rebuild (indexing/store.py)
    │   └── EmbedderError          a model that cannot load, an endpoint that fails (embedders/base.py)
    └── ConfigError                a setting, folder or data dir that cannot work (400)
        ├── FolderNotFoundError    the docs folder is missing or not a folder (folders/locations.py)
        ├── DataDirError           the data dir cannot hold an index (folders/locations.py)
        └── CliError               a command line the CLI refuses (cli.py)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _rebuild(cls: type[RagdownError], message: str, status: int, code: str | None) -> RagdownError:
    """Unpickle any error of the tree, whatever its constructor takes (errors cross processes)."""
    error = cls.__new__(cls)
    RagdownError.__init__(error, message, status=status, code=code)
    return error


class RagdownError(Exception):
    """An error meant for whoever asked: `str()` is the message, `status` the HTTP status."""

    status: int = 500

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status if status is not None else type(self).status
        self.code = code

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        code = f", code={self.code!r}" if self.code else ""
        return f"{type(self).__name__}({self.status}, {self.message!r}{code})"

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (type(self), self.message, self.status, self.code)


class Refusal(RagdownError):  # noqa: N818 - the name the whole project uses for a refusal
    """A bad path, a missing document, a name already taken, a stale hash.

    `code` is a word a client can branch on where the status alone is ambiguous: `changed`,
    `managed`, `not_managed`, `not_created`, `reader`.
    """

    status = 400

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message, status=status, code=code)


class UnavailableError(RagdownError):
    """The server cannot do this now; the same request may work in a moment."""

    status = 503


class ConfigError(RagdownError):
    """A setting, a folder or a data dir that cannot work as given."""

    status = 400


SHOWN_INPUT = 80  # characters of a refused value a message repeats


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_INPUT else f"{text[:SHOWN_INPUT]}… ({len(text):,} characters)"


def plain(problem: Mapping[str, Any]) -> str:
    """One pydantic validation problem (`ValidationError.errors()[i]`) in plain words, without the
    library's wording: `must be true or false, got 'maybe'`."""
    kind = str(problem.get("type", ""))
    given = problem.get("input")
    got = f", got {_cut(repr(given))}" if given is not None and not isinstance(given, dict | list) else ""
    context = problem.get("ctx") or {}
    if kind == "string_too_long":
        return f"must be at most {context.get('max_length')} characters, got {len(str(given)):,}"
    if kind == "string_too_short":
        least = context.get("min_length")
        return f"must be at least {least} character{'' if least == 1 else 's'}{got}"
    if kind.startswith("bool"):
        return f"must be true or false{got}"
    if kind.startswith("int") or kind == "int_from_float":
        return f"must be a whole number{got}"
    if kind.startswith("float"):
        return f"must be a number{got}"
    if kind.startswith("string"):
        return f"must be text{got}"
    if kind.startswith(("list", "tuple")):
        return f"must be a list{got}"
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not an argument this takes"
    if kind in ("greater_than_equal", "greater_than"):
        return f"must be at least {context.get('ge', context.get('gt'))}{got}"
    if kind in ("less_than_equal", "less_than"):
        return f"must be at most {context.get('le', context.get('lt'))}{got}"
    if kind == "literal_error":
        return f"must be one of {context.get('expected')}{got}"
    return f"{problem.get('msg', 'is not valid')}{got}"
