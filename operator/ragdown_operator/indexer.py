"""The indexer's `/api/folders` routes, as the operator uses them: find, create-or-patch, release, delete.

Every change names the resource in `X-Ragdown-Manager`; the indexer refuses it for a folder managed by
another resource (409 `managed`), which surfaces as `FolderManagedElsewhere`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from ragdown.folders.registry import tokens_fingerprint
from ragdown_operator.constants import MANAGER_HEADER
from ragdown_operator.errors import IndexerRefused, IndexerUnreachable


@dataclass(frozen=True)
class FolderState:
    """What the indexer reports of one folder (GET /api/folders)."""

    raw: dict[str, Any]

    @property
    def files(self) -> int:
        return int(self.raw.get("files", 0))

    @property
    def chunks(self) -> int:
        return int(self.raw.get("chunks", 0))

    def differs_from(self, wanted: dict[str, Any]) -> list[str]:
        """The settings in `wanted` that the folder does not have now (drift, or a first apply)."""
        now = {
            "title": self.raw.get("title") if self.raw.get("title") != self.raw.get("name") else "",
            "mcp": self.raw.get("mcp", False),
            "read_only": self.raw.get("read_only", False),
            "disabled_tools": sorted(self.raw.get("disabled_tools", [])),
            "hook": {k: v for k, v in (self.raw.get("hook") or {}).items() if v is not None},
            "managed_by": self.raw.get("managed_by"),
            # The indexer shows a fingerprint of its entries, never a digest (docs/tools.md#folder-routes).
            "tokens": self.raw.get("tokens_fingerprint"),
        }
        want = dict(wanted)
        if "tokens" in want:  # only when the spec lists tokens; [] is none, and shows no fingerprint
            want["tokens"] = tokens_fingerprint(want["tokens"]) if want["tokens"] else None
        want["hook"] = {k: v for k, v in wanted.get("hook", {}).items() if v is not None}
        if want.get("title") == self.raw.get("name"):
            want["title"] = ""
        return sorted(key for key in want if now.get(key) != want[key])


class IndexerClient:
    def __init__(self, base_url: str, token: str | None, timeout_s: float) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=base_url, headers=headers, timeout=timeout_s)

    async def close(self) -> None:
        await self._http.aclose()

    async def _call(
        self, method: str, path: str, *, manager: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        headers = {MANAGER_HEADER: manager} if manager else {}
        try:
            response = await self._http.request(method, path, headers=headers, **kwargs)
        except httpx.TransportError as error:
            where = self._http.base_url
            why = str(error) or type(error).__name__  # httpx's timeouts often say nothing
            raise IndexerUnreachable(f"the indexer at {where} did not answer: {why}") from error
        if response.status_code >= 500:
            raise IndexerUnreachable(f"the indexer answered {response.status_code}: {response.text[:200]}")
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code >= 400:
            message = body.get("error") if isinstance(body, dict) else None
            raise IndexerRefused(response.status_code, str(message or response.text[:200]), body.get("code"))
        return body if isinstance(body, dict) else {}

    async def folder(self, name: str) -> FolderState | None:
        try:
            body = await self._call("GET", f"/api/folders/{quote(name, safe='')}")
        except IndexerRefused as error:
            if error.status == 404:
                return None
            raise
        return FolderState(body["folder"])

    async def folders(self) -> list[dict[str, Any]]:
        """Every folder, as `folder` shows each (one request: the resyncs share it, resync_view.py)."""
        body = await self._call("GET", "/api/folders")
        listed = body.get("folders")
        return [dict(f) for f in listed if isinstance(f, dict)] if isinstance(listed, list) else []

    async def create(self, name: str, settings: dict[str, Any], manager: str) -> FolderState:
        body = await self._call("POST", "/api/folders", manager=manager, json={"name": name, **settings})
        return FolderState(body["folder"])

    async def patch(self, name: str, settings: dict[str, Any], manager: str) -> FolderState:
        path = f"/api/folders/{quote(name, safe='')}"
        body = await self._call("PATCH", path, manager=manager, json=settings)
        return FolderState(body["folder"])

    async def delete(self, name: str, manager: str) -> None:
        await self._call(
            "DELETE", f"/api/folders/{quote(name, safe='')}", manager=manager, params={"confirm": name}
        )
