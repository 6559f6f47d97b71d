"""The ports `serve` listens on, bound before anything heavy starts (docs/design.md#refusals-at-start).

A port that is taken, an address this machine does not have, a port this user may not use: each is
one line naming the setting and exit 2, said before the index opens and the model's threads start
(a failed bind after that ended in native threads aborting the process). The public port's sockets
are bound here and handed to uvicorn, so it cannot fail to bind later; the metrics and internal
ports are tried here and bound again by their servers a moment later.
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from ragdown.errors import CliError


@dataclass(frozen=True)
class PortSetting:
    """What a port came from: the variables that set it (the first one set wins, as in
    settings.py), and the advice for a port that cannot be used."""

    names: tuple[str, ...]
    advice: str = "a free port"

    def named(self, port: int, environ: Mapping[str, str] = os.environ) -> str:
        """`PORT=3001` as the user set it, or `the default RAGDOWN_METRICS_PORT`."""
        given = next((name for name in self.names if name in environ), None)
        return f"{given}={port}" if given else f"the default {self.names[0]}"

    def variable(self, environ: Mapping[str, str] = os.environ) -> str:
        return next((name for name in self.names if name in environ), self.names[0])


PUBLIC = PortSetting(("PORT", "RAGDOWN_PORT"))
METRICS = PortSetting(("RAGDOWN_METRICS_PORT",), "a free port, or 0 to turn metrics off")
INTERNAL = PortSetting(("RAGDOWN_INTERNAL_PORT",))


def bind(host: str, port: int, setting: PortSetting, backlog: int | None = None) -> list[socket.socket]:
    """Sockets bound to every address `host` names (as asyncio's create_server binds them), and
    listening when a `backlog` is given (on Linux another process may still bind a port that is only
    bound); a CliError naming `setting` (and RAGDOWN_HOST where the address is the problem)."""
    try:
        infos = socket.getaddrinfo(host, port, socket.AF_UNSPEC, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except socket.gaierror:
        raise CliError(
            f"cannot listen on {host}:{port}: RAGDOWN_HOST {host!r} is not an address or a name this "
            "machine resolves; set it to one of its addresses (0.0.0.0 for all)"
        ) from None
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                # As asyncio does: the IPv6 socket leaves IPv4 to the IPv4 one.
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            if backlog is not None:
                sock.listen(backlog)
    except OSError as error:
        for sock in bound:
            sock.close()
        raise CliError(refusal(error, host, port, setting)) from None
    return bound


def check_free(host: str, port: int, setting: PortSetting) -> None:
    """Whether host:port can be bound now (its server binds it itself a moment later)."""
    for sock in bind(host, port, setting):
        sock.close()


def refusal(error: OSError, host: str, port: int, setting: PortSetting) -> str:
    """Why host:port cannot be listened on, in one line that says what to change."""
    where = f"cannot listen on {host}:{port}"
    named, variable = setting.named(port), setting.variable()
    if error.errno == errno.EADDRINUSE:
        return (
            f"{where}: the port is taken by another process ({named}); stop that process, or set "
            f"{variable} to {setting.advice}"
        )
    if error.errno == errno.EACCES:
        return f"{where}: this user may not listen on port {port} ({named}); set {variable} to 1024 or above"
    if error.errno == errno.EADDRNOTAVAIL:
        return (
            f"{where}: {host} is not an address of this machine (RAGDOWN_HOST); set RAGDOWN_HOST to one "
            "of its addresses (0.0.0.0 for all)"
        )
    return f"{where} ({named}): {error.strerror or error}"
