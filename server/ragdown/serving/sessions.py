"""The web UI's sessions (docs/web.md#sign-in, docs/security.md): the admin token, sent once to
`POST /api/session` (serving/session_api.py), becomes a session cookie that no script can read, so
nothing a document brings into the page (an SVG opened top-level, say) can take the admin
credential with it.

Sessions live in a table on the server: each id is 256 random bits, kept only as its SHA-256 (the
table signs no one in), with an absolute expiry of 12 hours; at most `MAX_SESSIONS` at once, the
oldest ending first. `DELETE /api/session` removes the caller's id, so a signed-out cookie is dead
even if it was copied; a restart ends every session. One process's table is enough: in a cluster
people reach the UI and `/api` on the indexer alone (the chart's Ingress routes `/` and `/api` there).

A cookie is ambient authority, so a request it authenticates must look like the UI's own: no
cross-site fetch metadata, and an `Origin` on every change (the Host/Origin guard has already checked
that any Origin sent is this server's, and `/api` changes still need a JSON body).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable

from fastapi import Request

from ragdown.errors import ForbiddenError, Unauthorized

COOKIE = "ragdown_session"
COOKIE_PATH = "/api"  # never sent to /mcp, nor to the page and its files
LIFETIME_S = 12 * 3600
MAX_SESSIONS = 1024
SAFE_METHODS = frozenset({"GET", "HEAD"})
# Sec-Fetch-Site values of a request the UI's own page (or the person, typing a URL) makes.
OWN_SITE = frozenset({"same-origin", "none"})

SESSION_ENDED = (
    "the session has expired or was signed out: sign in again (or send Authorization: Bearer <token>)"
)
NEEDS_ORIGIN = (
    "a change made with the session cookie must come from the web UI's own page (it sends Origin); "
    "a script sends Authorization: Bearer <admin token> instead"
)
CROSS_SITE = "the session cookie works only from the web UI's own page, not from another site's"


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


class Sessions:
    """Signed-in browsers: session id digest -> when it expires (`clock()` seconds)."""

    def __init__(
        self,
        lifetime_s: float = LIFETIME_S,
        limit: int = MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lifetime_s = lifetime_s
        self.limit = limit
        self.clock = clock
        self._lock = threading.Lock()
        self._expiry: dict[str, float] = {}  # insertion order: the oldest first

    def start(self) -> str:
        """A new session's id, to go in the cookie; the server keeps its digest only."""
        session_id = secrets.token_urlsafe(32)
        now = self.clock()
        with self._lock:
            self._expiry = {d: t for d, t in self._expiry.items() if t > now}
            while len(self._expiry) >= self.limit:
                del self._expiry[next(iter(self._expiry))]
            self._expiry[_digest(session_id)] = now + self.lifetime_s
        return session_id

    def valid(self, session_id: str) -> bool:
        with self._lock:
            expires = self._expiry.get(_digest(session_id))
        return expires is not None and expires > self.clock()

    def end(self, session_id: str) -> None:
        with self._lock:
            self._expiry.pop(_digest(session_id), None)

    def __len__(self) -> int:
        return len(self._expiry)


def is_tls(request: Request) -> bool:
    """Whether the browser reached us over HTTPS: directly, or through a proxy that says so."""
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def check_cookie_request(request: Request) -> None:
    """Refuse a cookie-authenticated request that does not come from the UI's own page."""
    if request.headers.get("sec-fetch-site", "same-origin").lower() not in OWN_SITE:
        raise ForbiddenError(CROSS_SITE)
    if request.method not in SAFE_METHODS and not request.headers.get("origin"):
        raise ForbiddenError(NEEDS_ORIGIN)


def session_of(request: Request, sessions: Sessions) -> bool:
    """For a request without an Authorization header: True when its cookie is a live session (and
    the request may use it), False when it sends no cookie; a dead cookie is 401."""
    given = request.cookies.get(COOKIE)
    if given is None:
        return False
    if not sessions.valid(given):
        raise Unauthorized(SESSION_ENDED)
    check_cookie_request(request)
    return True
