"""Hits as text for a prompt: one header line, then the text, clipped with the call that returns the rest.

An unmarked fragment makes a model conclude the documents are incomplete and look elsewhere, so
every cut names the `ragdown_read_doc` call for the rest.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ragdown.documents.chunks import breadcrumb

if TYPE_CHECKING:  # hybrid brings numpy and pyarrow; the tools import this before a search needs them
    from ragdown.search.hybrid import Hit


def changed_date(mtime_ms: float) -> str:
    return datetime.fromtimestamp(mtime_ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def clip(hit: Hit, max_chars: int) -> str:
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
    return f"{hit_header(hit)}\n{clip(hit, max_chars)}"
