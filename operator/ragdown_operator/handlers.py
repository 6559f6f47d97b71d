"""kopf handlers: when a RagdownFolder is reconciled, and how failures are retried.

- create / update / resume: reconcile now;
- a timer: reconcile every RAGDOWN_OPERATOR_RESYNC_S, which repairs drift and refreshes counts;
- delete (kopf's finalizer): apply `deletionPolicy`, or give up after a bounded wait;
- at start, before any watch: take back what `release-all` let go of (release.py);
- only this release's resources (instance.py: the `ragdown.dev/instance` label);
- an unreachable indexer is `TemporaryError` with exponential backoff; an invalid spec is
  `PermanentError` with a status message (retried only when the spec changes).
Configuration is read once, when this module is imported (by `main`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import time
from typing import Any, NoReturn

import httpx
import kopf

from ragdown_operator import instance, kopf_config, metrics, release
from ragdown_operator.constants import (
    GROUP,
    LEGACY_FINALIZER,
    PLURAL,
    ROUTED,
    SYNCED,
    VERSION,
    manager_of,
)
from ragdown_operator.indexer import IndexerClient, IndexerRefused, IndexerUnreachable
from ragdown_operator.kube import IngressConflict, Kube, KubeUnavailable, client_for, connection_info
from ragdown_operator.reconcile import Outcome, Reconciler, write_status
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import FolderSpec, InvalidSpecError, ingress_name
from ragdown_operator.status import Condition

CONFIG = OperatorSettings()
KUBE = Kube()
INDEXER = IndexerClient(CONFIG.indexer_url, CONFIG.token, CONFIG.request_timeout_s)
RECONCILER = Reconciler(CONFIG, INDEXER, KUBE)
MAX_DELAY_S = 300.0
LOG = logging.getLogger("ragdown_operator")
READY: dict[tuple[str, str], bool] = {}
# One reconcile at a time per resource: kopf runs the timer beside the change and delete handlers, and
# a late timer run must not re-apply an older spec (or re-create a folder the finalizer just released).
LOCKS: dict[str, asyncio.Lock] = {}
INDEXER_SEEN: dict[str, object] = {"reachable": None, "at": None}


def lock_for(body: kopf.Body) -> asyncio.Lock:
    return LOCKS.setdefault(body.metadata.uid or body.metadata.name or "", asyncio.Lock())


def indexer_answered(reachable: bool) -> None:
    INDEXER_SEEN.update(reachable=reachable, at=time.time())
    metrics.INDEXER_UP.set(1 if reachable else 0)


@kopf.on.startup()
async def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    kopf_config.configure(settings, CONFIG)
    metrics.serve(CONFIG.metrics_port)


@kopf.on.startup(id="reclaim")
async def reclaim(settings: kopf.OperatorSettings, **_: Any) -> None:
    """Before any watch: take back what `release-all` let go of (release.py), since this operator
    is running again. kopf's login comes later, so this one logs in by itself."""
    info = connection_info(CONFIG.kube_url, CONFIG.namespace, settings)
    if info is None:
        return  # kopf's own login fails next, and says why
    kube = Kube(client_for(info, CONFIG.request_timeout_s))
    try:
        names = await release.reclaim(kube, CONFIG)
    except (KubeUnavailable, httpx.HTTPStatusError) as error:
        raise kopf.TemporaryError(
            f"could not take back what release-all let go of: {error}", delay=CONFIG.retry_s
        ) from None
    finally:
        await kube.close()
    if names:
        LOG.info(f"reconciling again what release-all let go of: {', '.join(names)}")


@kopf.on.cleanup()
async def close(**_: Any) -> None:
    await INDEXER.close()
    await KUBE.close()


@kopf.on.login()
def login(settings: kopf.OperatorSettings, **_: Any) -> kopf.ConnectionInfo | None:
    info = connection_info(CONFIG.kube_url, CONFIG.namespace, settings)
    if info is not None:
        KUBE.use_connection(info, CONFIG.request_timeout_s)
    return info


@kopf.on.probe(id="indexer")
def indexer_reachable(**_: Any) -> dict[str, object]:
    """On the liveness endpoint: whether the indexer answered the last reconcile, and when. No call
    from here: a slow indexer must not make the probe time out and get the operator restarted."""
    return dict(INDEXER_SEEN)


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
    generation = body.metadata.get("generation")  # of the spec read next, before any await

    def halt(kind: str, reason: str, message: str, again: int | None) -> NoReturn:
        stop(body, patch, outcome, Condition(kind, False, reason, message), generation, trigger, again)

    try:
        spec = FolderSpec.of(body.spec, body.metadata.name or "")
    except InvalidSpecError as error:
        halt(SYNCED, "InvalidSpec", str(error), None)
    try:
        await RECONCILER.reconcile(body, spec, outcome)
    except IndexerUnreachable as error:
        indexer_answered(False)
        halt(SYNCED, "IndexerUnreachable", str(error), retry)
    except IndexerRefused as error:
        indexer_answered(True)
        if error.code == "managed":  # another resource may be deleted meanwhile: keep retrying
            message = f"{error}; two RagdownFolders name folder {spec.folder}: delete one of them"
            halt(SYNCED, "FolderManagedElsewhere", message, retry)
        if error.code == "reader":
            message = f"RAGDOWN_OPERATOR_INDEXER_URL points at a reader, not the indexer: {error}"
            halt(SYNCED, "IndexerIsReader", message, retry)
        if error.status in (401, 403):
            message = f"the indexer refused the operator's token ({error}): check the chart's Secret"
            halt(SYNCED, "IndexerUnauthorized", message, retry)
        halt(SYNCED, "IndexerRefused", str(error), None)
    except IngressConflict as error:
        halt(ROUTED, "IngressConflict", str(error), retry)
    except (KubeUnavailable, httpx.HTTPStatusError) as error:
        indexer_answered(True)  # the folder step passed: Synced is already in the outcome
        halt(ROUTED, "IngressFailed", str(error), retry)
    indexer_answered(True)
    write_status(patch, body, outcome, generation, reconciled=True)
    _count_ready(body, True)
    metrics.RECONCILES.labels(trigger, "ok").inc()
    for reason, message in outcome.events:
        announce(body, "Normal", reason, message)
    if trigger != "timer":
        for reason, message in outcome.warnings:
            announce(body, "Warning", reason, message)


def stop(
    body: kopf.Body,
    patch: kopf.Patch,
    outcome: Outcome,
    failed: Condition,
    generation: int | None,
    trigger: str,
    retry: int | None,
) -> NoReturn:
    """Record why this reconcile stopped, then hand kopf the verdict: with `retry` a TemporaryError
    (backoff from its count), without one a PermanentError (retried only when the spec changes)."""
    outcome.conditions.append(failed)
    write_status(patch, body, outcome, generation, reconciled=False)
    _count_ready(body, False)
    metrics.RECONCILES.labels(trigger, "invalid" if retry is None else "retry").inc()
    # A timer repeats what a handler already reported, and a retry what its first attempt did.
    if trigger != "timer" and not retry:
        announce(body, "Warning", failed.reason, failed.message)
    if retry is None:
        raise kopf.PermanentError(f"{failed.reason}: {failed.message}")
    raise kopf.TemporaryError(f"{failed.reason}: {failed.message}", delay=backoff(retry))


def claimed(labels: kopf.Labels, annotations: kopf.Annotations, **_: Any) -> bool:
    """Every handler's filter: only this release's RagdownFolders (instance.py)."""
    return instance.claims(labels, annotations, CONFIG)


@kopf.on.resume(GROUP, VERSION, PLURAL, id="reconcile-on-resume", when=claimed)
@kopf.on.create(GROUP, VERSION, PLURAL, id="reconcile-on-create", when=claimed)
@kopf.on.update(GROUP, VERSION, PLURAL, id="reconcile-on-update", field="spec", when=claimed)
async def reconcile_on_change(body: kopf.Body, patch: kopf.Patch, retry: int, **_: Any) -> None:
    async with lock_for(body):
        await run(body, patch, retry, "change")


@kopf.timer(
    GROUP,
    VERSION,
    PLURAL,
    id="resync",
    interval=CONFIG.resync_s,
    initial_delay=CONFIG.resync_s,
    when=claimed,
)
async def resync(body: kopf.Body, patch: kopf.Patch, **kwargs: Any) -> None:
    """Re-apply the spec (a person's edit behind our back is undone) and refresh the counts."""
    async with lock_for(body):
        if body.metadata.get("deletionTimestamp"):  # the finalizer has it now
            return
        # On PermanentError the status says why; the change handler retries when the spec changes.
        with contextlib.suppress(kopf.PermanentError):
            await run(body, patch, int(kwargs.get("retry") or 0), "timer")


@kopf.on.delete(GROUP, VERSION, PLURAL, id="apply-deletion-policy", when=claimed)
async def apply_deletion_policy(body: kopf.Body, retry: int, runtime: datetime.timedelta, **_: Any) -> None:
    """Retain: the documents stay and MCP is turned off. Delete: the folder is removed. Either way
    the route goes first, so agents lose access before anything else changes. Deletion waits for an
    unreachable indexer at most RAGDOWN_OPERATOR_DELETION_TIMEOUT_S, then lets the resource go
    without the policy applied, and says so (`DeletionAbandoned`)."""
    namespace = body.metadata.namespace or CONFIG.namespace
    name = body.metadata.name or ""
    try:
        spec: FolderSpec | None = FolderSpec.of(body.spec, name)
    except InvalidSpecError:
        spec = None  # never applied: nothing on the indexer is ours
    try:
        async with lock_for(body):
            await KUBE.delete_ingress(namespace, ingress_name(name), body.metadata.uid or "")
            if spec is not None:
                await _release(spec, manager_of(namespace, name), body)
    # IndexerRefused here is a reader URL or a refused token (_release swallows "not ours"): the
    # folder is still ours to release, so deletion waits.
    except (IndexerUnreachable, IndexerRefused, KubeUnavailable, httpx.HTTPStatusError) as error:
        left = CONFIG.deletion_timeout_s - runtime.total_seconds()
        if left > 0:
            if retry == 0:
                announce(body, "Warning", "DeletionWaiting", str(error))
            raise kopf.TemporaryError(str(error), delay=min(backoff(retry), left)) from None
        _abandon(body, spec, manager_of(namespace, name), error)
    if LEGACY_FINALIZER in (body.metadata.get("finalizers") or []):
        try:
            await release.drop_legacy_finalizer(KUBE, namespace, name)
        except (KubeUnavailable, httpx.HTTPStatusError) as error:
            raise kopf.TemporaryError(str(error), delay=backoff(retry)) from None
    _count_ready(body, None)
    LOCKS.pop(body.metadata.uid or name, None)


def _abandon(body: kopf.Body, spec: FolderSpec | None, manager: str, error: Exception) -> None:
    """Say what deletion left undone, where a person will look: an Event, the log, a metric."""
    message = f"gave up after {CONFIG.deletion_timeout_s:g} s ({error})"
    if spec is not None:
        message += (
            f"; folder {spec.folder} keeps its settings and stays managed by {manager}: create the "
            f"resource again to manage it, or release it on the indexer with PATCH /api/folders/"
            f'{spec.folder}, header X-Ragdown-Manager: {manager}, body {{"managed_by": null}}'
        )
    announce(body, "Warning", "DeletionAbandoned", message)
    LOG.warning(f"{manager}: deletion abandoned: {message}")
    metrics.CHANGES.labels("deletion_abandoned").inc()


async def _release(spec: FolderSpec, manager: str, body: kopf.Body) -> None:
    """Apply the deletion policy to the folder, if it is still ours. A folder that existed before this
    resource adopted it is only released, even under Delete: its documents were never ours to remove."""
    try:
        if spec.deletionPolicy == "Delete":
            try:
                await INDEXER.delete(spec.folder, manager)
            except IndexerRefused as error:
                if error.code != "not_created":
                    raise
                announce(body, "Warning", "FolderKept", str(error))
            else:
                announce(body, "Normal", "FolderDeleted", f"deleted folder {spec.folder} and its documents")
                metrics.CHANGES.labels("folder_deleted").inc()
                return
        await INDEXER.patch(spec.folder, {"mcp": False, "managed_by": None}, manager)
        announce(body, "Normal", "FolderReleased", f"folder {spec.folder} kept, MCP turned off")
        metrics.CHANGES.labels("folder_released").inc()
    except IndexerRefused as error:
        # Gone already, or never ours (another resource's, or a person's): nothing to undo.
        if error.status == 404 or error.code in ("managed", "not_managed"):
            return
        raise
