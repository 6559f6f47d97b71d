"""How a reader reaches the primary: HTTP over `unix://<socket>` locally, `http://…` in a cluster.

Every write tool, `ragdown_reindex` and the hook's session memory go through here, so a reader never
writes the volume and a session's memory is the same whichever replica a call lands on.

A reader degrades rather than fails when the primary is away (docs/design.md#processes-and-roles): the
hook's memory
has a budget of about a second and fails open (the hook still answers, and may repeat a section);
reachability is kept by a background probe, so `/readyz` never waits on the primary; and a write
while the primary is known to be away is refused at once with a retryable message.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import httpx2

from ragdown.errors import PrimaryUnreachableError

log = logging.getLogger(__name__)

# A write, a move or a sync may take a while on the primary; a dead one is noticed at connect.
WRITE_TIMEOUT = httpx2.Timeout(60.0, connect=2.0)
# The hook answers on every prompt: its memory gets a second, then the hook goes on without it.
MEMORY_TIMEOUT = httpx2.Timeout(1.0)
PROBE_TIMEOUT = httpx2.Timeout(1.0)
PROBE_EVERY_S = 2.0


class PrimaryClient:
    """`token` gives the internal token (RAGDOWN_INTERNAL_TOKEN, or the data dir's own, which a
    primary may create after this reader started: asked again until there is one)."""

    def __init__(
        self, url: str, token: Callable[[], str | None], *, probe_every_s: float = PROBE_EVERY_S
    ) -> None:
        self.url = url
        self._token = token
        # A TLS context only for an https URL: each one loads the CA bundle (~1.5 MB held per
        # connection pool), which a socket or a plain-HTTP URL never uses.
        tls = url.startswith("https://")
        if url.startswith("unix://"):
            self._transport: Callable[[], httpx2.HTTPTransport] = lambda: httpx2.HTTPTransport(
                uds=url[len("unix://") :], verify=False
            )
            base = "http://primary"
        else:
            self._transport = lambda: httpx2.HTTPTransport(verify=tls)
            base = url.rstrip("/")
        # Writes, and the quick calls (memory, probes), on connections of their own: a hook call
        # never queues behind a slow write.
        self.http = httpx2.Client(transport=self._transport(), base_url=base, timeout=WRITE_TIMEOUT)
        self.quick = httpx2.Client(transport=self._transport(), base_url=base, timeout=MEMORY_TIMEOUT)
        self._reachable = True
        self._stop = threading.Event()
        self._probe_every_s = probe_every_s
        self._prober: threading.Thread | None = None

    def _headers(self) -> dict[str, str]:
        token = self._token()
        return {"Authorization": f"Bearer {token}"} if token else {}

    def _post(self, client: httpx2.Client, path: str, body: dict[str, Any]) -> Any:
        try:
            response = client.post(path, json=body, headers=self._headers())
        except httpx2.HTTPError as error:
            self._reachable = False
            raise PrimaryUnreachableError(self.url, error) from error
        if response.status_code != 200:
            raise PrimaryUnreachableError(
                self.url, RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
            )
        self._reachable = True
        return response.json()

    def _require_reachable(self) -> None:
        if not self._reachable:
            raise PrimaryUnreachableError(self.url, RuntimeError("it did not answer the last probe"))

    def tool(
        self, name: str, folder: str | None, path: str, arguments: dict[str, Any], caller: str = ""
    ) -> tuple[str, bool]:
        """Run a tool on the primary for `folder` (None: the root endpoint) at the sub-folder `path`,
        as `caller` (how its write is stamped); its answer (errors included) comes back unchanged."""
        self._require_reachable()
        body = {"folder": folder, "path": path, "tool": name, "arguments": arguments, "caller": caller}
        data = self._post(self.http, "/internal/tool", body)
        return str(data["text"]), bool(data["is_error"])

    def probe(self) -> bool:
        """Ask the primary now (within a second) and remember the answer."""
        try:
            answered = self.quick.get("/internal/ping", headers=self._headers(), timeout=PROBE_TIMEOUT)
            self._reachable = answered.status_code == 200
        except httpx2.HTTPError:
            self._reachable = False
        return self._reachable

    def reachable(self) -> bool:
        """The last probe's answer (never a call: `/readyz` must not wait on the primary)."""
        return self._reachable

    def start_probing(self) -> None:
        """Probe in the background, so reachability is known without anyone waiting for it."""
        if self._prober is not None:
            return

        def loop() -> None:
            while not self._stop.is_set():
                was = self._reachable
                now = self.probe()
                if was != now:
                    log.warning("the primary (%s) is %s", self.url, "back" if now else "not answering")
                self._stop.wait(self._probe_every_s)

        self._prober = threading.Thread(target=loop, name="ragdown-primary-probe", daemon=True)
        self._prober.start()

    def memory(self, op: str, key: str, ids: Iterable[str] = ()) -> frozenset[str]:
        data = self._post(self.quick, "/internal/memory", {"op": op, "key": key, "ids": list(ids)})
        return frozenset(data.get("ids", []))

    def close(self) -> None:
        self._stop.set()
        self.http.close()
        self.quick.close()


class RemoteSessionMemory:
    """The hook's session memory, kept by the primary (a `SessionMemory`). When the primary does not
    answer within its budget the hook goes on without it: it may repeat a section, never fail."""

    def __init__(self, client: PrimaryClient) -> None:
        self.client = client
        self._last_warning = 0.0

    def _warn(self, error: Exception) -> None:
        now = time.monotonic()
        if now - self._last_warning > 60:  # once a minute, not once a prompt
            self._last_warning = now
            log.warning("the hook goes on without the primary's session memory: %s", error)

    def seen(self, key: str) -> frozenset[str]:
        if not self.client.reachable():
            return frozenset()
        try:
            return self.client.memory("seen", key)
        except PrimaryUnreachableError as error:
            self._warn(error)
            return frozenset()

    def add(self, key: str, ids: Iterable[str]) -> None:
        if not self.client.reachable():
            return
        try:
            self.client.memory("add", key, ids)
        except PrimaryUnreachableError as error:
            self._warn(error)

    def forget(self, key: str) -> None:
        if not self.client.reachable():
            return
        try:
            self.client.memory("forget", key)
        except PrimaryUnreachableError as error:
            self._warn(error)
