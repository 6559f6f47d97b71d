"""The few Kubernetes API calls kopf does not make for us: read, create, patch and delete Ingresses;
list RagdownFolders and edit their metadata (release.py); read the Secrets `spec.tokens` names
(tokens.py).

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
    GROUP,
    INSTANCE_LABEL,
    LABEL_INSTANCE,
    LABEL_MANAGED_BY,
    MANAGED_BY,
    OWNED_KEYS,
    PLURAL,
    VERSION,
)

INGRESSES = "/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses"
FOLDERS = f"/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/{PLURAL}"
SECRETS = "/api/v1/namespaces/{namespace}/secrets"
EDIT_ATTEMPTS = 5


class KubeUnavailable(Exception):  # noqa: N818
    """The Kubernetes API did not answer or failed on its side: retry later."""


class SecretForbidden(Exception):  # noqa: N818
    """The API server refused the operator a Secret (403): its Role lacks `get` on secrets."""


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
            raise KubeUnavailable(f"the Kubernetes API did not answer: {error}") from error
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

    async def apply_ingress(self, namespace: str, ingress: dict[str, Any]) -> str:
        """Create the Ingress or bring the keys we own to what is wanted: "created", "updated" or
        "unchanged". Labels and annotations someone else added (a cloud controller, a policy engine)
        are neither compared nor touched, so a quiet resync sends nothing. An Ingress of that name
        this resource does not own, or another release made, is never touched (IngressConflict)."""
        name = ingress["metadata"]["name"]
        ingress = with_owned_keys(ingress)
        current = await self.get_ingress(namespace, name)
        if current is None:
            response = await self._call("POST", INGRESSES.format(namespace=namespace), json=ingress)
            if response.status_code != 409:  # 409: a create racing ours; compare and patch below
                response.raise_for_status()
                return "created"
            current = await self.get_ingress(namespace, name) or {}
        if _owner_uid(ingress) not in _owner_uids(current):
            raise IngressConflict(f"Ingress {name} exists and is not this resource's: rename or delete it")
        labels = current.get("metadata", {}).get("labels") or {}
        theirs, ours = labels.get(LABEL_INSTANCE), ingress["metadata"]["labels"].get(LABEL_INSTANCE)
        if labels.get(LABEL_MANAGED_BY) == MANAGED_BY and theirs and theirs != ours:
            raise IngressConflict(
                f"Ingress {name} routes for release {theirs}: two releases reconcile this resource; label "
                f"it {INSTANCE_LABEL}=<release> (or, if it moved to release {ours}, delete the Ingress)"
            )
        patch = owned_patch(current, ingress)
        if not patch:
            return "unchanged"
        response = await self._call(
            "PATCH",
            f"{INGRESSES.format(namespace=namespace)}/{name}",
            json=patch,
            headers={"Content-Type": "application/merge-patch+json"},
        )
        response.raise_for_status()
        return "updated"

    async def delete_ingress(self, namespace: str, name: str, owner: str) -> bool:
        """Delete the Ingress if this resource (uid `owner`) owns it; False when there is none of ours."""
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


class IngressConflict(Exception):  # noqa: N818
    """An Ingress with the wanted name belongs to someone else."""


def _owner_uid(obj: dict[str, Any]) -> str:
    uids = _owner_uids(obj)
    return uids[0] if uids else ""


def _owner_uids(obj: dict[str, Any]) -> list[str]:
    return [str(ref.get("uid")) for ref in obj.get("metadata", {}).get("ownerReferences") or []]


def merge_patch(old: Any, new: Any) -> Any:
    """The RFC 7386 merge patch turning `old` into `new` (null deletes a key; lists are replaced)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old or old[key] != value:
            patch[key] = merge_patch(old.get(key), value)
    return patch


def with_owned_keys(wanted: dict[str, Any]) -> dict[str, Any]:
    """`wanted` with the record of the label and annotation keys it sets (OWNED_KEYS)."""
    meta = wanted["metadata"]
    record = {field: sorted(meta.get(field) or {}) for field in ("labels", "annotations")}
    annotations = {**(meta.get("annotations") or {}), OWNED_KEYS: json.dumps(record, separators=(",", ":"))}
    return {**wanted, "metadata": {**meta, "annotations": annotations}}


def _recorded_keys(meta: dict[str, Any]) -> dict[str, list[str]]:
    """The keys the last write recorded in OWNED_KEYS; none when absent or unreadable (an Ingress
    written before the record existed: nothing is removed, everything wanted is set)."""
    try:
        record = json.loads((meta.get("annotations") or {}).get(OWNED_KEYS) or "{}")
    except ValueError:
        return {}
    if not isinstance(record, dict):
        return {}
    return {field: [str(key) for key in keys] for field, keys in record.items() if isinstance(keys, list)}


def owned_patch(current: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """The merge patch that brings what we own in `current` to `wanted` (from with_owned_keys); empty
    when nothing of ours differs. Ours: the spec (a person's edit to it is drift), the labels and
    annotations `wanted` sets, and those the last write recorded (removed once no longer wanted).
    Server-side apply would track this for us, but the emulated API the tests run against has none."""
    meta, want = current.get("metadata", {}), wanted["metadata"]
    recorded = _recorded_keys(meta)
    patch: dict[str, Any] = {}
    for field in ("labels", "annotations"):
        have, keys = meta.get(field) or {}, want.get(field) or {}
        dropped = [key for key in recorded.get(field, []) if key in have and key not in keys]
        changes = {key: None for key in dropped} | {k: v for k, v in keys.items() if have.get(k) != v}
        if changes:
            patch.setdefault("metadata", {})[field] = changes
    if current.get("spec") != wanted["spec"]:
        patch["spec"] = merge_patch(current.get("spec") or {}, wanted["spec"])
    return patch
