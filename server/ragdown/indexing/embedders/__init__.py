"""Embedders by name: the packaged MiniLM, hub models, OpenAI-compatible endpoints, feature hashing."""

from ragdown.indexing.embedders.base import Embedder, EmbedderError, EmbedKind
from ragdown.indexing.embedders.registry import EMBEDDER_NAMES, create_embedder

__all__ = ["EMBEDDER_NAMES", "EmbedKind", "Embedder", "EmbedderError", "create_embedder"]
