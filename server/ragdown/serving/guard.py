"""Where a request may come from (docs/security.md): the Host it names and the page (Origin) that
sent it, checked for every route but the open ones, and JSON-only bodies for `/api` changes.

A browser on any site can send a request to a server on this machine; only its Host and Origin
headers tell it apart. Checking the Host stops DNS rebinding (an attacker's name pointed at
127.0.0.1); checking the Origin stops a page elsewhere from posting to us (CSRF), which also needs a
body type that forms cannot send: `application/json`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from ragdown.settings import ServerSettings

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
# Routes that answer anyone: liveness, readiness, and the public status.
OPEN_PATHS = frozenset({"/api/status", "/healthz", "/readyz"})
# A page elsewhere can POST a form or text/plain without asking; a JSON body needs its permission.
NEEDS_JSON = frozenset({"POST", "PUT", "PATCH"})


# A Host value: a name or an IPv4 address, or an IPv6 address in brackets, and an optional port.
_HOST_RE = re.compile(r"^(?P<name>\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(?P<port>[0-9]{1,5}))?$")


def _split_port(host: str) -> tuple[str, str | None] | None:
    """The name and port of a well-formed Host value, or None for anything else."""
    match = _HOST_RE.match(host)
    return (match["name"], match["port"]) if match else None


def wrong_host(host: str | None) -> str:
    """The 421 refusal of a Host this server does not answer to."""
    return (
        f"this server does not answer to the host {host or '(none)'!r}: "
        "add it to RAGDOWN_ALLOWED_HOSTS if it is yours"
    )


@dataclass(frozen=True)
class Guard:
    """The Host values this server answers to: the loopback names on any port, the address it binds
    (when it is a specific one), and RAGDOWN_ALLOWED_HOSTS (`name`, `name:port`, `name:*`, or `*`)."""

    hosts: frozenset[str]
    any_port: frozenset[str]
    any_host: bool

    @classmethod
    def of(cls, settings: ServerSettings) -> Guard:
        extra = [h.strip().lower() for h in settings.allowed_hosts.split(",") if h.strip()]
        names = {*LOCAL_HOSTS}
        if settings.host not in ("0.0.0.0", "::", ""):
            names.add(f"[{settings.host}]" if ":" in settings.host else settings.host)
        exact = {h for h in extra if not h.endswith(":*") and h != "*"}
        return cls(
            hosts=frozenset(exact),
            any_port=frozenset(names | {h[:-2] for h in extra if h.endswith(":*")}),
            any_host="*" in extra,
        )

    def host_allowed(self, host: str | None) -> bool:
        if not host:
            return False
        host = host.lower()
        parts = _split_port(host)
        if parts is None:
            return False
        if self.any_host or host in self.hosts:
            return True
        return parts[0] in self.any_port

    def scrape_allowed(self, host: str | None) -> bool:
        """A Host the metrics port answers: one `host_allowed` takes, or an IP address. A scraper
        names the pod's address; DNS rebinding needs a name, so an address cannot be one."""
        if self.host_allowed(host):
            return True
        parts = _split_port((host or "").lower())
        if parts is None:
            return False
        try:
            ipaddress.ip_address(parts[0].strip("[]"))
        except ValueError:
            return False
        return True

    def origin_allowed(self, origin: str | None, host: str | None) -> bool:
        """No Origin (not a browser, or a same-origin GET) is fine; otherwise the page must be served
        from a host this server answers to — or from this very host when any host is allowed."""
        if origin is None:
            return True
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or "@" in parts.netloc:
            return False  # `null` (a sandboxed page or a file), user info, and anything stranger
        netloc = parts.netloc.lower()
        if self.any_host:
            return host is not None and netloc == host.lower()
        return self.host_allowed(netloc)

    def refusal(self, method: str, path: str, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        """The status and message refusing this request, or None when it may go on."""
        if path in OPEN_PATHS:
            return None
        host = headers.get(b"host", b"").decode("latin-1") or None
        if not self.host_allowed(host):
            return 421, wrong_host(host)
        origin = headers.get(b"origin", b"").decode("latin-1") or None
        if not self.origin_allowed(origin, host):
            return 403, f"requests from pages at {origin!r} are refused (the Origin is not this server's)"
        if path.startswith("/api/") and method in NEEDS_JSON:
            kind = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
            if kind != "application/json":
                return 415, "send the body as JSON (Content-Type: application/json)"
        return None
