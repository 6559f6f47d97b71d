"""For a reader: the primary answers, and which index it serves from (docs/doctor.md#reader)."""

from __future__ import annotations

from ragdown.doctor.report import Check, fail, ok
from ragdown.doctor.target import Target
from ragdown.engine.lifecycle import index_location
from ragdown.errors import RagdownError
from ragdown.roles.client import PrimaryClient
from ragdown.roles.lock import SOCKET_NAME
from ragdown.roles.token import local_token

READER = "primary"


def check_primary(target: Target) -> Check:
    settings = target.settings
    if settings.role != "reader":
        return ok(READER, f"this server is not a reader (RAGDOWN_ROLE={settings.role}): nothing to reach")
    url = settings.primary_url or f"unix://{target.data_dir / SOCKET_NAME}"
    client = PrimaryClient(url, lambda: settings.internal_token or local_token(target.data_dir, create=False))
    try:
        reachable = client.probe()
    finally:
        client.close()
    if not reachable:
        return fail(
            READER,
            f"the primary at {url} does not answer (searches go on; writes are refused)",
            "start the primary (indexer), or correct RAGDOWN_PRIMARY_URL and RAGDOWN_INTERNAL_TOKEN",
        )
    try:
        meta = index_location(target.data_dir, settings).read_meta(fresh=True)
    except RagdownError as error:
        return fail(
            READER,
            f"the primary at {url} answers, but the index cannot be read: {error}",
            "check RAGDOWN_INDEX_URI and its credentials",
        )
    served = (
        f"index table {meta.lance_dir} built with {meta.source or meta.embedder}" if meta else "no index yet"
    )
    return ok(READER, f"the primary at {url} answers; it serves {served}")
