"""How a reader reaches the primary: HTTP over `unix://<socket>` locally, `http://…` in a cluster.

Every write tool, `ragdown_reindex` and the hook's session memory go through here, so a reader never
writes the volume and a session's memory is the same whichever replica a call lands on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import httpx

from ragdown.documents.errors import Refusal

TIMEOUT_S = 120.0


class PrimaryUnreachableError(Refusal):
    def __init__(self, url: str, error: Exception) -> None:
        super().__init__(
            503, f"the primary ({url}) cannot be reached, so nothing was written; retry in a moment ({error})"
        )


class PrimaryClient:
    """`token` gives the internal token (RAGDOWN_INTERNAL_TOKEN, or the data dir's own, which a
    primary may create after this reader started: asked again until there is one)."""

    def __init__(self, url: str, token: Callable[[], str | None]) -> None:
        self.url = url
        self._token = token
        if url.startswith("unix://"):
            transport = httpx.HTTPTransport(uds=url[len("unix://") :])
            self.http = httpx.Client(transport=transport, base_url="http://primary", timeout=TIMEOUT_S)
        else:
            self.http = httpx.Client(base_url=url.rstrip("/"), timeout=TIMEOUT_S)

    def _headers(self) -> dict[str, str]:
        token = self._token()
        return {"Authorization": f"Bearer {token}"} if token else {}

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        try:
            response = self.http.post(path, json=body, headers=self._headers())
        except httpx.HTTPError as error:
            raise PrimaryUnreachableError(self.url, error) from error
        if response.status_code != 200:
            raise PrimaryUnreachableError(
                self.url, RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
            )
        return response.json()

    def tool(self, name: str, folder: str | None, path: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run a tool on the primary for `folder` (None: the root endpoint) at the sub-folder `path`;
        its answer (errors included) comes back unchanged."""
        body = {"folder": folder, "path": path, "tool": name, "arguments": arguments}
        data = self._post("/internal/tool", body)
        return str(data["text"]), bool(data["is_error"])

    def sync(self, full: bool = False) -> dict[str, Any]:
        return dict(self._post("/internal/sync", {"full": full}))

    def reachable(self) -> bool:
        try:
            return self.http.get("/internal/ping", headers=self._headers()).status_code == 200
        except httpx.HTTPError:
            return False

    def memory(self, op: str, key: str, ids: Iterable[str] = ()) -> frozenset[str]:
        data = self._post("/internal/memory", {"op": op, "key": key, "ids": list(ids)})
        return frozenset(data.get("ids", []))

    def close(self) -> None:
        self.http.close()


class RemoteSessionMemory:
    """The hook's session memory, kept by the primary (a `SessionMemory`)."""

    def __init__(self, client: PrimaryClient) -> None:
        self.client = client

    def seen(self, key: str) -> frozenset[str]:
        return self.client.memory("seen", key)

    def add(self, key: str, ids: Iterable[str]) -> None:
        self.client.memory("add", key, ids)

    def forget(self, key: str) -> None:
        self.client.memory("forget", key)
