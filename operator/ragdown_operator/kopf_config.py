"""How kopf runs this operator: where it keeps its state on the resource, the finalizer, what it posts
as events, and how long a watch may last. Applied once, at startup, from the operator's settings."""

from __future__ import annotations

import logging

import kopf

from ragdown_operator.constants import PERSISTENCE_PREFIX, finalizer_for
from ragdown_operator.settings import OperatorSettings


def configure(settings: kopf.OperatorSettings, config: OperatorSettings) -> None:
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=PERSISTENCE_PREFIX)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=PERSISTENCE_PREFIX, key="last-handled-configuration"
    )
    settings.persistence.finalizer = finalizer_for(config.instance)
    # One known namespace and one known CRD: no listing of namespaces or CRDs, so the Role needs no
    # cluster-wide read rights.
    settings.scanning.disabled = True
    # Events on the resource come from what we did (handlers.announce), not from every log line.
    settings.posting.level = logging.WARNING
    # A watch behind a load balancer can go silent without being closed: the API server ends each
    # watch after server_timeout, and one that has not ended by client_timeout is cut and reopened.
    settings.watching.server_timeout = config.watch_server_timeout_s
    settings.watching.client_timeout = config.watch_client_timeout_s
    settings.watching.connect_timeout = config.watch_connect_timeout_s
