"""The hook's settings (docs/hook.md#settings): one set of bounds for every place a value may come
from, and the layering that picks each value.

Each of top_k, min_score, min_ratio and max_chars is resolved on its own, first match wins: the
call's argument, the folder's `.ragdown.json` `hook`, the server's saved `hook`, the environment,
the built-in default (min_score and min_ratio: the embedder's own measured values, since both depend
on how the model spreads its cosines). A settings-file value that is not valid for its key is
skipped, so the next layer applies; a value sent to /api or set on a RagdownFolder is refused.

`BOUNDS` is the one definition: the tool's arguments, the server's `RAGDOWN_HOOK_*` settings, the
`/api/folders` checks and the operator's RagdownFolder spec (camelCase) all take their types from
it, and a test holds the CRD's schema to it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ragdown.documents.files import Root
from ragdown.folders.config import FOLDER_CONFIG, hook_layer

DEFAULT_TOP_K = 4
DEFAULT_MIN_RATIO = 0.95
DEFAULT_MAX_CHARS = 6000


@dataclass(frozen=True)
class Bound:
    low: float
    high: float
    whole: bool


BOUNDS: dict[str, Bound] = {
    "top_k": Bound(0, 50, whole=True),  # 0 injects nothing
    "min_score": Bound(0, 1, whole=False),
    "min_ratio": Bound(0, 1, whole=False),
    "max_chars": Bound(0, 100_000, whole=True),
}
HOOK_KEYS = tuple(BOUNDS)

TopK = Annotated[int, Field(ge=0, le=50, description="most sections per prompt; 0 injects none")]
MinScore = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, description="lowest cosine of a section")]
MinRatio = Annotated[float, Field(ge=0, le=1, description="lowest share of the best hit's cosine")]
MaxChars = Annotated[int, Field(ge=0, le=100_000, description="most characters per prompt")]


def hook_value_error(key: str, value: object) -> str | None:
    """Why `value` cannot be the hook setting `key`, in plain words, or None when it can."""
    bound = BOUNDS[key]
    span = f"from {bound.low:g} to {bound.high:g}"
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"{key} must be a {'whole number' if bound.whole else 'number'} {span}"
    if bound.whole and not float(value).is_integer():
        return f"{key} must be a whole number {span}"
    if not bound.low <= value <= bound.high:
        return f"{key} must be {span}"
    return None


class HookOverrides(BaseModel):
    """The hook settings one source names (the rest come from the layers below): the tool's
    arguments, and a RagdownFolder's `spec.hook` under its camelCase names."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True)

    top_k: TopK | None = None
    min_score: MinScore | None = None
    min_ratio: MinRatio | None = None
    max_chars: MaxChars | None = None

    def given(self) -> dict[str, float]:
        return {key: value for key, value in self.model_dump().items() if value is not None}


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
