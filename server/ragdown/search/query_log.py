"""The query log (docs/search.md#query-log): one JSON line per search, hook call or read; never document text.

Off by default (`RAGDOWN_QUERY_LOG`). At 10 MB the file becomes `query-log.jsonl.1` (replacing an
older one) and a new file starts, so the log never holds more than about 20 MB.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown.modes import make_private_dir

if TYPE_CHECKING:  # `ragdown tail-log` imports this module and must not load LanceDB
    from ragdown.search.hybrid import Hit

log = logging.getLogger(__name__)

LOG_NAME = "query-log.jsonl"
MAX_BYTES = 10 * 1024 * 1024
# What one entry keeps of a query or prompt: a log entry stays small, so a burst of huge queries
# from one caller cannot rotate everyone's real entries out (docs/security.md#tenants).
MAX_LOGGED_QUERY = 500


def logged_query(query: str) -> dict[str, Any]:
    """The entry's `query`, cut at MAX_LOGGED_QUERY characters; a cut one also says how long it was."""
    if len(query) <= MAX_LOGGED_QUERY:
        return {"query": query}
    return {"query": query[:MAX_LOGGED_QUERY] + "…", "query_chars": len(query)}


def hit_entry(hit: Hit) -> dict[str, Any]:
    return {
        "path": hit.path,
        "start": hit.line_start,
        "end": hit.line_end,
        "similarity": round(hit.similarity, 4),
        "score": round(hit.score, 5),
    }


def prompt_hash(prompt: str) -> str:
    """What the log keeps of a hook prompt unless told to keep prompts: enough to count repeats."""
    return "sha256:" + hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class QueryLog:
    """Appends events to `<data_dir>/query-log.jsonl`; thread-safe, rotation included. Hook prompts
    are a person's own words: they are logged as a hash unless `include_prompts`."""

    def __init__(self, path: Path, max_bytes: int = MAX_BYTES, *, include_prompts: bool = False) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.include_prompts = include_prompts
        self._lock = threading.Lock()

    @property
    def rotated_path(self) -> Path:
        return self.path.with_name(self.path.name + ".1")

    def write(self, event: Mapping[str, Any]) -> None:
        line = json.dumps(
            {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **event}, ensure_ascii=False
        )
        data = (line + "\n").encode("utf-8")
        try:
            with self._lock:
                make_private_dir(self.path.parent)
                try:
                    size = self.path.stat().st_size
                except FileNotFoundError:
                    size = 0
                if size and size + len(data) > self.max_bytes:
                    os.replace(self.path, self.rotated_path)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
        except OSError as error:  # a full disk must not fail the search it records
            log.warning("could not write the query log %s: %s", self.path, error)

    def search(
        self,
        kind: str,
        folder: str,
        query: str,
        filters: Mapping[str, Any],
        latency_ms: float,
        hits: list[Hit],
    ) -> None:
        self.write(
            {
                "kind": kind,
                "folder": folder,
                **logged_query(query),
                "filters": dict(filters),
                "latency_ms": round(latency_ms, 1),
                "hits": [hit_entry(h) for h in hits],
            }
        )

    def context(
        self,
        folder: str,
        query: str,
        latency_ms: float,
        hits: list[Hit],
        dropped: Mapping[str, str],
        injected: list[Hit],
    ) -> None:
        by_id = {h.id: h for h in hits}
        self.write(
            {
                "kind": "context",
                "folder": folder,
                **(logged_query(query) if self.include_prompts else {"query": prompt_hash(query)}),
                "filters": {},
                "latency_ms": round(latency_ms, 1),
                "hits": [hit_entry(h) for h in hits],
                "dropped": [
                    {**hit_entry(by_id[i]), "reason": reason} for i, reason in dropped.items() if i in by_id
                ],
                "injected": [hit_entry(h) for h in injected],
            }
        )

    def read(self, path: str, start: int, end: int) -> None:
        self.write({"kind": "read", "path": path, "start": start, "end": end})

    def clear(self) -> None:
        """Empty the log, the rotated file included."""
        with self._lock:
            for path in (self.path, self.rotated_path):
                path.unlink(missing_ok=True)
