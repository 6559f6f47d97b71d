"""An emulated Kubernetes API for the operator tests (no cluster here): kmock's stateful emulator,
plus what kopf relies on and kmock leaves out — uid, resourceVersion and generation stamps,
JSON-patch (with a failed `test` answered 422, as the API server does), and the status subresource
(a main-resource patch never changes status; a status patch changes nothing else). Watches can be
silenced, as a load balancer that drops a long connection without closing it does."""

from __future__ import annotations

import copy
import datetime
import itertools
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import jsonpatch
import kmock
from kmock._internal import enums, k8s, rendering

from ragdown_operator.kube import merge_patch

RAGDOWNFOLDERS = "ragdown.dev/v1alpha1/ragdownfolders"
INGRESSES = "networking.k8s.io/v1/ingresses"
EVENTS = "v1/events"
SECRETS = "v1/secrets"


@attrs.define(kw_only=True)
class Cluster(k8s.KubernetesEmulator):
    _versions: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1), init=False)
    _watches: itertools.count[int] = attrs.field(factory=itertools.count, init=False)
    _silent_below: int = attrs.field(default=0, init=False)

    def silence_watches(self) -> None:
        """Every watch open now stays open and delivers nothing more; later watches are served."""
        self._silent_below = next(self._watches) + 1

    async def _serve_watch(self, request: rendering.Request) -> AsyncIterator[rendering.Payload]:
        serial = next(self._watches)
        async for item in super()._serve_watch(request):
            if serial >= self._silent_below:
                yield item

    def current(self, request: rendering.Request) -> dict[str, Any] | None:
        key = (request.resource, request.namespace, request.name)
        if key not in self.objects or self.objects[key].deleted:
            return None
        return copy.deepcopy(dict(self.objects[key].raw))

    def subresources(self, request: rendering.Request) -> set[str]:
        for resource in self.resources:
            if resource == request.resource:
                return set(self.resources[resource].subresources)
        return set()

    async def _handle(self, request: rendering.Request) -> Any:
        # kmock matches reactions against the very request it recorded, so the stamped body replaces
        # the parsed one in place (Request is a frozen attrs class).
        if request.resource is not None and request.action == enums.action.CREATE:
            object.__setattr__(request, "data", self._created(request))
        elif request.resource is not None and request.action == enums.action.UPDATE and request.name:
            current = self.current(request)
            if current is not None:
                data = self._updated(request, current)
                if isinstance(data, k8s.KubernetesError):
                    return await self._render_error(data)
                object.__setattr__(request, "data", data)
        return await super()._handle(request)

    def _created(self, request: rendering.Request) -> dict[str, Any]:
        data = copy.deepcopy(request.data) if isinstance(request.data, dict) else {}
        meta = data.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):  # kopf names its Events this way
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        if request.namespace:
            meta.setdefault("namespace", request.namespace)
        meta["uid"] = str(uuid.uuid4())
        meta["resourceVersion"] = str(next(self._versions))
        meta["generation"] = 1
        meta["creationTimestamp"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return data

    def _updated(self, request: rendering.Request, current: dict[str, Any]) -> Any:
        if isinstance(request.data, list):  # JSON patch
            try:
                wanted = jsonpatch.apply_patch(current, request.data)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
                return k8s.KubernetesError(status=422, reason="Invalid", message="the JSON patch test failed")
        else:
            wanted = _merged(copy.deepcopy(current), request.data or {})
        has_status = "status" in self.subresources(request)
        if request.subresource == "status":
            wanted = {**current, "status": wanted.get("status")}
        elif has_status:
            wanted["status"] = current.get("status")
            if wanted["status"] is None:
                wanted.pop("status")
        meta = wanted.setdefault("metadata", {})
        for fixed in ("uid", "creationTimestamp", "generation", "namespace", "name"):
            if fixed in current.get("metadata", {}):
                meta[fixed] = current["metadata"][fixed]
        if wanted.get("spec") != current.get("spec"):
            meta["generation"] = int(current.get("metadata", {}).get("generation", 0)) + 1
        if wanted != current:
            meta["resourceVersion"] = str(next(self._versions))
        return merge_patch(current, wanted)


def _merged(current: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(current) if isinstance(current, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merged(out.get(key), value)
    return out


@asynccontextmanager
async def emulated_cluster() -> AsyncIterator[Cluster]:
    """The API on a free local port, knowing the kinds the operator touches."""
    async with Cluster() as cluster, kmock.Server(cluster):
        cluster.resources[RAGDOWNFOLDERS] = kmock.ResourceInfo(
            kind="RagdownFolder",
            singular="ragdownfolder",
            namespaced=True,
            verbs={"get", "list", "watch", "create", "update", "patch", "delete"},
            subresources={"status"},
        )
        cluster.resources[INGRESSES] = kmock.ResourceInfo(
            kind="Ingress",
            singular="ingress",
            namespaced=True,
            verbs={"get", "list", "watch", "create", "update", "patch", "delete"},
            subresources={"status"},
        )
        cluster.resources[SECRETS] = kmock.ResourceInfo(  # what spec.tokens names (tokens.py)
            kind="Secret",
            singular="secret",
            namespaced=True,
            verbs={"get", "list", "watch", "create", "update", "patch", "delete"},
        )
        cluster.resources[EVENTS] = kmock.ResourceInfo(
            kind="Event", singular="event", namespaced=True, verbs={"create", "get", "list"}
        )
        # Every real API server has these; kopf waits for them in discovery.
        cluster.resources["v1/namespaces"] = kmock.ResourceInfo(
            kind="Namespace", singular="namespace", namespaced=False, verbs={"get", "list", "watch"}
        )
        cluster.resources["apiextensions.k8s.io/v1/customresourcedefinitions"] = kmock.ResourceInfo(
            kind="CustomResourceDefinition",
            singular="customresourcedefinition",
            namespaced=False,
            verbs={"get", "list", "watch"},
        )
        yield cluster
