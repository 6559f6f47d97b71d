"""kopf handlers: when a RagdownFolder is reconciled, and how failures are retried.

- create / update / resume: reconcile now;
- a timer: reconcile every RAGDOWN_OPERATOR_RESYNC_S, which repairs drift and refreshes counts;
- delete (kopf's finalizer): apply `deletionPolicy`, or give up after a bounded wait;
- at start, before any watch: take back what `release-all` let go of (release.py);
- only this release's resources (instance.py: the `ragdown.dev/instance` label);
- an unreachable indexer is `TemporaryError` with exponential backoff; an invalid spec is
  `PermanentError` with a status message (retried only when the spec changes).
Nothing is made at import: `register` (called by `main`) makes the clients from the settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import logging
import time
from collections.abc import Mapping
from typing import Any, NoReturn

import httpx
import kopf

from ragdown.errors import Code
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
from ragdown_operator.errors import (
    IndexerRefused,
    IndexerUnreachable,
    IngressConflict,
    InvalidSpecError,
    KubeUnavailable,
    TokenUnavailable,
)
from ragdown_operator.indexer import IndexerClient
from ragdown_operator.kube import Kube, client_for, connection_info
from ragdown_operator.reconcile import Outcome, Reconciler, write_status
from ragdown_operator.resync_view import FolderListing, IngressView, ResyncView, ingress_entry
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import FolderSpec, ingress_name
from ragdown_operator.status import Condition

MAX_DELAY_S = 300.0
LOG = logging.getLogger("ragdown_operator")
# The Synced reasons raised as PermanentError (docs/cluster.md#failures-and-retries): not retried until
# the spec changes, by the timer neither.
PERMANENT_REASONS = frozenset({"InvalidSpec", "IndexerRefused"})


def failed_for_good(body: kopf.Body) -> bool:
    """Whether this generation of the spec already ended in a permanent failure, as its status says.
    The status, not memory: an operator restarted meanwhile keeps quiet too."""
    generation = body.metadata.get("generation")
    return any(
        isinstance(c, Mapping)
        and c.get("type") == SYNCED
        and c.get("status") == "False"
        and c.get("reason") in PERMANENT_REASONS
        and c.get("observedGeneration") == generation
        for c in body.status.get("conditions") or []
    )


class Operator:
    """What the handlers share, made when the operator starts (`register`), never at import: the
    settings, the clients of the Kubernetes API and of the indexer, and the per-resource state."""

    def __init__(self, config: OperatorSettings) -> None:
        self.config = config
        self.kube = Kube()
        self.indexer = IndexerClient(config.indexer_url, config.token, config.request_timeout_s)
        self.reconciler = Reconciler(config, self.indexer, self.kube)
        self.ready: dict[tuple[str, str], bool] = {}
        # One reconcile at a time per resource: kopf runs the timer beside the change and delete
        # handlers, and a late timer run must not re-apply an older spec (or re-create a folder the
        # finalizer just released).
        self.locks: dict[str, asyncio.Lock] = {}
        self.indexer_seen: dict[str, object] = {"reachable": None, "at": None}
        # At most this many reconciles talk to the API and the indexer at once: a thousand resources
        # resumed together queue here instead of exhausting the clients' connection pools.
        self.slots = asyncio.Semaphore(config.max_concurrent_reconciles)
        # The resyncs of a quarter interval share one listing of the indexer's folders.
        self.listing = FolderListing(self.indexer.folders, max_age_s=max(1.0, config.resync_s / 4))

    def lock_for(self, body: kopf.Body) -> asyncio.Lock:
        return self.locks.setdefault(body.metadata.uid or body.metadata.name or "", asyncio.Lock())

    def indexer_answered(self, reachable: bool) -> None:
        self.indexer_seen.update(reachable=reachable, at=time.time())
        metrics.INDEXER_UP.set(1 if reachable else 0)

    async def configure(self, settings: kopf.OperatorSettings, **_: Any) -> None:
        kopf_config.configure(settings, self.config)
        metrics.serve(self.config.metrics_port)

    async def reclaim(self, settings: kopf.OperatorSettings, **_: Any) -> None:
        """Before any watch: take back what `release-all` let go of (release.py), since this operator
        is running again. kopf's login comes later, so this one logs in by itself."""
        info = connection_info(self.config.kube_url, self.config.namespace, settings)
        if info is None:
            return  # kopf's own login fails next, and says why
        kube = Kube(client_for(info, self.config.request_timeout_s))
        try:
            names = await release.reclaim(kube, self.config)
        except (KubeUnavailable, httpx.HTTPStatusError) as error:
            raise kopf.TemporaryError(
                f"could not take back what release-all let go of: {error}", delay=self.config.retry_s
            ) from None
        finally:
            await kube.close()
        if names:
            LOG.info(f"reconciling again what release-all let go of: {', '.join(names)}")

    async def close(self, **_: Any) -> None:
        await self.indexer.close()
        await self.kube.close()

    async def login(self, settings: kopf.OperatorSettings, **_: Any) -> kopf.ConnectionInfo | None:
        """kopf logs in at start and again whenever the API refuses the credentials (a rotated token):
        each login makes a new client, and the one it replaces is closed, not left with its pool open."""
        info = connection_info(self.config.kube_url, self.config.namespace, settings)
        if info is not None:
            replaced = self.kube.use_connection(info, self.config.request_timeout_s)
            if replaced is not None:
                await replaced.aclose()
        return info

    def indexer_reachable(self, **_: Any) -> dict[str, object]:
        """On the liveness endpoint: whether the indexer answered the last reconcile, and when. No call
        from here: a slow indexer must not make the probe time out and get the operator restarted."""
        return dict(self.indexer_seen)

    def announce(self, body: kopf.Body, kind: str, reason: str, message: str) -> None:
        """An Event on the resource (`kubectl describe rdf` shows it). kopf.event, not kopf.info: the
        posting level is raised so kopf's own log lines stay off the resource."""
        kopf.event(body, type=kind, reason=reason, message=message)

    def backoff(self, retry: int) -> float:
        return float(min(self.config.retry_s * 2 ** min(retry, 10), MAX_DELAY_S))

    def _count_ready(self, body: kopf.Body, ready: bool | None) -> None:
        key = (body.metadata.namespace or "", body.metadata.name or "")
        if ready is None:
            self.ready.pop(key, None)
        else:
            self.ready[key] = ready
        for state in (True, False):
            metrics.FOLDERS.labels(str(state).lower()).set(sum(1 for v in self.ready.values() if v is state))

    async def run(
        self, body: kopf.Body, patch: kopf.Patch, retry: int, trigger: str, view: ResyncView | None = None
    ) -> None:
        """One reconcile, its status, events and metrics; failures mapped to kopf's retry semantics."""
        outcome = Outcome()
        generation = body.metadata.get("generation")  # of the spec read next, before any await

        def halt(kind: str, reason: str, message: str, again: int | None) -> NoReturn:
            failed = Condition(kind, False, reason, message)
            self.stop(body, patch, outcome, failed, generation, trigger, again)

        try:
            spec = FolderSpec.of(body.spec, body.metadata.name or "")
        except InvalidSpecError as error:
            halt(SYNCED, "InvalidSpec", str(error), None)
        try:
            async with self.slots:
                await self.reconciler.reconcile(body, spec, outcome, view)
        except IndexerUnreachable as error:
            self.indexer_answered(False)
            halt(SYNCED, "IndexerUnreachable", str(error), retry)
        except IndexerRefused as error:
            self.indexer_answered(True)
            if error.code == Code.MANAGED:  # another resource may be deleted meanwhile: keep retrying
                message = f"{error}; two RagdownFolders name folder {spec.folder}: delete one of them"
                halt(SYNCED, "FolderManagedElsewhere", message, retry)
            if error.code == Code.READER:
                message = f"RAGDOWN_OPERATOR_INDEXER_URL points at a reader, not the indexer: {error}"
                halt(SYNCED, "IndexerIsReader", message, retry)
            if error.status in (401, 403):
                message = f"the indexer refused the operator's token ({error}): check the chart's Secret"
                halt(SYNCED, "IndexerUnauthorized", message, retry)
            halt(SYNCED, "IndexerRefused", str(error), None)
        except TokenUnavailable as error:  # the Secret may be created or fixed later: retried
            halt(SYNCED, error.reason, str(error), retry)
        except IngressConflict as error:
            halt(ROUTED, "IngressConflict", str(error), retry)
        except (KubeUnavailable, httpx.HTTPStatusError) as error:
            self.indexer_answered(True)  # the folder step passed: Synced is already in the outcome
            halt(ROUTED, "IngressFailed", str(error), retry)
        self.indexer_answered(True)
        write_status(patch, body, outcome, generation, reconciled=True)
        self._count_ready(body, True)
        metrics.RECONCILES.labels(trigger, "ok").inc()
        for reason, message in outcome.events:
            self.announce(body, "Normal", reason, message)
        if trigger != "timer":
            for reason, message in outcome.warnings:
                self.announce(body, "Warning", reason, message)

    def stop(
        self,
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
        self._count_ready(body, False)
        metrics.RECONCILES.labels(trigger, "invalid" if retry is None else "retry").inc()
        # A timer repeats what a handler already reported, and a retry what its first attempt did.
        if trigger != "timer" and not retry:
            self.announce(body, "Warning", failed.reason, failed.message)
        if retry is None:
            raise kopf.PermanentError(f"{failed.reason}: {failed.message}")
        raise kopf.TemporaryError(f"{failed.reason}: {failed.message}", delay=self.backoff(retry))

    def claimed(self, labels: kopf.Labels, annotations: kopf.Annotations, **_: Any) -> bool:
        """Every handler's filter: only this release's RagdownFolders (instance.py)."""
        return instance.claims(labels, annotations, self.config)

    async def reconcile_on_change(self, body: kopf.Body, patch: kopf.Patch, retry: int, **_: Any) -> None:
        async with self.lock_for(body):
            await self.run(body, patch, retry, "change")

    def first_resync(self, body: kopf.Body, **_: Any) -> float:
        """Seconds until a resource's first resync: one interval, plus a part of another that its uid
        decides. The timer is sharp (each run starts one interval after the one before started, however
        long that one waited for a slot), so resources created or resumed together keep resyncing spread
        over the interval instead of in one burst."""
        uid = body.metadata.uid or body.metadata.name or ""
        fraction = int.from_bytes(hashlib.sha256(uid.encode()).digest()[:4], "big") / 2**32
        return self.config.resync_s * (1 + fraction)

    async def resync(self, body: kopf.Body, patch: kopf.Patch, **kwargs: Any) -> None:
        """Re-apply the spec (a person's edit behind our back is undone) and refresh the counts, from
        the watched Ingresses and a shared listing of the indexer's folders (resync_view.py)."""
        view = ResyncView(IngressView(kwargs["ingresses"]), self.listing)
        async with self.lock_for(body):
            if body.metadata.get("deletionTimestamp"):  # the finalizer has it now
                return
            # A spec that failed for good stays failed until it changes (the change handler runs then):
            # re-running it every resync would only re-count the failure and keep the alert firing.
            if failed_for_good(body):
                return
            with contextlib.suppress(kopf.PermanentError):
                await self.run(body, patch, int(kwargs.get("retry") or 0), "timer", view)

    async def apply_deletion_policy(
        self, body: kopf.Body, retry: int, runtime: datetime.timedelta, **_: Any
    ) -> None:
        """Retain: the documents stay and MCP is turned off. Delete: the folder is removed. Either way
        the route goes first, so agents lose access before anything else changes. Deletion waits for an
        unreachable indexer at most RAGDOWN_OPERATOR_DELETION_TIMEOUT_S, then lets the resource go
        without the policy applied, and says so (`DeletionAbandoned`)."""
        namespace = body.metadata.namespace or self.config.namespace
        name = body.metadata.name or ""
        try:
            spec: FolderSpec | None = FolderSpec.of(body.spec, name)
        except InvalidSpecError:
            spec = None  # never applied: nothing on the indexer is ours
        try:
            async with self.lock_for(body), self.slots:
                await self.kube.delete_ingress(namespace, ingress_name(name), body.metadata.uid or "")
                if spec is not None:
                    await self._release(spec, manager_of(namespace, name), body)
        # IndexerRefused here is a reader URL or a refused token (_release swallows "not ours"): the
        # folder is still ours to release, so deletion waits.
        except (IndexerUnreachable, IndexerRefused, KubeUnavailable, httpx.HTTPStatusError) as error:
            left = self.config.deletion_timeout_s - runtime.total_seconds()
            if left > 0:
                if retry == 0:
                    self.announce(body, "Warning", "DeletionWaiting", str(error))
                raise kopf.TemporaryError(str(error), delay=min(self.backoff(retry), left)) from None
            self._abandon(body, spec, manager_of(namespace, name), error)
        if LEGACY_FINALIZER in (body.metadata.get("finalizers") or []):
            try:
                await release.drop_legacy_finalizer(self.kube, namespace, name)
            except (KubeUnavailable, httpx.HTTPStatusError) as error:
                raise kopf.TemporaryError(str(error), delay=self.backoff(retry)) from None
        self._count_ready(body, None)
        self.locks.pop(body.metadata.uid or name, None)

    def _abandon(self, body: kopf.Body, spec: FolderSpec | None, manager: str, error: Exception) -> None:
        """Say what deletion left undone, where a person will look: an Event, the log, a metric."""
        message = f"gave up after {self.config.deletion_timeout_s:g} s ({error})"
        if spec is not None:
            message += (
                f"; folder {spec.folder} keeps its settings and stays managed by {manager}: create the "
                f"resource again to manage it, or release it on the indexer with PATCH /api/folders/"
                f'{spec.folder}, header X-Ragdown-Manager: {manager}, body {{"managed_by": null}}'
            )
        self.announce(body, "Warning", "DeletionAbandoned", message)
        LOG.warning(f"{manager}: deletion abandoned: {message}")
        metrics.CHANGES.labels("deletion_abandoned").inc()

    async def _release(self, spec: FolderSpec, manager: str, body: kopf.Body) -> None:
        """Apply the deletion policy to the folder, if it is still ours. A folder that existed before this
        resource adopted it is only released, even under Delete: its documents were never ours to remove."""
        try:
            if spec.deletionPolicy == "Delete":
                try:
                    await self.indexer.delete(spec.folder, manager)
                except IndexerRefused as error:
                    if error.code != Code.NOT_CREATED:
                        raise
                    self.announce(body, "Warning", "FolderKept", str(error))
                else:
                    self.announce(
                        body, "Normal", "FolderDeleted", f"deleted folder {spec.folder} and its documents"
                    )
                    metrics.CHANGES.labels("folder_deleted").inc()
                    return
            await self.indexer.patch(spec.folder, {"mcp": False, "managed_by": None}, manager)
            self.announce(body, "Normal", "FolderReleased", f"folder {spec.folder} kept, MCP turned off")
            metrics.CHANGES.labels("folder_released").inc()
        except IndexerRefused as error:
            # Gone already, or never ours (another resource's, or a person's): nothing to undo.
            if error.status == 404 or error.code in (Code.MANAGED, Code.NOT_MANAGED):
                return
            raise


def register(config: OperatorSettings, registry: kopf.OperatorRegistry | None = None) -> Operator:
    """Make the operator for `config` and register its handlers with kopf (its default registry
    unless one is given): the timer's interval and the instance filter come from the settings."""
    operator = Operator(config)
    where: dict[str, Any] = {"registry": registry} if registry is not None else {}
    kopf.on.startup(id="configure", **where)(operator.configure)
    kopf.on.startup(id="reclaim", **where)(operator.reclaim)
    kopf.on.cleanup(id="close", **where)(operator.close)
    kopf.on.login(id="login", **where)(operator.login)
    kopf.on.probe(id="indexer", **where)(operator.indexer_reachable)
    # The namespace's Ingresses as a watch keeps them, for the resync (resync_view.py). kopf starts no
    # handler until this index holds the first listing.
    kopf.index("networking.k8s.io", "v1", "ingresses", id="ingresses", **where)(ingress_entry)
    when = operator.claimed
    kopf.on.resume(GROUP, VERSION, PLURAL, id="reconcile-on-resume", when=when, **where)(
        operator.reconcile_on_change
    )
    kopf.on.create(GROUP, VERSION, PLURAL, id="reconcile-on-create", when=when, **where)(
        operator.reconcile_on_change
    )
    kopf.on.update(GROUP, VERSION, PLURAL, id="reconcile-on-update", field="spec", when=when, **where)(
        operator.reconcile_on_change
    )
    interval = config.resync_s
    kopf.timer(
        GROUP,
        VERSION,
        PLURAL,
        id="resync",
        interval=interval,
        sharp=True,
        initial_delay=operator.first_resync,
        when=when,
        **where,
    )(operator.resync)
    kopf.on.delete(GROUP, VERSION, PLURAL, id="apply-deletion-policy", when=when, **where)(
        operator.apply_deletion_policy
    )
    return operator
