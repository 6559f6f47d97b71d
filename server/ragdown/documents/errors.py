"""Refusals: requests that were understood and are turned down, with the HTTP status that says why."""

from __future__ import annotations


class Refusal(Exception):  # noqa: N818 - the name the whole project uses for a refusal
    """A bad path, a missing document, a name already taken, a stale hash.

    The HTTP layer answers with `status`; an MCP tool reports `str(refusal)`, the message, as its
    error. `code` is a word a client can branch on where the status alone is ambiguous: `changed`.
    """

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(status, message, code)  # all three, so a pickled refusal can be rebuilt
        self.status = status
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        code = f", code={self.code!r}" if self.code else ""
        return f"Refusal({self.status}, {self.message!r}{code})"
