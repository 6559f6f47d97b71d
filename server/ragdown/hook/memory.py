"""Per-session hook memory (docs/hook.md#session-memory): which chunks a session was already given.

Behind a small interface so that, with several replicas, the primary can hold it for all of them.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Protocol

MAX_SESSIONS = 200
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


class LruSessionMemory:
    """In-process memory: at most `max_sessions`, the least recently used evicted first, and a
    session idle for `ttl_s` forgotten."""

    def __init__(
        self,
        max_sessions: int = MAX_SESSIONS,
        ttl_s: float = SESSION_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_sessions = max_sessions
        self.ttl_s = ttl_s
        self.clock = clock
        self._sessions: OrderedDict[str, tuple[float, set[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def _touch(self, key: str) -> set[str]:
        now = self.clock()
        # The oldest entries come first: drop the expired ones from the front.
        while self._sessions:
            oldest_key, (last_used, _) = next(iter(self._sessions.items()))
            if now - last_used < self.ttl_s:
                break
            del self._sessions[oldest_key]
        entry = self._sessions.get(key)
        ids = entry[1] if entry is not None else set()
        self._sessions[key] = (now, ids)
        self._sessions.move_to_end(key)
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)
        return ids

    def seen(self, key: str) -> frozenset[str]:
        with self._lock:
            return frozenset(self._touch(key))

    def add(self, key: str, ids: Iterable[str]) -> None:
        with self._lock:
            self._touch(key).update(ids)

    def forget(self, key: str) -> None:
        with self._lock:
            self._sessions.pop(key, None)

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, key: object) -> bool:
        return key in self._sessions
