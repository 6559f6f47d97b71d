"""For a reader: the primary answers, and which index it serves from (docs/doctor.md#reader)."""

from __future__ import annotations

from ragdown.doctor.index import IndexState
from ragdown.doctor.report import Check, fail, ok
from ragdown.doctor.target import Target
from ragdown.roles.client import PrimaryClient
from ragdown.roles.lock import SOCKET_NAME
from ragdown.roles.token import local_token

READER = "primary"


def check_primary(target: Target, index: IndexState) -> Check:
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
    meta = index.meta
    if meta is None:
        return fail(READER, f"the primary at {url} answers, but this reader finds no index", index.check.fix)
    built = meta.source or meta.embedder
    served = f"index table {meta.lance_dir} version {index.version}, built with {built}"
    return ok(READER, f"the primary at {url} answers; this reader serves {served}")
