"""kopf handlers: when a RagdownFolder is reconciled, and how failures are retried.

- create / update / resume: reconcile now;
- a timer: reconcile every RAGDOWN_OPERATOR_RESYNC_S, which repairs drift and refreshes counts;
- delete (kopf's finalizer): apply `deletionPolicy`;
- an unreachable indexer is `TemporaryError` with exponential backoff; an invalid spec is
  `PermanentError` with a status message (retried only when the spec changes).
Configuration is read once, when this module is imported (by `main`).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, NoReturn

import httpx
import kopf

from ragdown_operator import metrics
from ragdown_operator.constants import (
    FINALIZER,
    GROUP,
    PERSISTENCE_PREFIX,
    PLURAL,
    ROUTED,
    SYNCED,
    VERSION,
    manager_of,
)
from ragdown_operator.indexer import IndexerClient, IndexerRefused, IndexerUnreachable
from ragdown_operator.kube import Kube, KubeUnavailable
from ragdown_operator.reconcile import Outcome, Reconciler, write_status
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import FolderSpec, InvalidSpecError, ingress_name
from ragdown_operator.status import Condition

CONFIG = OperatorSettings()
KUBE = Kube()
INDEXER = IndexerClient(CONFIG.indexer_url, CONFIG.token, CONFIG.request_timeout_s)
RECONCILER = Reconciler(CONFIG, INDEXER, KUBE)
MAX_DELAY_S = 300.0
READY: dict[tuple[str, str], bool] = {}


@kopf.on.startup()
async def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=PERSISTENCE_PREFIX)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=PERSISTENCE_PREFIX, key="last-handled-configuration"
    )
    settings.persistence.finalizer = FINALIZER
    # One known namespace and one known CRD: no listing of namespaces or CRDs, so the Role needs no
    # cluster-wide read rights.
    settings.scanning.disabled = True
    # Events on the resource come from what we did (kopf.info/warn below), not from every log line.
    settings.posting.level = logging.WARNING
    metrics.serve(CONFIG.metrics_port)


@kopf.on.cleanup()
async def close(**_: Any) -> None:
    await INDEXER.close()
    await KUBE.close()


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """An explicit API URL (tests, local runs), else the pod's service account, else a kubeconfig."""
    if CONFIG.kube_url:
        info: kopf.ConnectionInfo | None = kopf.ConnectionInfo(
            server=CONFIG.kube_url, default_namespace=CONFIG.namespace
        )
    else:
        info = kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)
    if info is not None:
        KUBE.use_connection(info, CONFIG.request_timeout_s)
    return info


@kopf.on.probe(id="indexer")
async def indexer_reachable(**_: Any) -> bool:
    """Reported on the liveness endpoint; an unreachable indexer does not make the operator unhealthy."""
    try:
        await INDEXER.folder("")
    except (IndexerUnreachable, IndexerRefused):
        metrics.INDEXER_UP.set(0)
        return False
    metrics.INDEXER_UP.set(1)
    return True


def announce(body: kopf.Body, kind: str, reason: str, message: str) -> None:
    """An Event on the resource (`kubectl describe rdf` shows it). kopf.event, not kopf.info: the
    posting level is raised so kopf's own log lines stay off the resource."""
    kopf.event(body, type=kind, reason=reason, message=message)


def backoff(retry: int) -> float:
    return float(min(CONFIG.retry_s * 2 ** min(retry, 10), MAX_DELAY_S))


def _count_ready(body: kopf.Body, ready: bool | None) -> None:
    key = (body.metadata.namespace or "", body.metadata.name or "")
    if ready is None:
        READY.pop(key, None)
    else:
        READY[key] = ready
    for state in (True, False):
        metrics.FOLDERS.labels(str(state).lower()).set(sum(1 for v in READY.values() if v is state))


async def run(body: kopf.Body, patch: kopf.Patch, retry: int, trigger: str) -> None:
    """One reconcile, its status, events and metrics; failures mapped to kopf's retry semantics."""
    outcome = Outcome()

    def halt(kind: str, reason: str, message: str, again: int | None) -> NoReturn:
        stop(body, patch, outcome, Condition(kind, False, reason, message), trigger, again)

    try:
        spec = FolderSpec.of(body.spec, body.metadata.name or "")
    except InvalidSpecError as error:
        halt(SYNCED, "InvalidSpec", str(error), None)
    try:
        await RECONCILER.reconcile(body, spec, outcome)
    except IndexerUnreachable as error:
        metrics.INDEXER_UP.set(0)
        halt(SYNCED, "IndexerUnreachable", str(error), retry)
    except IndexerRefused as error:
        metrics.INDEXER_UP.set(1)
        if error.code == "managed":  # another resource may be deleted meanwhile: keep retrying
            message = f"{error}; two RagdownFolders name folder {spec.folder}: delete one of them"
            halt(SYNCED, "FolderManagedElsewhere", message, retry)
        halt(SYNCED, "IndexerRefused", str(error), None)
    except (KubeUnavailable, httpx.HTTPStatusError) as error:
        metrics.INDEXER_UP.set(1)  # the folder step passed: Synced is already in the outcome
        halt(ROUTED, "IngressFailed", str(error), retry)
    metrics.INDEXER_UP.set(1)
    write_status(patch, body, outcome, reconciled=True)
    _count_ready(body, True)
    metrics.RECONCILES.labels(trigger, "ok").inc()
    for reason, message in outcome.events:
        announce(body, "Normal", reason, message)


def stop(
    body: kopf.Body,
    patch: kopf.Patch,
    outcome: Outcome,
    failed: Condition,
    trigger: str,
    retry: int | None,
) -> NoReturn:
    """Record why this reconcile stopped, then hand kopf the verdict: with `retry` a TemporaryError
    (backoff from its count), without one a PermanentError (retried only when the spec changes)."""
    outcome.conditions.append(failed)
    write_status(patch, body, outcome, reconciled=False)
    _count_ready(body, False)
    metrics.RECONCILES.labels(trigger, "invalid" if retry is None else "retry").inc()
    # A timer repeats what a handler already reported, and a retry what its first attempt did.
    if trigger != "timer" and not retry:
        announce(body, "Warning", failed.reason, failed.message)
    if retry is None:
        raise kopf.PermanentError(f"{failed.reason}: {failed.message}")
    raise kopf.TemporaryError(f"{failed.reason}: {failed.message}", delay=backoff(retry))


@kopf.on.resume(GROUP, VERSION, PLURAL, id="reconcile-on-resume")
@kopf.on.create(GROUP, VERSION, PLURAL, id="reconcile-on-create")
@kopf.on.update(GROUP, VERSION, PLURAL, id="reconcile-on-update", field="spec")
async def reconcile_on_change(body: kopf.Body, patch: kopf.Patch, retry: int, **_: Any) -> None:
    await run(body, patch, retry, "change")


@kopf.timer(GROUP, VERSION, PLURAL, id="resync", interval=CONFIG.resync_s, initial_delay=CONFIG.resync_s)
async def resync(body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
    """Re-apply the spec (a person's edit behind our back is undone) and refresh the counts."""
    # On PermanentError the status says why; the create/update handler retries when the spec changes.
    with contextlib.suppress(kopf.PermanentError):
        await run(body, patch, 0, "timer")


@kopf.on.delete(GROUP, VERSION, PLURAL, id="apply-deletion-policy")
async def apply_deletion_policy(body: kopf.Body, retry: int, **_: Any) -> None:
    """Retain: the documents stay and MCP is turned off. Delete: the folder is removed. Either way
    the route goes first, so agents lose access before anything else changes."""
    namespace = body.metadata.namespace or CONFIG.namespace
    name = body.metadata.name or ""
    try:
        spec: FolderSpec | None = FolderSpec.of(body.spec, name)
    except InvalidSpecError:
        spec = None  # never applied: nothing on the indexer is ours
    try:
        await KUBE.delete_ingress(namespace, ingress_name(name))
        if spec is not None:
            await _release(spec, manager_of(namespace, name), body)
    except (IndexerUnreachable, KubeUnavailable, httpx.HTTPStatusError) as error:
        if retry == 0:
            announce(body, "Warning", "DeletionWaiting", str(error))
        raise kopf.TemporaryError(str(error), delay=backoff(retry)) from None
    _count_ready(body, None)


async def _release(spec: FolderSpec, manager: str, body: kopf.Body) -> None:
    try:
        if spec.deletionPolicy == "Delete":
            await INDEXER.delete(spec.folder, manager)
            announce(body, "Normal", "FolderDeleted", f"deleted folder {spec.folder} and its documents")
            metrics.CHANGES.labels("folder_deleted").inc()
        else:
            await INDEXER.patch(spec.folder, {"mcp": False, "managed_by": None}, manager)
            announce(body, "Normal", "FolderReleased", f"folder {spec.folder} kept, MCP turned off")
            metrics.CHANGES.labels("folder_released").inc()
    except IndexerRefused as error:
        # Missing already, or another resource's folder: nothing of ours to undo.
        if error.status not in (404, 409):
            raise
