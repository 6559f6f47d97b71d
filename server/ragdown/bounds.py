"""What a setting may hold, wherever it comes from: the hook's bounds, the embedder names, the forms
of an index URI, and the names of the settings files (docs/design.md#configuration).

A leaf, importing nothing of ragdown, so that every layer checks a value the way the server does:
the environment (`settings.py`), the saved server settings (`folders/saved.py`), the hook's layers
(`hook/settings.py`), a tool's arguments, `/api/folders` and the operator's RagdownFolder spec
(`HookOverrides`); a test holds the CRD's schema to the hook's bounds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ragdown.errors import IndexLocationError

# The settings files: a folder's own, and the server's saved settings at the top of the docs dir.
FOLDER_CONFIG = ".ragdown.json"
SERVER_CONFIG = ".ragdown-server.json"

# Embedders by name (`RAGDOWN_EMBEDDER`, `--embedder`); indexing/embedders/hub_models.py pins each hub one.
DEFAULT_EMBEDDER = "minilm"
HUB_EMBEDDERS = ("granite-small", "bge-small")
EMBEDDER_NAMES = (DEFAULT_EMBEDDER, *HUB_EMBEDDERS, "hash")
OPENAI_PREFIX = "openai:"


def embedder_name_error(name: str | None, given_by: str = "RAGDOWN_EMBEDDER") -> str | None:
    """Why `name` names no embedder (None is the default), saying where it came from, or None."""
    name = (name or DEFAULT_EMBEDDER).strip()
    openai = name.startswith(OPENAI_PREFIX) and name[len(OPENAI_PREFIX) :].strip()
    if name in EMBEDDER_NAMES or openai:
        return None
    return f'{given_by} must be {", ".join(EMBEDDER_NAMES)} or openai:<model>, got "{name}"'


# The hook's values (docs/hook.md#settings): their defaults and bounds.
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


def valid_overrides(raw: object) -> dict[str, float]:
    """The valid hook values of one layer (a settings file's `hook` object); the rest are skipped, so
    the next layer is where that value comes from (the hook and `ragdown status` both read so)."""
    if not isinstance(raw, Mapping):
        return {}
    return {key: raw[key] for key in HOOK_KEYS if key in raw and hook_value_error(key, raw[key]) is None}


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


# Where the index lives (docs/design.md#index-on-object-storage).
REMOTE_SCHEMES = ("s3", "gs", "az")


def check_index_uri(value: str) -> str:
    """`s3://bucket/prefix` and the like, or a plain path; refuses other schemes and bucket-less URIs."""
    value = value.strip()
    parsed = urlparse(value)
    if "://" not in value:
        return value
    if parsed.scheme not in REMOTE_SCHEMES:
        raise IndexLocationError(
            f"RAGDOWN_INDEX_URI must be a path or an s3://, gs:// or az:// URI, got {parsed.scheme}://"
        )
    if not parsed.netloc:
        raise IndexLocationError(f"RAGDOWN_INDEX_URI names no bucket: give {parsed.scheme}://BUCKET/PREFIX")
    if parsed.query or parsed.fragment:
        raise IndexLocationError(
            "RAGDOWN_INDEX_URI takes no ?query or #fragment: set options in the environment"
        )
    return value.rstrip("/")


def is_remote(uri: str | None) -> bool:
    """Whether `RAGDOWN_INDEX_URI` names an object store rather than a path."""
    return bool(uri) and "://" in str(uri)
