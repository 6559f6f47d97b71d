"""The process's one LanceDB session and how a database is connected in it (docs/reliability.md).

`LANCE_CPU_THREADS` is set (to at least 2, unless the user set it) before lancedb is imported:
lance's thread pool with fewer than two threads deadlocks building a full-text index on small hosts.
lancedb itself is imported when a table is first opened, not with this module, and without its
REST namespace client (ragdown.indexing.lance_import; docs/design.md#start-up).
"""

from __future__ import annotations

import os

os.environ.setdefault("LANCE_CPU_THREADS", str(max(2, os.cpu_count() or 2)))

import threading
from typing import TYPE_CHECKING, Any

from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.lance_import import import_lancedb
from ragdown.modes import private_files

if TYPE_CHECKING:
    import lancedb

# LanceDB caches index and manifest data per table version, and its default bounds are gigabytes:
# every write makes new versions (and a new full-text index), so a long-running server grew ~0.45 MB
# per write without bound. One bounded session per process, shared by every store (docs/reliability.md).
_cache_limits_mb = (64, 16)
_session: lancedb.Session | None = None
_session_lock = threading.Lock()


def set_cache_limits(index_mb: int, metadata_mb: int) -> None:
    """LanceDB's index and metadata cache bounds for the stores this process opens from now on."""
    global _cache_limits_mb, _session
    with _session_lock:
        if (index_mb, metadata_mb) != _cache_limits_mb:
            _cache_limits_mb = (index_mb, metadata_mb)
            _session = None


def lance_session() -> lancedb.Session:
    global _session
    lancedb = import_lancedb()

    with _session_lock:
        if _session is None:
            index_mb, metadata_mb = _cache_limits_mb
            _session = lancedb.Session(
                index_cache_size_bytes=index_mb << 20, metadata_cache_size_bytes=metadata_mb << 20
            )
        return _session


def connect(location: IndexLocation, name: str) -> Any:
    """The LanceDB database in the directory `name` under the index's location, read as fresh as
    the location promises, in the process's bounded session."""
    lancedb = import_lancedb()
    with private_files():  # connecting makes the directory
        return lancedb.connect(
            location.table_uri(name),
            read_consistency_interval=location.refresh,
            storage_options=location.storage_options() or None,
            session=lance_session(),
        )
