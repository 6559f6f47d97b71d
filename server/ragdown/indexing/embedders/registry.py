"""Embedders by the name given in `RAGDOWN_EMBEDDER` or `--embedder`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdown.bounds import DEFAULT_EMBEDDER, EMBEDDER_NAMES, OPENAI_PREFIX, embedder_name_error
from ragdown.errors import EmbedderError

# The embedders themselves bring numpy: imported when one is created, so a command checking its
# arguments (`ragdown stdio` before it answers `initialize`) does not wait for them (docs/design.md#start-up).
if TYPE_CHECKING:
    from ragdown.indexing.embedders.base import Embedder

__all__ = ["EMBEDDER_NAMES", "check_embedder_name", "create_embedder"]


def check_embedder_name(name: str | None, given_by: str = "RAGDOWN_EMBEDDER") -> None:
    """Refuse an unknown embedder name before anything loads (None is the default); the refusal
    names where the name came from (`--embedder` on the command line, else the variable)."""
    error = embedder_name_error(name, given_by)
    if error is not None:
        raise EmbedderError(error)


def create_embedder(name: str | None = None, *, threads: int | None = None) -> Embedder:
    """Load the embedder called `name`; an unknown name is refused with the list of known ones.

    Hub models are downloaded into `RAGDOWN_MODELS` on first use (`RAGDOWN_HUB_URL` picks the hub);
    `openai:<model>` reads `RAGDOWN_OPENAI_BASE_URL` and `RAGDOWN_OPENAI_API_KEY`/`OPENAI_API_KEY`.
    """
    from ragdown.indexing.embedders.hashing import HashEmbedder
    from ragdown.indexing.embedders.hub_models import HUB_MODELS
    from ragdown.indexing.embedders.onnx_model import default_threads

    name = (name or DEFAULT_EMBEDDER).strip()
    if name == "hash":
        return HashEmbedder()
    if name == "minilm":
        from ragdown.indexing.embedders.minilm import load_minilm

        return load_minilm(threads or default_threads())
    if name in HUB_MODELS:
        from ragdown.indexing.embedders.hub import load_hub_model

        return load_hub_model(HUB_MODELS[name], threads=threads or default_threads())
    if name.startswith(OPENAI_PREFIX) and name[len(OPENAI_PREFIX) :].strip():
        from ragdown.indexing.embedders.openai_compat import load_openai

        return load_openai(name)
    check_embedder_name(name)
    raise AssertionError(f"unreachable: {name}")
