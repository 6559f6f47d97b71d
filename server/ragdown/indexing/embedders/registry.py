"""Embedders by the name given in `RAGDOWN_EMBEDDER` or `--embedder`."""

from __future__ import annotations

from ragdown.indexing.embedders.base import Embedder, EmbedderError
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.embedders.onnx_model import default_threads

EMBEDDER_NAMES = ("minilm", "hash")
DEFAULT_EMBEDDER = "minilm"


def create_embedder(name: str | None = None, *, threads: int | None = None) -> Embedder:
    """Load the embedder called `name`; an unknown name is refused with the list of known ones."""
    name = (name or DEFAULT_EMBEDDER).strip()
    if name == "hash":
        return HashEmbedder()
    if name == "minilm":
        from ragdown.indexing.embedders.minilm import load_minilm

        return load_minilm(threads or default_threads())
    known = ", ".join([*EMBEDDER_NAMES, "openai:<model>"])
    raise EmbedderError(f"unknown embedder {name!r}; choose one of: {known}")
