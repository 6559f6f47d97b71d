"""An emulated Kubernetes API for the operator tests (no cluster here): kmock's stateful emulator,
plus what kopf relies on and kmock leaves out — uid, resourceVersion and generation stamps,
JSON-patch (with a failed `test` answered 422, as the API server does), and the status subresource
(a main-resource patch never changes status; a status patch changes nothing else). Watches can be
silenced, as a load balancer that drops a long connection without closing it does.

kmock merges every PATCH body into the object whatever its content type; for Ingresses this adds
server-side apply (`application/apply-patch+yaml`) with field managers, at the depth the operator
reads them (ingress_fields), and the DefaultIngressClass admission plugin. tests/cluster asserts
the same behaviours on a real API server."""

from __future__ import annotations

import copy
import datetime
import itertools
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import jsonpatch
import kmock
from kmock._internal import enums, k8s, rendering

RAGDOWNFOLDERS = "ragdown.dev/v1alpha1/ragdownfolders"
INGRESSES = "networking.k8s.io/v1/ingresses"
EVENTS = "v1/events"
SECRETS = "v1/secrets"


@attrs.define(kw_only=True)
class Cluster(k8s.KubernetesEmulator):
    _versions: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1), init=False)
    _watches: itertools.count[int] = attrs.field(factory=itertools.count, init=False)
    _silent_below: int = attrs.field(default=0, init=False)
    # The class the DefaultIngressClass admission gives an Ingress created without one (an IngressClass
    # marked `ingressclass.kubernetes.io/is-default-class`); None: no default class.
    default_ingress_class: str | None = attrs.field(default=None, init=False)

    def silence_watches(self) -> None:
        """Every watch open now stays open and delivers nothing more; later watches are served."""
        self._silent_below = next(self._watches) + 1

    async def _serve_watch(self, request: rendering.Request) -> AsyncIterator[rendering.Payload]:
        serial = next(self._watches)
        async for item in super()._serve_watch(request):
            if serial >= self._silent_below:
                yield item

    def current(self, request: rendering.Request) -> dict[str, Any] | None:
        if request.resource is None or request.name is None:  # a list or a watch: no one object
            return None
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
            applying = _content_type(request) == APPLY
            if applying and request.resource != INGRESSES:
                message = f"{APPLY}: this emulator applies Ingresses only"
                error = k8s.KubernetesError(status=415, reason="UnsupportedMediaType", message=message)
                return await self._render_error(error)
            if current is None and applying:  # server-side apply creates what is missing
                object.__setattr__(request, "action", enums.action.CREATE)
                object.__setattr__(request, "data", self._created(request))
            elif current is not None:
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
        meta["creationTimestamp"] = _now()
        if request.resource == INGRESSES:
            operation = "Apply" if _content_type(request) == APPLY else "Update"
            owners = {(_manager(request), operation): set(ingress_fields(data))}
            meta["managedFields"] = _managed_fields(owners, [])
            # Admission runs after the fields are assigned: the class it sets is nobody's.
            spec = data.setdefault("spec", {})
            if self.default_ingress_class and not spec.get("ingressClassName"):
                spec["ingressClassName"] = self.default_ingress_class
        return data

    def _updated(self, request: rendering.Request, current: dict[str, Any]) -> Any:
        if request.resource == INGRESSES and request.subresource is None:
            if _content_type(request) == APPLY:
                force = request.params.get("force") == "true"
                applied = _applied(current, request.data or {}, _manager(request), force=force)
                if isinstance(applied, k8s.KubernetesError):
                    return applied
                return self._stamped(request, current, applied)
            patched = self._patched(request, current)
            if isinstance(patched, k8s.KubernetesError):
                return patched
            return self._stamped(request, current, _updated_by(current, patched, _manager(request)))
        wanted = self._patched(request, current)
        if isinstance(wanted, k8s.KubernetesError):
            return wanted
        return self._stamped(request, current, wanted)

    def _patched(self, request: rendering.Request, current: dict[str, Any]) -> Any:
        if isinstance(request.data, list):  # JSON patch
            try:
                wanted = jsonpatch.apply_patch(current, request.data)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
                return k8s.KubernetesError(status=422, reason="Invalid", message="the JSON patch test failed")
        else:
            wanted = _merged(copy.deepcopy(current), request.data or {})
        return wanted

    def _stamped(self, request: rendering.Request, current: dict[str, Any], wanted: dict[str, Any]) -> Any:
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


def merge_patch(old: Any, new: Any) -> Any:
    """The RFC 7386 merge patch turning `old` into `new` (null deletes a key; lists are replaced)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old or old[key] != value:
            patch[key] = merge_patch(old.get(key), value)
    return patch


APPLY = "application/apply-patch+yaml"
Field = tuple[str, ...]
Owners = dict[tuple[str, str], set[Field]]  # (manager, operation) -> its fields


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _content_type(request: rendering.Request) -> str:
    for key, value in request.headers.items():
        if key.lower() == "content-type":
            return str(value).split(";")[0].strip()
    return ""


def _manager(request: rendering.Request) -> str:
    """As the API server names a write's field manager: `?fieldManager=`, else the User-Agent's
    product name."""
    agent = next((str(v) for k, v in request.headers.items() if k.lower() == "user-agent"), "unknown")
    return str(request.params.get("fieldManager") or agent.split("/")[0])


def ingress_fields(obj: dict[str, Any]) -> dict[Field, Any]:
    """An Ingress's fields, each with its value, at the depth the operator compares ownership (kube.py
    applied_fields): label and annotation keys, owner references by uid, the spec's top-level fields
    (atomic `rules` and `tls` on a real server too; this emulator treats any spec field so)."""
    meta = obj.get("metadata") or {}
    out: dict[Field, Any] = {}
    for field in ("labels", "annotations"):
        for key, value in (meta.get(field) or {}).items():
            out[("metadata", field, key)] = value
    for ref in meta.get("ownerReferences") or []:
        out[("metadata", "ownerReferences", str(ref.get("uid")))] = ref
    for key, value in (obj.get("spec") or {}).items():
        out[("spec", key)] = value
    return out


def _fields_v1(fields: set[Field]) -> dict[str, Any]:
    """In the API server's FieldsV1 form, as it records an apply (`f:` a field, `k:` a list item by its
    key; tests/operator/test_operator_parts.py holds one the real server wrote)."""
    tree: dict[str, Any] = {}
    for field in sorted(fields):
        if field[0] == "spec":
            tree.setdefault("f:spec", {})[f"f:{field[1]}"] = {}
            continue
        meta = tree.setdefault("f:metadata", {}).setdefault(f"f:{field[1]}", {})
        if field[1] == "ownerReferences":
            meta["k:" + json.dumps({"uid": field[2]}, separators=(",", ":"))] = {}
        else:
            meta[f"f:{field[2]}"] = {}
    return tree


def _owners(obj: dict[str, Any]) -> Owners:
    owners: Owners = {}
    for entry in obj.get("metadata", {}).get("managedFields") or []:
        tree = entry.get("fieldsV1") or {}
        fields: set[Field] = {("spec", key[2:]) for key in tree.get("f:spec") or {}}
        for name, items in (tree.get("f:metadata") or {}).items():
            for key in items:
                if key.startswith("f:"):
                    fields.add(("metadata", name[2:], key[2:]))
                elif key.startswith("k:"):
                    fields.add(("metadata", name[2:], str(json.loads(key[2:])["uid"])))
        owners[(entry["manager"], entry["operation"])] = fields
    return owners


def _managed_fields(owners: Owners, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """managedFields for `owners`: an entry whose fields did not change keeps its time; none empty."""
    kept = {(e["manager"], e["operation"]): e for e in before}
    out = []
    for (manager, operation), fields in owners.items():
        if not fields:
            continue
        tree = _fields_v1(fields)
        old = kept.get((manager, operation))
        if old is not None and old.get("fieldsV1") == tree:
            out.append(old)
            continue
        entry = {"manager": manager, "operation": operation, "apiVersion": "networking.k8s.io/v1"}
        out.append({**entry, "time": _now(), "fieldsType": "FieldsV1", "fieldsV1": tree})
    return out


def _put(obj: dict[str, Any], field: Field, value: Any) -> None:
    if field[0] == "spec":
        obj.setdefault("spec", {})[field[1]] = copy.deepcopy(value)
    elif field[1] == "ownerReferences":
        refs = [r for r in obj["metadata"].get("ownerReferences") or [] if str(r.get("uid")) != field[2]]
        obj["metadata"]["ownerReferences"] = [*refs, copy.deepcopy(value)]
    else:
        obj["metadata"].setdefault(field[1], {})[field[2]] = value


def _drop(obj: dict[str, Any], field: Field) -> None:
    if field[0] == "spec":
        (obj.get("spec") or {}).pop(field[1], None)
    elif field[1] == "ownerReferences":
        refs = [r for r in obj["metadata"].get("ownerReferences") or [] if str(r.get("uid")) != field[2]]
        obj["metadata"]["ownerReferences"] = refs
    else:
        (obj["metadata"].get(field[1]) or {}).pop(field[2], None)


def _applied(
    current: dict[str, Any], body: dict[str, Any], manager: str, *, force: bool = True
) -> dict[str, Any] | k8s.KubernetesError:
    """A server-side apply of `body` by `manager`: it takes the fields it sets (a field set to the
    same value is shared; one another manager set to another value is a 409 conflict unless forced,
    and taken when forced), and a field it applied before and no longer does is removed unless
    another manager owns it too."""
    owners = _owners(current)
    have, wanted_values = ingress_fields(current), ingress_fields(body)
    applied = set(wanted_values)
    before = owners.get((manager, "Apply"), set())
    conflicts = sorted(
        ".".join(field)
        for key, fields in owners.items()
        if key != (manager, "Apply")
        for field in fields & applied
        if have.get(field) != wanted_values[field]
    )
    if conflicts and not force:
        message = f"Apply failed with {len(conflicts)} conflicts: {', '.join(conflicts)}"
        return k8s.KubernetesError(status=409, reason="Conflict", message=message)
    for key, fields in owners.items():
        if key != (manager, "Apply"):
            owners[key] = {f for f in fields if f not in applied or have.get(f) == wanted_values[f]}
    owners[(manager, "Apply")] = applied
    others = set().union(*(fields for key, fields in owners.items() if key != (manager, "Apply")))
    wanted = copy.deepcopy(current)
    for field in (before - applied) - others:
        _drop(wanted, field)
    for field, value in wanted_values.items():
        _put(wanted, field, value)
    wanted["metadata"]["managedFields"] = _managed_fields(
        owners, current["metadata"].get("managedFields") or []
    )
    return wanted


def _updated_by(current: dict[str, Any], wanted: dict[str, Any], manager: str) -> dict[str, Any]:
    """A plain write (merge or JSON patch) by `manager`: the fields it changed become its own, the
    fields it removed nobody's."""
    owners = _owners(current)
    before, after = ingress_fields(current), ingress_fields(wanted)
    changed = {f for f, value in after.items() if before.get(f, object()) != value}
    gone = set(before) - set(after)
    for key, fields in owners.items():
        owners[key] = fields - changed - gone
    owners[(manager, "Update")] = owners.get((manager, "Update"), set()) | changed
    wanted = copy.deepcopy(wanted)
    wanted.setdefault("metadata", {})["managedFields"] = _managed_fields(
        owners, current["metadata"].get("managedFields") or []
    )
    return wanted


def applied_by(manager: str, body: dict[str, Any], current: dict[str, Any] | None = None) -> dict[str, Any]:
    """`current` after a forced server-side apply of `body` by `manager` (created when None), with the
    managedFields this emulator keeps: for tests of the operator's parts."""
    if current is None:
        created = copy.deepcopy(body)
        owners = {(manager, "Apply"): set(ingress_fields(created))}
        created.setdefault("metadata", {})["managedFields"] = _managed_fields(owners, [])
        return created
    applied = _applied(current, body, manager)
    assert not isinstance(applied, k8s.KubernetesError)  # forced: a conflict is never refused
    return applied


def updated_by(manager: str, patch: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """`current` after `manager` merge-patched it (a person's `kubectl edit`, another controller)."""
    return _updated_by(current, _merged(copy.deepcopy(current), patch), manager)


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
