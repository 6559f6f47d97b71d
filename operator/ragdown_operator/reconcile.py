"""What reconciling one RagdownFolder ensures, step by step (docs/cluster.md):

1. the spec is valid (else `InvalidSpec`: a status message and no retry until it changes), and the
   tokens it lists can be read from their Secrets (else nothing changes on the folder: tokens.py);
2. the folder exists on the indexer with exactly the spec's settings, marked as managed by this
   resource (created, adopted or repaired);
3. an Ingress routes `/mcp/<folder>` to the readers while `mcp` is on, and none exists while it is off;
4. the status says what holds: conditions, counts, endpoint, observedGeneration.

Handlers (handlers.py) decide when this runs and how failures are retried; this module does the work.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import kopf

from ragdown_operator import metrics
from ragdown_operator.constants import ROUTED, SYNCED, manager_of
from ragdown_operator.errors import IndexerRefused, TokenUnavailable
from ragdown_operator.indexer import FolderState, IndexerClient
from ragdown_operator.ingress import folder_ingress, mcp_path
from ragdown_operator.kube import NOT_SEEN, Kube
from ragdown_operator.resync_view import ResyncView
from ragdown_operator.settings import OperatorSettings
from ragdown_operator.spec import FolderSpec, ingress_name
from ragdown_operator.status import Condition, conditions
from ragdown_operator.tokens import read_tokens


@dataclass
class Outcome:
    """What one reconcile found and did: for the status, the events and the metrics."""

    conditions: list[Condition] = field(default_factory=list)
    events: list[tuple[str, str]] = field(default_factory=list)  # (reason, message)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    files: int | None = None
    chunks: int | None = None
    endpoint: str | None = None


@dataclass
class Reconciler:
    settings: OperatorSettings
    indexer: IndexerClient
    kube: Kube
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("ragdown_operator"))

    async def tokens_of(self, namespace: str, spec: FolderSpec, manager: str) -> list[dict[str, str]] | None:
        """The `{name, sha256}` entries of `spec.tokens`, None when it is left out. Fail closed: while
        one cannot be read nothing on the folder changes, so it keeps the tokens last applied (or is not
        created yet) — except that a folder the shared agents' token reaches now (MCP on, no tokens of
        its own) gets MCP turned off, since the spec says that token must not reach it."""
        if spec.tokens is None:
            return None
        try:
            return await read_tokens(self.kube, namespace, spec.tokens, self.settings.token)
        except TokenUnavailable as error:
            state = await self.indexer.folder(spec.folder)
            if state is None:
                raise TokenUnavailable(
                    error.reason, f"{error}; folder {spec.folder} is not created until then"
                ) from None
            if state.raw.get("tokens"):
                raise TokenUnavailable(
                    error.reason, f"{error}; folder {spec.folder} keeps the tokens it had until then"
                ) from None
            if not state.raw.get("mcp"):
                raise TokenUnavailable(
                    error.reason, f"{error}; MCP is off on folder {spec.folder}, and stays so until then"
                ) from None
            await self.indexer.patch(spec.folder, {"mcp": False, "managed_by": manager}, manager)
            metrics.CHANGES.labels("mcp_held").inc()
            raise TokenUnavailable(
                error.reason,
                f"{error}; MCP is off on folder {spec.folder} until then, so the shared agents' token no "
                "longer reaches it",
            ) from None

    async def ensure_folder(
        self,
        spec: FolderSpec,
        manager: str,
        outcome: Outcome,
        tokens: list[dict[str, str]] | None = None,
        view: ResyncView | None = None,
    ) -> FolderState:
        """Create, adopt or repair the folder; a folder that already matches is left untouched. With a
        resync's `view`, a folder its listing shows as wanted is taken from there (no request)."""
        wanted = spec.settings(manager, tokens)
        if view is not None:
            listed = await view.folders.get(spec.folder)
            if listed is not None and not listed.differs_from(wanted):
                self._warn_unlisted(spec, listed, outcome)
                return listed
        state = await self.indexer.folder(spec.folder)
        if state is None:
            try:
                state = await self.indexer.create(spec.folder, wanted, manager)
            except IndexerRefused as error:
                if error.status != 409 or error.code is not None:  # 409 alone: made meanwhile; patch it
                    raise
                state = await self.indexer.folder(spec.folder)
            else:
                outcome.events.append(("FolderCreated", f"created folder {spec.folder} on the indexer"))
                metrics.CHANGES.labels("folder_created").inc()
                return state
            if state is None:
                raise IndexerRefused(409, f"folder {spec.folder} exists but is not listed", None)
        self._warn_unlisted(spec, state, outcome)
        drift = state.differs_from(wanted)
        if drift:
            state = await self.indexer.patch(spec.folder, wanted, manager)
            # `managed_by` among them: a folder that existed before (or was edited behind our back)
            outcome.events.append(("SettingsApplied", f"folder {spec.folder}: set {', '.join(drift)}"))
            metrics.CHANGES.labels("settings_applied").inc()
        return state

    def _warn_unlisted(self, spec: FolderSpec, state: FolderState, outcome: Outcome) -> None:
        if spec.tokens is None and state.raw.get("tokens"):
            outcome.warnings.append(
                (
                    "UnlistedTokens",
                    f"folder {spec.folder} has tokens of its own ({', '.join(state.raw['tokens'])}) that "
                    "spec.tokens does not list: they still reach it, and the shared agents' token does not. "
                    "List them in spec.tokens, or set tokens: [] to remove them",
                )
            )

    async def ensure_route(
        self, body: kopf.Body, spec: FolderSpec, outcome: Outcome, view: ResyncView | None = None
    ) -> None:
        namespace = body.metadata.namespace or self.settings.namespace
        name = ingress_name(body.metadata.name or "")
        seen = view.ingresses.get(namespace, name) if view is not None else NOT_SEEN
        if not spec.mcp:
            if await self.kube.delete_ingress(namespace, name, body.metadata.uid or "", seen):
                outcome.events.append(("RouteRemoved", f"MCP is off: removed Ingress {name}"))
                metrics.CHANGES.labels("ingress_deleted").inc()
            outcome.conditions.append(Condition(ROUTED, True, "McpOff", "MCP is off: no route"))
            return
        ingress = folder_ingress(body.metadata.name or "", spec.folder, self.settings)
        kopf.adopt(ingress, owner=body)  # deleting the resource deletes its Ingress
        done = await self.kube.apply_ingress(namespace, ingress, seen)
        if done != "unchanged":
            outcome.events.append(
                (f"Route{done.capitalize()}", f"Ingress {name} routes {mcp_path(spec.folder)} to the readers")
            )
            metrics.CHANGES.labels(f"ingress_{done}").inc()
        if mcp_path(spec.folder) != "/mcp/" + spec.folder:
            outcome.warnings.append(
                (
                    "FolderNameNeedsEncoding",
                    f"the MCP path is {mcp_path(spec.folder)}: ingress-nginx and Traefik match the decoded "
                    "path and will not route it; give MCP folders names of letters, digits, '-' and '_'",
                )
            )
        base = self.settings.endpoint_base()
        outcome.endpoint = base + mcp_path(spec.folder) if base else mcp_path(spec.folder)
        outcome.conditions.append(
            Condition(ROUTED, True, "IngressReady", f"Ingress {name} routes {mcp_path(spec.folder)}")
        )

    async def reconcile(
        self, body: kopf.Body, spec: FolderSpec, outcome: Outcome, view: ResyncView | None = None
    ) -> None:
        """One pass of the steps above; a periodic resync passes its `view` (resync_view.py)."""
        namespace = body.metadata.namespace or self.settings.namespace
        manager = manager_of(namespace, body.metadata.name or "")
        tokens = await self.tokens_of(namespace, spec, manager)
        state = await self.ensure_folder(spec, manager, outcome, tokens, view)
        outcome.files, outcome.chunks = state.files, state.chunks
        outcome.conditions.append(
            Condition(
                SYNCED,
                True,
                "SettingsApplied",
                f"folder {spec.folder}: {state.files} documents, {state.chunks} sections",
            )
        )
        await self.ensure_route(body, spec, outcome, view)


def write_status(
    patch: kopf.Patch, body: kopf.Body, outcome: Outcome, generation: int | None, *, reconciled: bool
) -> None:
    """The status after one reconcile of `generation` (read with the spec it applied, since kopf's
    body changes under a running handler); counts and endpoint only where this one learnt them.
    Only fields that differ go into the patch: a resync that changes nothing sends no PATCH."""
    status = body.status
    previous: list[Any] = list(status.get("conditions") or [])
    wanted: dict[str, Any] = {"conditions": conditions(previous, outcome.conditions, generation)}
    if outcome.files is not None:
        wanted |= {"files": outcome.files, "chunks": outcome.chunks}
    if reconciled:
        wanted["endpoint"] = outcome.endpoint or ""
        if generation is not None:
            wanted["observedGeneration"] = generation
    for key, value in wanted.items():
        if status.get(key) != value:
            patch.status[key] = value
