"""Hits as each front end shows them: text blocks for a model to read (`ragdown_recall`, the hook),
JSON for the tools and `/api/search`, and the fields `ragdown search` prints; and compact JSON, the
form of every JSON answer a tool gives.

An unmarked fragment makes a model conclude the documents are incomplete and look elsewhere, so
every cut names the `ragdown_read_doc` call for the rest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ragdown.documents.chunks import breadcrumb

if TYPE_CHECKING:  # hybrid brings numpy and pyarrow; the tools import this before a search needs them
    from ragdown.search.hybrid import Hit

NO_MATCHES = "No matching documents."
# What `ragdown search` prints of a hit, its scores unrounded (README.md, "Commands").
CLI_KEYS = ("path", "title", "heading", "line_start", "line_end", "similarity", "score", "sources", "text")


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def changed_date(mtime_ms: float) -> str:
    return datetime.fromtimestamp(mtime_ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def clip_hit(hit: Hit, max_chars: int) -> str:
    """The text, or its first `max_chars` characters and a marker; `max_chars` ≤ 0 never clips."""
    if max_chars <= 0 or len(hit.text) <= max_chars:
        return hit.text
    call = (
        f"ragdown_read_doc {{path: {json.dumps(hit.path, ensure_ascii=False)}, "
        f"start_line: {hit.line_start}, end_line: {hit.line_end}}}"
    )
    return f"{hit.text[:max_chars]}… [clipped: {max_chars} of {len(hit.text)} characters — {call}]"


def hit_header(hit: Hit) -> str:
    tags = f" [{' '.join('#' + t for t in hit.tags)}]" if hit.tags else ""
    provenance = f", written by an agent with {hit.created_by}" if hit.created_by else ""
    return (
        f"{hit.path}:{hit.line_start}-{hit.line_end} — {breadcrumb(hit.title, hit.heading)}{tags} "
        f"(similarity {hit.similarity:.2f}, changed {changed_date(hit.mtime_ms)}{provenance})"
    )


def format_hit(hit: Hit, max_chars: int) -> str:
    return f"{hit_header(hit)}\n{clip_hit(hit, max_chars)}"


def hits_text(hits: Sequence[tuple[str | None, Hit]], max_chars: int) -> str:
    """Numbered blocks, each marked `[<folder>]` where a label is given (root `/mcp`)."""
    if not hits:
        return NO_MATCHES
    return "\n\n".join(
        f"[{n}] " + (f"[{label}] " if label else "") + format_hit(hit, max_chars)
        for n, (label, hit) in enumerate(hits, start=1)
    )


def hit_json(hit: Hit) -> dict[str, Any]:
    """A hit as the tools' `format: "json"` and `/api/search` give it: scores rounded, the date in UTC."""
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


def cli_hit_json(hit: Hit) -> dict[str, Any]:
    return {key: getattr(hit, key) for key in CLI_KEYS}
