"""Who a request is (docs/security.md): the bearer token it sends, and what that token reaches.

Three roles: the admin token (`RAGDOWN_ADMIN_TOKEN`) reaches `/api` and every MCP folder; the agents'
token (`RAGDOWN_TOKEN`) reaches the MCP folders that have no tokens of their own; a folder's own
agent tokens (`tokens` in its `.ragdown.json`, stored as SHA-256) reach that folder only. The
internal token of the primary's listener is checked there (serving/internal.py), never here. Every
comparison is of SHA-256 digests in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from ragdown.errors import ForbiddenError, Unauthorized
from ragdown.folders.registry import Folder, token_digest
from ragdown.settings import ServerSettings

Role = Literal["admin", "agent", "folder"]
# What the agents' token is told at a folder with tokens of its own (docs/security.md#tenants).
OWN_TOKENS_ONLY = (
    "this folder takes its own tokens only, and the agents' token (RAGDOWN_TOKEN) is not one of them: "
    "send one of the folder's tokens (its `tokens`, given by whoever runs the server) or the admin token"
)
# What the MCP routes tell a bearer token that no folder takes (docs/security.md#bearer-tokens-not-oauth).
UNKNOWN_TOKEN = (
    "the bearer token is not one this server knows (ragdown has no OAuth to sign in with): send "
    "Authorization: Bearer <token> with the agents' token (RAGDOWN_TOKEN), a folder's own token, "
    "or the admin token"
)


def unauthorized(header: str | None) -> Unauthorized:
    """The 401 for a request whose `Authorization` header carried no bearer token, or an unknown one."""
    return Unauthorized(missing=bearer(header) is None)


def unknown_token() -> ForbiddenError:
    """The MCP routes' answer to a bearer token no folder takes: 403 with no `WWW-Authenticate`, as
    MCP clients start OAuth on any 401 and on a 403 with a challenge, and no sign-in fixes a wrong
    static token; the same at every path, so it tells nothing of which folders exist."""
    return ForbiddenError(UNKNOWN_TOKEN)


def bearer(header: str | None) -> str | None:
    """The token of `Authorization: Bearer <token>` (the scheme case-insensitive), or None."""
    if not header:
        return None
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return None
    return given.strip()


def same_token(given: str, expected: str | None) -> bool:
    if not expected:
        return False
    return hmac.compare_digest(
        hashlib.sha256(given.encode()).digest(), hashlib.sha256(expected.encode()).digest()
    )


@dataclass(frozen=True)
class Access:
    """What one request's credentials reach. `digest` is the token's SHA-256 for a folder token."""

    role: Role
    digest: str = ""

    def reaches(self, folder: Folder) -> bool:
        """Whether this caller may use `folder`'s MCP endpoint (its `mcp` switch is checked apart)."""
        if self.role == "admin":
            return True
        if folder.token_digests:
            return self.role == "folder" and any(
                hmac.compare_digest(self.digest, known) for known in folder.token_digests
            )
        return self.role == "agent"

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


ADMIN = Access("admin")
AGENT = Access("agent")

# Who the running tool call is, as a write stamps it (documents/provenance.py): set per MCP request,
# and by the primary for a call a reader forwarded; "" where the server knows no more (stdio).
CALLER: ContextVar[str] = ContextVar("ragdown_caller", default="")


def caller_label(access: Access, folders: Iterable[Folder]) -> str:
    """How a write names its caller: the admin or agents' token, or a folder token by its name."""
    if access.role != "folder":
        return f"{access.role} token"
    for folder in folders:
        tokens = folder.config.get("tokens")
        for entry in tokens if isinstance(tokens, list) else []:
            if (
                isinstance(entry, dict)
                and isinstance(entry.get("sha256"), str)
                and isinstance(entry.get("name"), str)
                and hmac.compare_digest(entry["sha256"].lower(), access.digest)
            ):
                return f"token {entry['name']}"
    return "a folder token"


def identify(header: str | None, settings: ServerSettings) -> Access | None:
    """The caller's access, or None without a usable token. On a trusted network (SECURE_LOCAL_NET)
    everyone is the admin: that is what the setting gives up (docs/security.md)."""
    if settings.secure_local_net:
        return ADMIN
    given = bearer(header)
    if given is None:
        return None
    if same_token(given, settings.admin_token):
        return ADMIN
    if same_token(given, settings.token):
        return AGENT
    # Any other token may be one of a folder's own; whether it is, each folder says (Access.reaches).
    return Access("folder", token_digest(given))
