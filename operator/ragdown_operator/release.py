"""Letting go of this release's RagdownFolders when the release goes away, and taking them back.

`ragdown-operator release-all` (the chart's pre-delete hook) marks every RagdownFolder of the release
`ragdown.dev/released: <release>` and removes the release's finalizer from it (and the finalizer that
older versions shared), so that neither `helm uninstall` nor a namespace deleted later waits on an
operator that is gone. The mark keeps the operator, still running while the hook runs, from adding
its finalizer back (instance.claims); the operator clears its release's marks when it starts again.
The indexer is not touched: folders keep their settings and stay managed by their resources, which a
new install of the release adopts as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragdown_operator import instance
from ragdown_operator.constants import LEGACY_FINALIZER, RELEASED, finalizer_for
from ragdown_operator.kube import Kube
from ragdown_operator.settings import OperatorSettings

Edit = Callable[[dict[str, Any]], list[dict[str, Any]]]
RELEASED_PATH = "/metadata/annotations/" + RELEASED.replace("~", "~0").replace("/", "~1")


def without_finalizers(names: set[str]) -> Edit:
    def edit(current: dict[str, Any]) -> list[dict[str, Any]]:
        have = current.get("metadata", {}).get("finalizers") or []
        kept = [name for name in have if name not in names]
        return [] if kept == have else [{"op": "replace", "path": "/metadata/finalizers", "value": kept}]

    return edit


def released_by(release: str) -> Edit:
    """Marked as let go of by `release`, and without its finalizers."""
    drop = without_finalizers({finalizer_for(release), LEGACY_FINALIZER})

    def edit(current: dict[str, Any]) -> list[dict[str, Any]]:
        annotations = current.get("metadata", {}).get("annotations")
        if annotations is None:
            mark = [{"op": "add", "path": "/metadata/annotations", "value": {RELEASED: release}}]
        elif annotations.get(RELEASED) != release:
            mark = [{"op": "add", "path": RELEASED_PATH, "value": release}]
        else:
            mark = []
        return mark + drop(current)

    return edit


def unmarked(release: str) -> Edit:
    def edit(current: dict[str, Any]) -> list[dict[str, Any]]:
        annotations = current.get("metadata", {}).get("annotations") or {}
        return [{"op": "remove", "path": RELEASED_PATH}] if annotations.get(RELEASED) == release else []

    return edit


async def release_all(kube: Kube, settings: OperatorSettings) -> list[str]:
    """Let go of every RagdownFolder of this release; the names of those that changed."""

    def ours(meta: dict[str, Any]) -> bool:
        return instance.belongs(meta.get("labels") or {}, settings)

    return await _edit_each(kube, settings.namespace, ours, released_by(settings.instance))


async def reclaim(kube: Kube, settings: OperatorSettings) -> list[str]:
    """At start: clear this release's marks, so its operator reconciles those resources again."""

    def marked(meta: dict[str, Any]) -> bool:
        return (meta.get("annotations") or {}).get(RELEASED) == settings.instance

    return await _edit_each(kube, settings.namespace, marked, unmarked(settings.instance))


async def _edit_each(
    kube: Kube, namespace: str, which: Callable[[dict[str, Any]], bool], edit: Edit
) -> list[str]:
    """`edit` every RagdownFolder whose metadata `which` picks; the names of those that changed."""
    changed = []
    for folder in await kube.folders(namespace):
        meta = folder.get("metadata", {})
        if which(meta) and await kube.edit_folder(namespace, meta["name"], edit):
            changed.append(meta["name"])
    return changed


async def drop_legacy_finalizer(kube: Kube, namespace: str, name: str) -> None:
    """The finalizer older versions shared: this operator never removes it otherwise, and a resource
    that still has it would never go."""
    await kube.edit_folder(namespace, name, without_finalizers({LEGACY_FINALIZER}))
