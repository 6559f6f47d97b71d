"""A deterministic feature-hashing embedder: no model, same vectors everywhere. For tests."""

from __future__ import annotations

import hashlib
import itertools
import re

import numpy as np

from ragdown.indexing.embedders.base import Embedder, EmbedKind, Vectors, normalise_rows

_WORD_RE = re.compile(r"\w+")


class HashEmbedder(Embedder):
    """Words and word bigrams hashed into signed buckets. Shared words mean a positive cosine."""

    max_chars = 1500
    min_score = 0.2
    unrelated = 0.1

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dim, 1.0 if value >> 63 else -1.0

    def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD_RE.findall(text.lower())
            for feature in [*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))]:
                index, sign = self._bucket(feature)
                out[row, index] += sign
            if not words:
                out[row, 0] = 1.0  # an empty text still gets a unit vector
        return normalise_rows(out)
