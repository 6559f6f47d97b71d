"""Which RagdownFolders this operator reconciles, so that two releases can share a namespace.

- A resource labelled `ragdown.dev/instance: <release>` is reconciled by that release's operator only
  (RAGDOWN_OPERATOR_INSTANCE, the Helm release name).
- A resource without the label is reconciled by every operator with RAGDOWN_OPERATOR_CLAIM_UNLABELLED
  on, the default: a namespace with one release needs no label. With two releases in a namespace,
  turn it off on all but one of them (or label every resource); two operators claiming one resource
  each write their own indexer, and the second one's Ingress is refused (`IngressConflict`).
- A resource that `ragdown-operator release-all` let go of (annotation `ragdown.dev/released:
  <release>`, release.py) is left alone by that release's operator until the operator starts again.

Moving a resource to another release (changing its label) is not a migration: the old release's
operator lets go of it without applying its deletionPolicy, and the new one adopts the folder on its
own indexer. Each release has its own finalizer, `ragdown.dev/finalizer-<release>`, because kopf
removes its finalizer from every resource its filter does not match: with one name for all, each
operator would strip the other's.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragdown_operator.constants import INSTANCE_LABEL, RELEASED
from ragdown_operator.settings import OperatorSettings


def belongs(labels: Mapping[str, str], settings: OperatorSettings) -> bool:
    """Whether a resource with these labels is this release's (released or not)."""
    owner = labels.get(INSTANCE_LABEL)
    return owner == settings.instance if owner else settings.claim_unlabelled


def claims(labels: Mapping[str, str], annotations: Mapping[str, str], settings: OperatorSettings) -> bool:
    """Whether this operator reconciles a resource with these labels and annotations."""
    return belongs(labels, settings) and annotations.get(RELEASED) != settings.instance
