"""The few Kubernetes API calls kopf does not make for us: read, create, patch and delete Ingresses.

It uses the credentials kopf logged in with (`use_connection`), so tests against an emulated API
server and a pod's service account work the same way."""

from __future__ import annotations

import os
import ssl
import tempfile
from typing import Any

import httpx
import kopf

INGRESSES = "/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses"


class KubeUnavailable(Exception):  # noqa: N818
    """The Kubernetes API did not answer or failed on its side: retry later."""


def _as_file(data: str | bytes) -> str:
    """Client certificates given inline (kubeconfig `*-data`) as a private file httpx can load."""
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
    if cert and isinstance(verify, ssl.SSLContext):
        verify.load_cert_chain(os.fsdecode(cert), os.fsdecode(key) if key else None)
    auth = httpx.BasicAuth(info.username, info.password or "") if info.username else None
    return httpx.AsyncClient(
        base_url=info.server, headers=headers, verify=verify, auth=auth, timeout=timeout_s
    )


class Kube:
    """Ingress calls in one namespace; 404 reads as None, 409 on create as "exists"."""

    def __init__(self) -> None:
        self._http: httpx.AsyncClient | None = None

    def use_connection(self, info: kopf.ConnectionInfo, timeout_s: float = 30.0) -> None:
        self._http = client_for(info, timeout_s)

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
        """Create the Ingress, or merge-patch it to the wanted shape: "created", "updated" or "unchanged"."""
        name = ingress["metadata"]["name"]
        current = await self.get_ingress(namespace, name)
        if current is None:
            response = await self._call("POST", INGRESSES.format(namespace=namespace), json=ingress)
            if response.status_code != 409:  # a create racing ours: patch below
                response.raise_for_status()
                return "created"
            current = await self.get_ingress(namespace, name) or {}
        if _covers(current, ingress):
            return "unchanged"
        response = await self._call(
            "PATCH",
            f"{INGRESSES.format(namespace=namespace)}/{name}",
            json=ingress,
            headers={"Content-Type": "application/merge-patch+json"},
        )
        response.raise_for_status()
        return "updated"

    async def delete_ingress(self, namespace: str, name: str) -> bool:
        response = await self._call("DELETE", f"{INGRESSES.format(namespace=namespace)}/{name}")
        if response.status_code == 404:
            return False
        response.raise_for_status()
        return True


def _covers(current: Any, wanted: Any) -> bool:
    """Whether `current` already holds everything in `wanted` (the API adds fields of its own)."""
    if isinstance(wanted, dict):
        return isinstance(current, dict) and all(_covers(current.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return (
            isinstance(current, list)
            and len(current) == len(wanted)
            and all(_covers(c, w) for c, w in zip(current, wanted, strict=True))
        )
    return bool(current == wanted)
