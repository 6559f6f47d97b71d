"""`ragdown_context` (docs/hook.md#gates, docs/hook.md#output): the block a prompt hook injects, or nothing.

Injected noise costs an agent accuracy, not merely tokens, so every gate errs towards silence;
the bypasses exist for what the prompt names outright (a quoted command, a document's alias).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ragdown.hook.gates import DropReason, apply_bypasses, similarity_gates, take_top
from ragdown.hook.session_memory import SessionMemory
from ragdown.hook.settings import HookSettings
from ragdown.search.hit_shapes import compact, format_hit
from ragdown.search.hybrid import Hit
from ragdown.search.policy import MAX_QUERY_CHARS

MIN_PROMPT_CHARS = 12
ContextFormat = Literal["text", "claude-code"]
CONTEXT_INTRO = (
    "Excerpts from the user's Markdown documents that look related to this prompt, found by search, "
    "not chosen by the user.\n"
    "They may be irrelevant or out of date: each says when its file last changed. "
    "Use ragdown_read_doc for the whole file before relying on a fragment."
)

Recall = Callable[[str, int], list[Hit]]


@dataclass
class ContextResult:
    """The text to return, and what happened to every candidate (for the query log and metrics)."""

    text: str = ""
    searched: bool = False
    candidates: list[Hit] = field(default_factory=list)
    injected: list[Hit] = field(default_factory=list)
    dropped: dict[str, DropReason] = field(default_factory=dict)


# Any tag of the block's own name inside an excerpt, opening or closing, spaces and case aside: a
# document must not be able to end the block early and have the rest read as the user's prompt.
# `<` then a bounded run: each `<` is tried once, so the scan is linear.
_OWN_TAG_RE = re.compile(r"<(\s{0,64}/?\s{0,64}ragdown-context)", re.IGNORECASE)


def escape_block(text: str) -> str:
    """`text` with every `<ragdown-context` or `</ragdown-context` written as `&lt;…`."""
    return _OWN_TAG_RE.sub(r"&lt;\1", text)


def context_block(source: str, blocks: list[str]) -> str:
    """The block (docs/hook.md#output); excerpts come from documents, so their text cannot close it,
    and the source is quoted as an attribute."""
    return "\n".join(
        [
            f'<ragdown-context source="{html.escape(source, quote=True)}">',
            CONTEXT_INTRO,
            "",
            escape_block("\n\n".join(blocks)),
            "</ragdown-context>",
        ]
    )


def wrap(block: str, output: ContextFormat) -> str:
    if not block or output == "text":
        return block
    payload = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": block}}
    return compact(payload)


def build_context(
    prompt: str,
    *,
    recall: Recall,
    settings: HookSettings,
    memory: SessionMemory,
    key: str | None,
    source: str,
    text_limit: int,
    max_per_document: int = 0,
    reset: bool = False,
    output: ContextFormat = "text",
) -> ContextResult:
    """Run the gates of docs/hook.md#gates in order; `key` is the session's memory key, None without a
    session."""
    if reset and key is not None:
        memory.forget(key)
    trimmed = prompt.strip()[:MAX_QUERY_CHARS]  # a pasted log is a prompt too: search its start
    if len(trimmed) < MIN_PROMPT_CHARS or trimmed.startswith("/"):
        return ContextResult()  # nothing to retrieve on; the session is not even touched
    seen = memory.seen(key) if key is not None else frozenset()
    candidates = recall(trimmed, 2 * settings.top_k)
    gated = similarity_gates(candidates, seen, settings.min_score, settings.min_ratio)
    gated = take_top(gated, settings.top_k, max_per_document)
    gated = apply_bypasses(trimmed, candidates, seen, gated, settings.top_k)
    result = ContextResult(searched=True, candidates=candidates, dropped=gated.dropped)
    if not gated.hits:
        return result

    per_hit = min(text_limit, settings.max_chars)
    blocks: list[str] = []
    used = 0
    for index, hit in enumerate(gated.hits):
        block = format_hit(hit, per_hit)
        if blocks and used + len(block) > settings.max_chars:
            for rest in gated.hits[index:]:
                result.dropped[rest.id] = "max_chars"
            break
        blocks.append(block)
        used += len(block)
        result.injected.append(hit)
    if key is not None:
        memory.add(key, [h.id for h in result.injected])
    result.text = wrap(context_block(source, blocks), output)
    return result
