"""How an error of the tree (ragdown/errors.py) is answered over HTTP: `{"error", "code"?}` with its
status, and the headers that go with it (a Bearer challenge on 401, Retry-After when overloaded)."""

from __future__ import annotations

from ragdown.errors import RETRY_AFTER_S, OverloadedError, RagdownError, Unauthorized

Reply = tuple[int, dict[str, str], list[tuple[str, str]]]


def error_reply(error: RagdownError) -> Reply:
    body = {"error": error.message}
    if error.code:
        body["code"] = error.code
    headers: list[tuple[str, str]] = []
    if isinstance(error, Unauthorized):
        headers.append(("WWW-Authenticate", error.challenge))
    if isinstance(error, OverloadedError):
        headers.append(("Retry-After", str(RETRY_AFTER_S)))
    return error.status, body, headers
