"""Tool outputs (docs/documents.md#hashes–5.3): hits as numbered text blocks or JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ragdown.search.format import format_hit

if TYPE_CHECKING:  # hybrid brings numpy and pyarrow; the tools import this before a search needs them
    from ragdown.search.hybrid import Hit

NO_MATCHES = "No matching documents."


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def hits_text(hits: list[Hit], max_chars: int) -> str:
    if not hits:
        return NO_MATCHES
    return "\n\n".join(f"[{n}] {format_hit(hit, max_chars)}" for n, hit in enumerate(hits, start=1))


def hit_json(hit: Hit) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": hit.path,
        "title": hit.title,
        "heading": hit.heading,
        "line_start": hit.line_start,
        "line_end": hit.line_end,
        "similarity": round(hit.similarity, 4),
        "score": round(hit.score, 5),
        "sources": hit.sources,
        "tags": hit.tags,
        "modified": datetime.fromtimestamp(hit.mtime_ms / 1000, tz=UTC).isoformat().replace("+00:00", "Z"),
    }
    if hit.created_by:
        data["created_by"] = hit.created_by
    data["text"] = hit.text
    return data
