"""Embedders by name: the packaged MiniLM, hub models, OpenAI-compatible endpoints, feature hashing.

The names below load on first use: the settings module of this package is read by every command,
and `tail-log` (a sidecar on a small memory request) must not pull in numpy to parse them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragdown.indexing.embedders.base import Embedder, EmbedKind
    from ragdown.indexing.embedders.registry import EMBEDDER_NAMES, create_embedder

_HOMES = {
    "Embedder": "base",
    "EmbedKind": "base",
    "EMBEDDER_NAMES": "registry",
    "create_embedder": "registry",
}

__all__ = ["EMBEDDER_NAMES", "EmbedKind", "Embedder", "create_embedder"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
