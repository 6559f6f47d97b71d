"""Names the operator and the chart agree on: the API group, the finalizer, labels, condition types."""

from __future__ import annotations

GROUP = "ragdown.dev"
VERSION = "v1alpha1"
PLURAL = "ragdownfolders"
KIND = "RagdownFolder"

# kopf's own bookkeeping lives in annotations under our group: the CRD's structural schema would
# prune a `status.kopf` field, and kopf would then run every handler again and again.
PERSISTENCE_PREFIX = GROUP
# Before two releases could share a namespace there was one finalizer for all: removed where found.
LEGACY_FINALIZER = f"{GROUP}/finalizer"

# On a RagdownFolder: the release whose operator reconciles it (instance.py), and the release whose
# `release-all` let go of it.
INSTANCE_LABEL = f"{GROUP}/instance"
RELEASED = f"{GROUP}/released"

# On every Ingress the operator owns; `managed-by` tells a person (and the chart tests) who made it.
LABEL_NAME = "app.kubernetes.io/name"
LABEL_INSTANCE = "app.kubernetes.io/instance"
LABEL_COMPONENT = "app.kubernetes.io/component"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_FOLDER = f"{GROUP}/folder"
MANAGED_BY = "ragdown-operator"
# The field manager of the operator's server-side applies: the API server records which fields of an
# Ingress it owns under this name (docs/cluster.md#field-ownership).
FIELD_MANAGER = "ragdown-operator"
# Where operators before server-side apply recorded the label and annotation keys they set (JSON):
# removed, with the keys it names and no longer wanted, the first time an Ingress is applied.
LEGACY_OWNED_KEYS = f"{GROUP}/owned-keys"

READY = "Ready"
SYNCED = "Synced"
ROUTED = "Routed"
CONDITION_TYPES = (READY, SYNCED, ROUTED)

MANAGER_HEADER = "X-Ragdown-Manager"


def finalizer_for(instance: str) -> str:
    """Each release's own finalizer (instance.py says why); a release name has at most 53 characters,
    so the name part stays within the 63 a finalizer allows."""
    return f"{GROUP}/finalizer-{instance}"


def manager_of(namespace: str, name: str) -> str:
    """What the indexer records in a folder's `.ragdown.json` as `managed_by` (folders/manage.py)."""
    return f"{KIND} {namespace}/{name}"
