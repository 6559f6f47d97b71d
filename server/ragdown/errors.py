"""Every error ragdown means to show to a person or an agent derives from `RagdownError`: a message
saying what was wrong and what to do, the HTTP status that fits it, and an optional `Code` a client
can branch on. Each front end handles the tree once: the CLI prints the message and exits 2, an MCP
tool answers an `isError` result with it, the HTTP app a JSON `{"error", "code"?}` with the status.
Anything else is a bug, logged with its traceback and answered as such.

Every class of the tree lives here, and this module imports nothing of ragdown, so any layer may
raise any of them (docs/design.md#errors). tests/test_errors.py holds this drawing to the classes:

    RagdownError
    ├── Refusal                    a request understood and turned down, with its status (400 … 429)
    │   ├── BadRequestError        400: an argument that cannot work as given
    │   │   ├── NotAFolderError    a folder on a path is a file or a symlink
    │   │   ├── ScopeError         a path_prefix that leaves the scope
    │   │   └── FilterError        a search filter that is not one
    │   ├── Unauthorized           401: no bearer token, or one this server does not know
    │   ├── ForbiddenError         403: a token or a folder that may not do this
    │   ├── NotFoundError          404: no such document, folder or route
    │   ├── ConflictError          409: the state on disk or in the folder settings says no
    │   │   └── NotAFileError      a name that is not a regular file
    │   └── TooLargeError          413: a body or a document over its bound
    ├── UnavailableError           the server cannot do it now; retry later (503)
    │   ├── OverloadedError        too many tool calls at once
    │   ├── PrimaryUnreachableError  a reader's primary does not answer
    │   ├── IndexNotReadyError     the index does not exist yet or needs a rebuild
    │   ├── IndexStorageError      the object store holding the index fails or refuses
    │   └── EmbedderError          a model that cannot load, an endpoint that fails
    └── ConfigError                a setting, folder or data dir that cannot work (400)
        ├── FolderNotFoundError    the docs folder is missing or not a folder
        ├── DataDirError           the data dir cannot hold an index
        ├── IndexLocationError     a RAGDOWN_INDEX_URI that cannot name an index
        └── CliError               a command line the CLI refuses

The codes clients branch on are `Code`'s members, defined here only: the operator compares with them
and the web UI's `codes.js` is made from them (`python -m ragdown.codes_js`).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum, unique
from typing import Any


@unique
class Code(StrEnum):
    """A word an error answer carries beside its message (`{"error", "code"}`) where the status alone
    is ambiguous; clients branch on it (docs/documents.md#write, docs/tools.md#folder-routes)."""

    CHANGED = "changed"  # the document changed or went away since it was read: read it again
    MANAGED = "managed"  # the folder belongs to another RagdownFolder (or manager)
    NOT_MANAGED = "not_managed"  # released by a manager that does not hold it: nothing changed
    NOT_CREATED = "not_created"  # an update of a managed folder that was never created
    READER = "reader"  # folders are changed on the primary, and this server is a reader
    OVERLOADED = "overloaded"  # the tool-call line is full: retry after RETRY_AFTER_S


# What an overloaded answer tells the caller to wait, and where a tool result's `_meta` says it.
RETRY_AFTER_S = 1
RETRY_META = "ragdown/retryAfterSeconds"


def _rebuild(cls: type[RagdownError], message: str, status: int, code: Code | None) -> RagdownError:
    """Unpickle any error of the tree, whatever its constructor takes (errors cross processes)."""
    error = cls.__new__(cls)
    RagdownError.__init__(error, message, status=status, code=code)
    return error


class RagdownError(Exception):
    """An error meant for whoever asked: `str()` is the message, `status` the HTTP status."""

    status: int = 500

    def __init__(self, message: str, *, status: int | None = None, code: Code | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status if status is not None else type(self).status
        self.code = code

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        code = f", code={str(self.code)!r}" if self.code else ""
        return f"{type(self).__name__}({self.status}, {self.message!r}{code})"

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (type(self), self.message, self.status, self.code)


class Refusal(RagdownError):  # noqa: N818 - the name the whole project uses for a refusal
    """A bad path, a missing document, a name already taken, a stale hash. The subclasses below say
    their status once (`NotFoundError(message)`); `Refusal(status, message)` is for the rare other."""

    status = 400

    def __init__(self, status: int, message: str, code: Code | None = None) -> None:
        super().__init__(message, status=status, code=code)


class BadRequestError(Refusal):
    status = 400

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(type(self).status, message, code)


class NotAFolderError(BadRequestError):
    """A directory on the way is a symlink or a file."""


class ScopeError(BadRequestError, ValueError):
    """A path_prefix that would leave the scope."""


class FilterError(BadRequestError, ValueError):
    """A filter value that cannot match anything the way it was written."""


class Unauthorized(Refusal):
    """401, saying whether the token was `missing` or not one this server knows; the reply carries
    `WWW-Authenticate: Bearer` (without it standard clients assume OAuth and say something else).
    The MCP routes answer a wrong token 403 instead (serving/auth.unknown_token)."""

    status = 401
    missing = True

    def __init__(self, reason: str | None = None, *, missing: bool = True) -> None:
        self.missing = missing
        if reason is None:
            reason = (
                "send Authorization: Bearer <token>"
                if missing
                else "the bearer token is not one this server knows (check it, and that it is for this route)"
            )
        super().__init__(type(self).status, f"Unauthorized: {reason}")

    @property
    def challenge(self) -> str:
        """RFC 6750's challenge: no error for a request without a token; for a token the server does
        not know, `invalid_token` and the reason as `error_description` (quotes and backslashes
        dropped, as the parameter cannot hold them unescaped). Never `resource_metadata` or `scope`,
        which would tell a client that OAuth is on offer (docs/security.md#bearer-tokens-not-oauth)."""
        if self.missing:
            return 'Bearer realm="ragdown"'
        reason = self.message.removeprefix("Unauthorized: ").replace('"', "'").replace("\\", "/")
        return f'Bearer realm="ragdown", error="invalid_token", error_description="{reason}"'


class ForbiddenError(Refusal):
    status = 403

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(type(self).status, message, code)


class NotFoundError(Refusal):
    status = 404

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(type(self).status, message, code)


class ConflictError(Refusal):
    status = 409

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(type(self).status, message, code)


class NotAFileError(ConflictError):
    """The name is there but is not a regular file (a folder, a symlink, a device)."""


class TooLargeError(Refusal):
    status = 413

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(type(self).status, message, code)


class UnavailableError(RagdownError):
    """The server cannot do this now; the same request may work in a moment."""

    status = 503


class OverloadedError(UnavailableError):
    """Every slot is busy and the waiting line is full."""

    def __init__(self, waiting: int) -> None:
        super().__init__(
            f"ragdown is overloaded ({waiting} calls already waiting); retry in {RETRY_AFTER_S} s",
            code=Code.OVERLOADED,
        )

    @property
    def meta(self) -> dict[str, int]:
        """The hint as a tool result's `_meta` carries it."""
        return {RETRY_META: RETRY_AFTER_S}


class PrimaryUnreachableError(UnavailableError):
    """A reader's write or sync that the primary at `url` did not take. The reason is the text of a
    RuntimeError the client made, and only the type of any other (a transport error's text may name
    a local socket's path, the server's own business: docs/security.md); a URL is a name."""

    def __init__(self, url: str, error: Exception) -> None:
        where = "" if url.startswith("unix://") else f" ({url})"
        reason = str(error) if isinstance(error, RuntimeError) else type(error).__name__
        super().__init__(
            f"the primary{where} cannot be reached, so nothing was written; retry in a moment ({reason})"
        )


class IndexNotReadyError(UnavailableError, RuntimeError):
    """A reader found no usable index; the primary has to build it first."""


class IndexStorageError(UnavailableError):
    """The object store could not be reached or refused a request."""


class EmbedderError(UnavailableError, RuntimeError):
    """A model that cannot be loaded or an endpoint that cannot embed; the message says what to do."""


class ConfigError(RagdownError):
    """A setting, a folder or a data dir that cannot work as given."""

    status = 400


class FolderNotFoundError(ConfigError, ValueError):
    """The docs folder does not exist or is not a directory."""


class DataDirError(ConfigError, ValueError):
    """The data dir cannot hold an index (a file, or inside the folder it indexes)."""


class IndexLocationError(ConfigError, ValueError):
    """A RAGDOWN_INDEX_URI that cannot name an index; the message says what to give instead."""


class CliError(ConfigError):
    """A refusal to print as one line on stderr, exiting 2."""


SHOWN_INPUT = 80  # characters of a refused value a message repeats


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_INPUT else f"{text[:SHOWN_INPUT]}… ({len(text):,} characters)"


# Pydantic's kinds of problem by how their names start, in plain words; a refused value follows.
_KIND_WORDS = (
    ("bool", "must be true or false"),
    ("int", "must be a whole number"),
    ("float", "must be a number"),
    ("string", "must be text"),
    ("list", "must be a list"),
    ("tuple", "must be a list"),
)
# Kinds said without the value.
_KIND_ALONE = {"missing": "is required", "extra_forbidden": "is not an argument this takes"}


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
    if kind in _KIND_ALONE:
        return _KIND_ALONE[kind]
    words = next((words for start, words in _KIND_WORDS if kind.startswith(start)), None)
    return f"{words or _bound_words(kind, context) or problem.get('msg', 'is not valid')}{got}"


def _bound_words(kind: str, context: Mapping[str, Any]) -> str | None:
    """A value outside its bounds or its list of choices, in plain words."""
    if kind in ("greater_than_equal", "greater_than"):
        return f"must be at least {context.get('ge', context.get('gt'))}"
    if kind in ("less_than_equal", "less_than"):
        return f"must be at most {context.get('le', context.get('lt'))}"
    if kind == "literal_error":
        return f"must be one of {context.get('expected')}"
    return None
