"""The hook's settings (docs/hook.md#settings): the layering that picks each value.

Each of top_k, min_score, min_ratio and max_chars is resolved on its own, first match wins: the
call's argument, the folder's `.ragdown.json` `hook`, the server's saved `hook`, the environment,
the built-in default (min_score and min_ratio: the embedder's own measured values, since both depend
on how the model spreads its cosines). A settings-file value that is not valid for its key is
skipped, so the next layer applies; a value sent to /api or set on a RagdownFolder is refused.

The bounds of each value are `BOUNDS` in ragdown/bounds.py, the one definition the tool's
arguments, `RAGDOWN_HOOK_*`, `/api/folders` and the operator's RagdownFolder spec share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdown.bounds import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MIN_RATIO,
    DEFAULT_TOP_K,
    FOLDER_CONFIG,
    HOOK_KEYS,
    valid_overrides,
)
from ragdown.documents.files import Root
from ragdown.folders.config import hook_layer


@dataclass(frozen=True)
class HookSettings:
    top_k: int
    min_score: float
    min_ratio: float
    max_chars: int


def resolve(
    call: Mapping[str, Any],
    layers: Sequence[Mapping[str, Any]],
    default_min_score: float,
    default_min_ratio: float = DEFAULT_MIN_RATIO,
) -> HookSettings:
    """Each key from the first of `call`, then `layers` (most specific first), that sets it validly."""
    defaults: dict[str, float] = {
        "top_k": DEFAULT_TOP_K,
        "min_score": default_min_score,
        "min_ratio": default_min_ratio,
        "max_chars": DEFAULT_MAX_CHARS,
    }
    chosen: dict[str, float] = {}
    for key in HOOK_KEYS:
        for layer in [valid_overrides(call), *map(valid_overrides, layers)]:
            if key in layer:
                chosen[key] = layer[key]
                break
        else:
            chosen[key] = defaults[key]
    return HookSettings(
        top_k=int(chosen["top_k"]),
        min_score=float(chosen["min_score"]),
        min_ratio=float(chosen["min_ratio"]),
        max_chars=int(chosen["max_chars"]),
    )


def layers(
    docs_dir: Path, folder: str, server_config: Path | None, environment: Mapping[str, float]
) -> list[dict[str, Any]]:
    """The layers below a call's arguments, most specific first, re-read on every call: the folder's
    `.ragdown.json` (the docs dir itself when it is served as one folder), the saved server settings
    (`.ragdown-server.json`), the environment."""
    found = [hook_layer(Root(docs_dir, (folder,) if folder else ()), FOLDER_CONFIG)]
    if server_config is not None:
        found.append(hook_layer(Root(server_config.parent), server_config.name))
    found.append(dict(environment))
    return found
