"""What every `/api` route shares (docs/tools.md#folder-routes): the admin check, the engine a change
may go to, and request bodies read within a bound and checked against a body model."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from ragdown.engine import Engine
from ragdown.errors import BadRequestError, Code, ConflictError, ForbiddenError, TooLargeError, plain
from ragdown.serving.auth import unauthorized
from ragdown.serving.sessions import Sessions, session_of
from ragdown.serving.tool_server import where
from ragdown.settings import ServerSettings

MAX_JSON_BODY = 1024 * 1024
READ_ONLY = "The server is read-only (RAGDOWN_READ_ONLY)"
NOT_ADMIN = "this token is an agent's, for /mcp only: /api needs the admin token (RAGDOWN_ADMIN_TOKEN)"
ADMIN_OFF = "the admin API is off: set RAGDOWN_ADMIN_TOKEN on the server and send that token to /api"

Body = TypeVar("Body", bound=BaseModel)


class ApiAccess:
    """`current()` is the serving engine (it changes when a reader takes over as primary); `admin`
    says whether a request's Authorization is the admin's (None: no token this server knows);
    `sessions` are the web UI's signed-in browsers, whose cookie stands for the admin token."""

    def __init__(
        self,
        current: Callable[[], Engine],
        settings: ServerSettings,
        admin: Callable[[str | None], bool | None],
        is_reader: Callable[[], bool],
        sessions: Sessions | None = None,
    ) -> None:
        self.current = current
        self.settings = settings
        self.admin = admin
        self.is_reader = is_reader
        self.sessions = sessions if sessions is not None else Sessions()

    def authorised(self, request: Request) -> None:
        """A router dependency: the admin token, or a live session cookie of the web UI used from
        its own page (an Authorization header wins over a cookie); else 401 / 403 saying what was
        wrong."""
        header = request.headers.get("authorization")
        if header is None and not self.settings.secure_local_net and session_of(request, self.sessions):
            return
        who = self.admin(header)
        if who is None:
            raise unauthorized(request.headers.get("authorization"))
        if not who:
            raise ForbiddenError(NOT_ADMIN if self.settings.admin_token else ADMIN_OFF)

    def primary(self) -> Engine:
        """The engine of a server that may change things: the primary's."""
        if self.is_reader():
            raise ConflictError(
                "this server is a reader: change folders on the primary (the indexer)", Code.READER
            )
        return self.current()

    def writable(self) -> Engine:
        """The primary's engine, on a server that is not read-only."""
        engine = self.primary()
        if self.settings.read_only:
            raise ForbiddenError(READ_ONLY)
        return engine


def _json_kind(value: object) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else "a number"


async def read_json_body(request: Request, limit: int = MAX_JSON_BODY) -> dict[str, Any]:
    """The request's JSON object: an empty body reads as {}; a body over `limit` bytes, not JSON, or
    JSON that is not an object is refused. The bound holds while reading, whatever the headers say."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLargeError("Body too large")
    raw = b""
    async for part in request.stream():
        raw += part
        if len(raw) > limit:
            raise TooLargeError("Body too large")
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):  # RecursionError: [[[[…
        raise BadRequestError("Body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRequestError(
            f'Body must be a JSON object such as {{"title": "Ops"}}, got {_json_kind(data)}'
        )
    return data


def body_of(model: type[Body], data: dict[str, Any]) -> Body:
    """`data` as the route's body model, or 400 naming each field in plain words
    (`text is required; overwrite must be true or false, got 'yes'`)."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = [f"{where(problem['loc'])} {plain(problem)}" for problem in error.errors()]
        raise BadRequestError("; ".join(problems)) from None
