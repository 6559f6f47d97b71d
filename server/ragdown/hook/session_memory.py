"""Per-session hook memory (docs/hook.md#session-memory): which chunks a session was already given.

Behind a small interface so that, with several replicas, the primary can hold it for all of them.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Protocol

MAX_SESSIONS = 200  # per pool: per folder, and per root caller kind
MAX_POOLS = 1000
SESSION_TTL_S = 24 * 3600.0  # a session idle this long is forgotten (agents' sessions rarely last a day)
ROOT_KEY_PREFIX = "*"  # a root /mcp call without a folder has a memory of its own


def session_key(scope: str, session_id: str) -> str:
    """One memory per endpoint: a folder, a subfolder and the root never share one."""
    return f"{scope}\0{session_id}"


class SessionMemory(Protocol):
    def seen(self, key: str) -> frozenset[str]:
        """The chunk ids given to this session (marks it most recently used)."""
        ...

    def add(self, key: str, ids: Iterable[str]) -> None: ...

    def forget(self, key: str) -> None: ...


def pool_of(key: str) -> str:
    """The tenant a session key belongs to: the folder of its scope, or the root caller kind."""
    return key.split("\0", 1)[0].split("/", 1)[0]


class LruSessionMemory:
    """In-process memory, one pool per folder (and per root caller kind, `pool_of`): at most
    `max_sessions` in each pool, its least recently used evicted first, and a session idle for
    `ttl_s` forgotten. A team that opens sessions by the thousand evicts only its own
    (docs/security.md#tenants); `max_pools` bounds the pools, least recently used out."""

    def __init__(
        self,
        max_sessions: int = MAX_SESSIONS,
        ttl_s: float = SESSION_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        max_pools: int = MAX_POOLS,
    ) -> None:
        self.max_sessions = max_sessions
        self.max_pools = max_pools
        self.ttl_s = ttl_s
        self.clock = clock
        self._pools: OrderedDict[str, OrderedDict[str, tuple[float, set[str]]]] = OrderedDict()
        self._lock = threading.Lock()

    def _touch(self, key: str) -> set[str]:
        now = self.clock()
        name = pool_of(key)
        sessions = self._pools.get(name)
        if sessions is None:
            sessions = self._pools[name] = OrderedDict()
        self._pools.move_to_end(name)
        while len(self._pools) > self.max_pools:
            self._pools.popitem(last=False)
        self._expire(sessions, now)
        self._expire(next(iter(self._pools.values())), now)  # the pool least recently used, too
        entry = sessions.get(key)
        ids = entry[1] if entry is not None else set()
        sessions[key] = (now, ids)
        sessions.move_to_end(key)
        while len(sessions) > self.max_sessions:
            sessions.popitem(last=False)
        return ids

    def _expire(self, sessions: OrderedDict[str, tuple[float, set[str]]], now: float) -> None:
        """The oldest entries come first: drop the expired ones from the front."""
        while sessions:
            oldest_key, (last_used, _) = next(iter(sessions.items()))
            if now - last_used < self.ttl_s:
                break
            del sessions[oldest_key]

    def seen(self, key: str) -> frozenset[str]:
        with self._lock:
            return frozenset(self._touch(key))

    def add(self, key: str, ids: Iterable[str]) -> None:
        with self._lock:
            self._touch(key).update(ids)

    def forget(self, key: str) -> None:
        with self._lock:
            sessions = self._pools.get(pool_of(key))
            if sessions is not None:
                sessions.pop(key, None)

    def __len__(self) -> int:
        return sum(len(sessions) for sessions in self._pools.values())

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        sessions = self._pools.get(pool_of(key))
        entry = sessions.get(key) if sessions is not None else None
        return entry is not None and self.clock() - entry[0] < self.ttl_s
