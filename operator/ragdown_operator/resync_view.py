"""What a periodic resync reads instead of asking (docs/cluster.md#resync-at-scale): the Ingresses of
the namespace as kopf's watch keeps them (an index), and one listing of the indexer's folders shared by
every resync that runs within a few seconds of it. A quiet resync of N folders then costs no request
to the API server and one to the indexer, where it used to cost N of each.

Only what shows nothing to do is taken from here: a route or a folder that looks missing or drifted is
read again, fresh, before anything is written, so a stale view costs one request and never a wrong
write. Change, resume and delete handlers never use the view."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import kopf

from ragdown_operator.indexer import FolderState

# The part of an Ingress the resync compares (kube.owned_drift and the owner checks): the rest of the
# object is not kept, so the index costs about a kilobyte per Ingress.
KEPT_METADATA = ("name", "namespace", "labels", "annotations", "ownerReferences", "managedFields")


def ingress_entry(name: str, namespace: str | None, body: kopf.Body, **_: Any) -> dict[tuple[str, str], Any]:
    """kopf's index callback for Ingresses: (namespace, name) → the compared part of the object."""
    meta = body.get("metadata") or {}
    kept = {
        "metadata": {key: meta[key] for key in KEPT_METADATA if key in meta},
        "spec": dict(body.get("spec") or {}),
    }
    return {(namespace or "", name): kept}


@dataclass
class IngressView:
    """The watched Ingresses (kopf.Index keyed by (namespace, name)); `None` means none of that name."""

    index: Mapping[tuple[str, str], Any]

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        store = self.index.get((namespace, name))
        for value in store or ():
            return dict(value)
        return None


@dataclass
class FolderListing:
    """The indexer's `GET /api/folders`, shared by the resyncs of `max_age_s` seconds: one request
    however many folders resync in that window, and only one in flight at a time."""

    fetch: Callable[[], Awaitable[list[dict[str, Any]]]]
    max_age_s: float
    clock: Callable[[], float] = time.monotonic
    _folders: dict[str, FolderState] = field(default_factory=dict)
    _at: float | None = None
    _pending: asyncio.Future[None] | None = None

    async def get(self, name: str) -> FolderState | None:
        """The folder as last listed, None when the listing does not hold it."""
        if self._at is None or self.clock() - self._at > self.max_age_s:
            await self._refresh()
        return self._folders.get(name)

    async def _refresh(self) -> None:
        if self._pending is not None:
            await asyncio.shield(self._pending)
            return
        self._pending = asyncio.get_running_loop().create_future()
        try:
            listed = await self.fetch()
            self._folders = {str(f.get("name")): FolderState(f) for f in listed}
            self._at = self.clock()
            self._pending.set_result(None)
        except BaseException as error:
            self._pending.set_exception(error)
            self._pending.exception()  # retrieved: the waiters re-raise it, the future does not warn
            raise
        finally:
            self._pending = None


@dataclass
class ResyncView:
    ingresses: IngressView
    folders: FolderListing
