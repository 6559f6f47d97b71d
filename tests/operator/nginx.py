"""Debian's nginx as the cluster's ingress controller (docs/cluster.md#routes-through-nginx): its
configuration is rendered from the Ingress objects in the emulated API, as ingress-nginx renders its
own, and reloaded whenever they change. Only what the operator's Ingresses use is translated: rules
by host (none: the default server), `Prefix`, `Exact` and `ImplementationSpecific` paths to a
Service, the `nginx.ingress.kubernetes.io/` annotations for body size, read timeout and buffering,
and ingress-nginx's defaults (1m bodies, 60 s reads, no buffering, nginx's own 404 for any other
path). Ingresses without a class are taken too, as `--watch-ingress-without-class` does. What would
not make a sound nginx.conf (a path or annotation value with spaces, `;`, braces) is refused.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.serving.conftest import free_port, stop_process

ANNOTATION = "nginx.ingress.kubernetes.io/"
# ingress-nginx's admission check of `Prefix` and `Exact` paths (strict-validate-path-type): anything
# else is refused, and must be ImplementationSpecific.
STRICT_PATH = re.compile(r"^/[A-Za-z0-9/_-]*$")
# Any path this module writes into nginx.conf unquoted; annotation values by their kind.
PLAIN_PATH = re.compile(r"^/[A-Za-z0-9/_.%~-]*$")
VALUES = {
    "proxy-body-size": re.compile(r"^[0-9]+[kKmMgG]?$"),
    "proxy-read-timeout": re.compile(r"^[0-9]+$"),
    "proxy-buffering": re.compile(r"^(on|off)$"),
}
DEFAULTS = {"proxy-body-size": "1m", "proxy-read-timeout": "60", "proxy-buffering": "off"}
# nginx's temporary directories, kept under the test's prefix (the defaults are root's).
TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
# What nginx's own error pages carry, and the servers' answers never do.
NGINX_404 = "<hr><center>nginx"
Services = dict[tuple[str, int], str]  # (Service name, port) -> "127.0.0.1:port"


def nginx_binary() -> str | None:
    """Debian's nginx, also where /usr/sbin is not on PATH (a non-root shell)."""
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


class IngressRefusedError(ValueError):
    """What ingress-nginx's admission webhook would refuse."""


def locations(path: str, path_type: str) -> list[str]:
    """The nginx `location` heads for one Ingress path, as ingress-nginx writes them."""
    if path_type in ("Prefix", "Exact") and not STRICT_PATH.match(path):
        raise IngressRefusedError(f"path {path} cannot be used with pathType {path_type}")
    if not PLAIN_PATH.match(path):
        raise IngressRefusedError(f"path {path!r} is not one this test's nginx.conf can hold")
    if path_type == "Exact":
        return [f"= {path}"]
    if path_type == "Prefix":  # by whole path elements: /mcp/work and /mcp/work/..., never /mcp/workx
        trimmed = path.rstrip("/")
        return ["/"] if not trimmed else [f"= {trimmed}", f"{trimmed}/"]
    return [path]  # ImplementationSpecific without regex: a plain nginx prefix


def render(
    ingresses: list[dict[str, Any]], services: Services, port: int, prefix: Path, ingress_class: str
) -> tuple[str, list[str]]:
    """The whole nginx.conf for the Ingresses of `ingress_class`, and why any were left out."""
    servers: dict[str, list[str]] = {}
    refused: list[str] = []
    for ingress in sorted(ingresses, key=lambda i: str(i["metadata"]["name"])):
        spec, name = ingress["spec"], ingress["metadata"]["name"]
        if spec.get("ingressClassName", ingress_class) != ingress_class:
            continue
        try:
            settings = {**DEFAULTS, **_annotations(ingress)}
            blocks = [
                (rule.get("host") or "_", head, entry["backend"]["service"])
                for rule in spec.get("rules", [])
                for entry in rule["http"]["paths"]
                for head in locations(entry["path"], entry.get("pathType", "ImplementationSpecific"))
            ]
        except IngressRefusedError as error:
            refused.append(f"{name}: {error}")
            continue
        for host, head, service in blocks:
            upstream = services.get((service["name"], int(service["port"]["number"])))
            body = (
                f"proxy_pass http://{upstream};" if upstream else "return 503;"  # no endpoints
            )
            servers.setdefault(host, []).append(
                f"location {head} {{\n"
                f"  client_max_body_size {settings['proxy-body-size']};\n"
                f"  proxy_read_timeout {settings['proxy-read-timeout']}s;\n"
                f"  proxy_buffering {settings['proxy-buffering']};\n"
                f"  {body}\n}}"
            )
    servers.setdefault("_", [])
    blocks_text = []
    for host, entries in servers.items():
        listen = f"listen 127.0.0.1:{port}" + (" default_server" if host == "_" else "") + ";"
        # Only a path some Ingress names reaches a Service; any other is nginx's own 404.
        fallback = (
            [] if any(e.startswith("location / {") for e in entries) else ["location / { return 404; }"]
        )
        inner = "\n".join([listen, f"server_name {host};", *entries, *fallback])
        blocks_text.append("server {\n" + inner + "\n}")
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers read this test's private temp dir
    conf = (
        f"{user}daemon off;\nworker_processes 1;\npid {prefix}/nginx.pid;\n"
        f"error_log {prefix}/error.log warn;\n"
        "events { worker_connections 256; }\n"
        "http {\n"
        f"access_log {prefix}/access.log;\n"
        + "".join(f"{kind}_temp_path {prefix}/{kind};\n" for kind in TEMP_PATHS)
        + "proxy_http_version 1.1;\n"
        'proxy_set_header Connection "";\n'
        "proxy_set_header Host $host;\n"
        "proxy_set_header X-Forwarded-For $remote_addr;\n"
        "proxy_set_header X-Forwarded-Proto $scheme;\n" + "\n".join(blocks_text) + "\n}\n"
    )
    return conf, refused


def _annotations(ingress: dict[str, Any]) -> dict[str, str]:
    found = ingress["metadata"].get("annotations") or {}
    taken = {k.removeprefix(ANNOTATION): str(v) for k, v in found.items() if k.startswith(ANNOTATION)}
    for key, value in taken.items():
        if key in VALUES and not VALUES[key].match(value):
            raise IngressRefusedError(f"annotation {ANNOTATION}{key}: {value!r} is not a valid value")
    return {k: v for k, v in taken.items() if k in VALUES}


@dataclass
class Nginx:
    """nginx on a free loopback port; `refused` lists the Ingresses the webhook would have refused."""

    prefix: Path
    port: int = field(default_factory=free_port)
    refused: list[str] = field(default_factory=list)
    failure: str | None = None  # why the last change could not be applied
    process: subprocess.Popen[bytes] | None = None
    config: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def apply(self, config: str) -> None:
        """Write `config`, check it with `nginx -t`, and start nginx or make it reload."""
        binary = nginx_binary()
        assert binary, "nginx is not installed (Debian's package `nginx`)"
        conf = self.prefix / "nginx.conf"
        conf.write_text(config, encoding="utf-8")
        checked = subprocess.run(
            [
                binary,
                "-t",
                "-q",
                "-p",
                str(self.prefix),
                "-e",
                str(self.prefix / "error.log"),
                "-c",
                str(conf),
            ],
            capture_output=True,
            text=True,
        )
        assert checked.returncode == 0, f"{checked.stderr}\n{config}"
        if self.process is None:
            command = [binary, "-p", str(self.prefix), "-e", str(self.prefix / "error.log"), "-c", str(conf)]
            self.process = subprocess.Popen(command)
            self._wait_listening()
        else:
            self.process.send_signal(signal.SIGHUP)  # nginx's reload: new workers, old ones finish
        self.config = config

    def _wait_listening(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.process is not None
            assert self.process.poll() is None, self.error_log()
            with suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            assert time.monotonic() < deadline, f"nginx did not listen; {self.error_log()}"
            time.sleep(0.05)

    def error_log(self) -> str:
        log = self.prefix / "error.log"
        return log.read_text(encoding="utf-8", errors="replace")[-3000:] if log.exists() else ""

    def stop(self) -> None:
        stop_process(self.process)


@asynccontextmanager
async def nginx_from_ingresses(
    prefix: Path,
    list_ingresses: Callable[[], Awaitable[list[dict[str, Any]]]],
    services: Services,
    ingress_class: str,
    poll_s: float = 0.2,
) -> AsyncIterator[Nginx]:
    """nginx following the Ingresses `list_ingresses` returns, as a controller watches them."""
    for kind in TEMP_PATHS:
        (prefix / kind).mkdir(parents=True, exist_ok=True)
    proxy = Nginx(prefix)

    async def sync() -> None:
        config, proxy.refused = render(await list_ingresses(), services, proxy.port, prefix, ingress_class)
        if config != proxy.config:
            proxy.apply(config)

    async def follow() -> None:
        while True:
            await asyncio.sleep(poll_s)
            try:
                await sync()
            except Exception as error:  # any of them: nginx would keep serving the old routes
                proxy.failure = f"{type(error).__name__}: {error}"  # the test says so, not a timeout
                return

    await sync()
    task = asyncio.create_task(follow())
    try:
        yield proxy
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
        proxy.stop()
