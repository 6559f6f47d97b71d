"""Hook settings (BEHAVIOUR §4.1): each of top_k, min_score, min_ratio, max_chars resolved on its own.

First match wins: the call's argument, the folder's `.ragdown.json` `hook`, the server's saved
`hook`, the environment, the built-in default (min_score and min_ratio: the embedder's own
measured values, since both depend on how the model spreads its cosines).
A settings-file value that is not valid for its key is skipped, so the next layer applies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragdown.folders.config import HOOK_KEYS, hook_value_error

DEFAULT_TOP_K = 4
DEFAULT_MIN_RATIO = 0.95
DEFAULT_MAX_CHARS = 6000


@dataclass(frozen=True)
class HookSettings:
    top_k: int
    min_score: float
    min_ratio: float
    max_chars: int


def valid_overrides(raw: object) -> dict[str, float]:
    """The valid hook values of one layer (a settings file's `hook` object); the rest are skipped."""
    if not isinstance(raw, Mapping):
        return {}
    return {key: raw[key] for key in HOOK_KEYS if key in raw and hook_value_error(key, raw[key]) is None}


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
