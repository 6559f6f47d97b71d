"""The few Kubernetes API calls kopf does not make for us: read, server-side apply and delete Ingresses
(docs/cluster.md#field-ownership); list RagdownFolders and edit their metadata (release.py); read the
Secrets `spec.tokens` names (tokens.py).

It uses the credentials kopf logged in with (`use_connection`), so tests against an emulated API
server and a pod's service account work the same way."""

from __future__ import annotations

import json
import os
import ssl
import tempfile
from collections.abc import Callable
from typing import Any

import httpx
import kopf

from ragdown_operator.constants import (
    FIELD_MANAGER,
    GROUP,
    INSTANCE_LABEL,
    LABEL_INSTANCE,
    LABEL_MANAGED_BY,
    LEGACY_OWNED_KEYS,
    MANAGED_BY,
    PLURAL,
    VERSION,
)
from ragdown_operator.errors import IngressConflict, KubeUnavailable, SecretForbidden

INGRESSES = "/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses"
FOLDERS = f"/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/{PLURAL}"
SECRETS = "/api/v1/namespaces/{namespace}/secrets"
EDIT_ATTEMPTS = 5
# Server-side apply (JSON is YAML).
APPLY_HEADERS = {"Content-Type": "application/apply-patch+yaml"}
# An Ingress no watch has shown (the default of apply_ingress and delete_ingress): read it.
NOT_SEEN: Any = object()


def _as_file(data: str | bytes) -> str:
    """Client certificates given inline (kubeconfig `*-data`) as a private file the SSL context loads;
    removed again as soon as it is loaded (see client_for)."""
    fd, path = tempfile.mkstemp(prefix="ragdown-operator-")
    with os.fdopen(fd, "wb") as out:
        out.write(data if isinstance(data, bytes) else data.encode())
    return path


def client_for(info: kopf.ConnectionInfo, timeout_s: float) -> httpx.AsyncClient:
    headers = {}
    if info.token:
        headers["Authorization"] = f"{info.scheme or 'Bearer'} {info.token}"
    verify: ssl.SSLContext | bool = True
    if info.insecure:
        verify = False
    elif info.ca_path or info.ca_data:
        verify = ssl.create_default_context()
        if info.ca_path:
            verify.load_verify_locations(cafile=os.fsdecode(info.ca_path))
        else:
            ca = info.ca_data
            verify.load_verify_locations(cadata=ca.decode() if isinstance(ca, bytes) else ca)
    cert = info.certificate_path or (_as_file(info.certificate_data) if info.certificate_data else None)
    key = info.private_key_path or (_as_file(info.private_key_data) if info.private_key_data else None)
    if cert:
        if not isinstance(verify, ssl.SSLContext):
            verify = ssl.create_default_context() if verify else ssl._create_unverified_context()
        try:
            verify.load_cert_chain(os.fsdecode(cert), os.fsdecode(key) if key else None)
        finally:
            for given, path in ((info.certificate_data, cert), (info.private_key_data, key)):
                if given and path:
                    os.unlink(path)
    auth = httpx.BasicAuth(info.username, info.password or "") if info.username else None
    return httpx.AsyncClient(
        base_url=info.server, headers=headers, verify=verify, auth=auth, timeout=timeout_s
    )


def connection_info(
    kube_url: str, namespace: str, settings: kopf.OperatorSettings
) -> kopf.ConnectionInfo | None:
    """An explicit API URL (tests, local runs), else the pod's service account, else a kubeconfig."""
    if kube_url:
        return kopf.ConnectionInfo(server=kube_url, default_namespace=namespace)
    return kopf.login_with_service_account(settings=settings) or kopf.login_with_kubeconfig(settings=settings)


class Kube:
    """Ingress calls in one namespace; 404 reads as None, 409 on create as "exists"."""

    def __init__(self, http: httpx.AsyncClient | None = None) -> None:
        self._http = http  # set at login (use_connection), or given (tests)

    def use_connection(self, info: kopf.ConnectionInfo, timeout_s: float = 30.0) -> httpx.AsyncClient | None:
        """Calls go through a client for `info` from now on; the one it replaces is returned to be closed."""
        replaced, self._http = self._http, client_for(info, timeout_s)
        return replaced

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    async def _call(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        if self._http is None:
            raise KubeUnavailable("not logged in to the Kubernetes API yet")
        try:
            response = await self._http.request(method, url, **kwargs)
        except httpx.TransportError as error:
            # str() of httpx's timeouts is often empty (a PoolTimeout when every connection is busy).
            raise KubeUnavailable(
                f"the Kubernetes API did not answer: {str(error) or type(error).__name__}"
            ) from error
        if response.status_code >= 500:
            status, text = response.status_code, response.text[:200]
            raise KubeUnavailable(f"the Kubernetes API answered {status}: {text}")
        return response

    async def get_ingress(self, namespace: str, name: str) -> dict[str, Any] | None:
        response = await self._call("GET", f"{INGRESSES.format(namespace=namespace)}/{name}")
        if response.status_code == 404:
            return None
        response.raise_for_status()
        return dict(response.json())

    async def apply_ingress(self, namespace: str, ingress: dict[str, Any], seen: Any = NOT_SEEN) -> str:
        """Create the Ingress or bring the fields we own to `ingress` by server-side apply: "created",
        "updated" or "unchanged". `ingress` holds only what the operator sets; the API server keeps
        every field someone else set (the class the default IngressClass assigned, a person's or another
        controller's labels and annotations) and removes those we applied before and no longer do. It is
        read first and not written when what we own already matches, so a quiet resync sends nothing.
        `seen` is the Ingress as a watch last saw it (resync_view.py): when it shows ours with
        nothing to change, that is the answer and nothing is read. An Ingress of that name this resource
        does not own, or another release made, is never touched (IngressConflict)."""
        name = ingress["metadata"]["name"]
        if isinstance(seen, dict) and _settled(seen, ingress):
            return "unchanged"
        url = f"{INGRESSES.format(namespace=namespace)}/{name}"
        current = await self.get_ingress(namespace, name)
        if current is None:
            # Not forced: an Ingress someone made since the read, with fields of its own, is refused
            # (409) rather than taken over, and checked below like any other.
            response = await self._apply(url, ingress, force=False)
            if response.status_code != 409:
                response.raise_for_status()
                return "created"
            current = await self.get_ingress(namespace, name) or {}
        _check_ours(current, ingress)
        if not owned_drift(current, ingress):
            return "unchanged"
        legacy = legacy_cleanup(current, ingress)
        if legacy:
            response = await self._call(
                "PATCH",
                url,
                params={"fieldManager": FIELD_MANAGER},
                content=json.dumps(legacy),
                headers={"Content-Type": "application/merge-patch+json"},
            )
            response.raise_for_status()
        # Forced: ours, so a field of ours someone else changed since is taken back (drift).
        response = await self._apply(url, ingress, force=True)
        response.raise_for_status()
        return "updated"

    async def _apply(self, url: str, obj: dict[str, Any], *, force: bool) -> httpx.Response:
        params = {"fieldManager": FIELD_MANAGER, **({"force": "true"} if force else {})}
        return await self._call("PATCH", url, params=params, content=json.dumps(obj), headers=APPLY_HEADERS)

    async def delete_ingress(self, namespace: str, name: str, owner: str, seen: Any = NOT_SEEN) -> bool:
        """Delete the Ingress if this resource (uid `owner`) owns it; False when there is none of ours.
        `seen` (resync_view.py): a watched namespace with no Ingress of that name (None), or one that is
        not ours, is the answer without a read."""
        if seen is None or (isinstance(seen, dict) and owner not in _owner_uids(seen)):
            return False
        current = await self.get_ingress(namespace, name)
        if current is None or owner not in _owner_uids(current):
            return False
        response = await self._call("DELETE", f"{INGRESSES.format(namespace=namespace)}/{name}")
        if response.status_code == 404:
            return False
        response.raise_for_status()
        return True

    async def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """A Secret's `data` (base64 values, as the API serves them), or None when there is no such
        Secret. The body is never put into an error: it holds the values."""
        response = await self._call("GET", f"{SECRETS.format(namespace=namespace)}/{name}")
        if response.status_code == 404:
            return None
        if response.status_code == 403:
            raise SecretForbidden(f"{response.status_code} reading Secret {name}")
        if response.status_code >= 400:
            raise KubeUnavailable(f"the Kubernetes API answered {response.status_code} for Secret {name}")
        data = response.json().get("data") or {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    async def folders(self, namespace: str) -> list[dict[str, Any]]:
        """Every RagdownFolder in the namespace; none when the CRD is gone."""
        response = await self._call("GET", FOLDERS.format(namespace=namespace))
        if response.status_code == 404:
            return []
        response.raise_for_status()
        return [dict(item) for item in response.json().get("items") or []]

    async def edit_folder(
        self, namespace: str, name: str, edit: Callable[[dict[str, Any]], list[dict[str, Any]]]
    ) -> bool:
        """Apply the JSON-patch operations `edit` makes of the resource as it is now, on condition that
        it has not changed since it was read (kopf edits the same lists); read again and retry if it
        has. False when there was nothing to do: the resource is gone, or `edit` asked for nothing."""
        url = f"{FOLDERS.format(namespace=namespace)}/{name}"
        for _ in range(EDIT_ATTEMPTS):
            response = await self._call("GET", url)
            if response.status_code == 404:
                return False
            response.raise_for_status()
            current = response.json()
            operations = edit(current)
            if not operations:
                return False
            version = current.get("metadata", {}).get("resourceVersion")
            guard = [{"op": "test", "path": "/metadata/resourceVersion", "value": version}]
            response = await self._call(
                "PATCH",
                url,
                content=json.dumps(guard + operations),
                headers={"Content-Type": "application/json-patch+json"},
            )
            if response.status_code == 404:
                return False
            if response.status_code not in (409, 422):  # changed since read: again
                response.raise_for_status()
                return True
        raise KubeUnavailable(f"RagdownFolder {name} changed under every attempt to edit it: try again")


def _check_ours(current: dict[str, Any], ingress: dict[str, Any]) -> None:
    """Refuse an Ingress of the wanted name that this resource does not own, or another release made."""
    name = ingress["metadata"]["name"]
    if _owner_uid(ingress) not in _owner_uids(current):
        raise IngressConflict(f"Ingress {name} exists and is not this resource's: rename or delete it")
    labels = current.get("metadata", {}).get("labels") or {}
    theirs, ours = labels.get(LABEL_INSTANCE), ingress["metadata"]["labels"].get(LABEL_INSTANCE)
    if labels.get(LABEL_MANAGED_BY) == MANAGED_BY and theirs and theirs != ours:
        raise IngressConflict(
            f"Ingress {name} routes for release {theirs}: two releases reconcile this resource; label "
            f"it {INSTANCE_LABEL}=<release> (or, if it moved to release {ours}, delete the Ingress)"
        )


def _settled(seen: dict[str, Any], ingress: dict[str, Any]) -> bool:
    """Whether a watched copy shows nothing to do: ours, this release's, and no drift in what we own."""
    try:
        _check_ours(seen, ingress)
    except IngressConflict:
        return False
    return not owned_drift(seen, ingress)


def _owner_uid(obj: dict[str, Any]) -> str:
    uids = _owner_uids(obj)
    return uids[0] if uids else ""


def _owner_uids(obj: dict[str, Any]) -> list[str]:
    return [str(ref.get("uid")) for ref in obj.get("metadata", {}).get("ownerReferences") or []]


def _names(tree: dict[str, Any], prefix: str = "f:") -> set[str]:
    """The fields (`f:<name>`) or list items (`k:<key JSON>`) a FieldsV1 tree lists at its top."""
    return {key[2:] for key in tree if key.startswith(prefix)}


def applied_fields(current: dict[str, Any]) -> dict[str, set[str]] | None:
    """What our server-side applies own on `current`, read from its managedFields at the depth the
    operator compares: label and annotation keys, owner reference uids, the spec's top-level fields
    (its `rules` and `tls` are atomic lists, owned whole). None when we never applied to it."""
    for entry in current.get("metadata", {}).get("managedFields") or []:
        if (entry.get("manager"), entry.get("operation")) != (FIELD_MANAGER, "Apply") or entry.get(
            "subresource"
        ):
            continue
        fields = entry.get("fieldsV1") or {}
        meta = fields.get("f:metadata") or {}
        refs = _names(meta.get("f:ownerReferences") or {}, "k:")
        return {
            "labels": _names(meta.get("f:labels") or {}),
            "annotations": _names(meta.get("f:annotations") or {}),
            "ownerReferences": {str(json.loads(ref).get("uid", "")) for ref in refs},
            "spec": _names(fields.get("f:spec") or {}),
        }
    return None


def owned_drift(current: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """The parts of `current` where what we own is not what we apply (`wanted`): a value of ours that
    differs (a person's edit moves the field to them), a field we applied before and no longer want,
    one we now want. Empty when applying `wanted` would change nothing; fields we never applied are
    not looked at. All of it when we never applied (an Ingress made before server-side apply)."""
    owned = applied_fields(current)
    if owned is None:
        return ["managedFields"]
    meta, want = current.get("metadata", {}), wanted["metadata"]
    drift = []
    for field in ("labels", "annotations"):
        have, keys = meta.get(field) or {}, want.get(field) or {}
        if owned[field] != set(keys) or any(have.get(key) != value for key, value in keys.items()):
            drift.append(field)
    refs = {str(ref.get("uid")): ref for ref in meta.get("ownerReferences") or []}
    wanted_refs = {str(ref.get("uid")): ref for ref in want.get("ownerReferences") or []}
    if owned["ownerReferences"] != set(wanted_refs) or any(refs.get(u) != r for u, r in wanted_refs.items()):
        drift.append("ownerReferences")
    spec = current.get("spec") or {}
    if owned["spec"] != set(wanted["spec"]) or any(spec.get(k) != v for k, v in wanted["spec"].items()):
        drift.append("spec")
    return drift


def _recorded_keys(meta: dict[str, Any]) -> dict[str, list[str]]:
    """The keys an operator before server-side apply recorded in LEGACY_OWNED_KEYS; none when absent
    or unreadable."""
    try:
        record = json.loads((meta.get("annotations") or {}).get(LEGACY_OWNED_KEYS) or "{}")
    except ValueError:
        return {}
    if not isinstance(record, dict):
        return {}
    return {field: [str(key) for key in keys] for field, keys in record.items() if isinstance(keys, list)}


def legacy_cleanup(current: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """For an Ingress an operator before server-side apply wrote: the merge patch removing its
    LEGACY_OWNED_KEYS record and the keys that record names and `wanted` no longer sets (the API
    server would keep them: they belong to that operator's plain writes, not to our applies). Empty
    when there is no record."""
    meta = current.get("metadata", {})
    if LEGACY_OWNED_KEYS not in (meta.get("annotations") or {}):
        return {}
    recorded = _recorded_keys(meta)
    patch: dict[str, Any] = {"metadata": {"annotations": {LEGACY_OWNED_KEYS: None}}}
    for field in ("labels", "annotations"):
        have, keys = meta.get(field) or {}, wanted["metadata"].get(field) or {}
        for key in recorded.get(field, []):
            if key in have and key not in keys:
                patch["metadata"].setdefault(field, {})[key] = None
    return patch
