"""The embedder interface every model implements, and the settings that follow from the model."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

EmbedKind = Literal["query", "document"]
Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class GapEvidence:
    """The score evidence's weight for a plain query, following how clearly the dense side's best chunk
    stands out (docs/search.md#evidence-follows-the-dense-gap): `flat` at a top-1 − top-10 cosine gap
    of `flat_gap` or less, `clear` at `clear_gap` or more, log-linear between."""

    flat: float
    clear: float
    flat_gap: float
    clear_gap: float


class Embedder(ABC):
    """Turns texts into unit-length float32 vectors.

    `name` is what the index records in meta.json: an index built by one name is never searched
    with another. `max_chars` is the chunk size that fits the model's token window, `min_score` the
    hook's default cosine gate (and the strong match abstention asks for), `min_ratio` the hook's
    default share of the best hit's cosine, and `unrelated` the best cosine an off-topic prompt
    reaches (the hook warns when `min_score` is at or below it).
    """

    name: str
    dim: int
    max_chars: int = 1500
    min_score: float = 0.5
    min_ratio: float = 0.95
    unrelated: float = 0.3
    # What the raw scores add to RRF (search/fusion.py: rrf_with_evidence), and BM25's share of that
    # evidence for prose and for queries naming something. They depend on how the model spreads its
    # cosines, so 0 (plain RRF; min–max fusion for routed queries) until measured for the model.
    score_evidence: float = 0.0
    lexical_weight: float = 0.3
    routed_lexical_weight: float = 0.6
    # When measured, a plain query's evidence weight follows the dense gap instead of `score_evidence`.
    gap_evidence: GapEvidence | None = None

    @abstractmethod
    def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        """Embed `texts` as queries or documents; returns shape (len(texts), dim), rows of unit length."""

    def embed_query(self, text: str) -> Vectors:
        return np.asarray(self.embed([text], "query")[0], dtype=np.float32)

    @property
    def model_sha256(self) -> str:
        """SHA-256 of the weights actually run, recorded in meta.json ("" when not a local file)."""
        return ""

    def load(self) -> None:  # noqa: B027 - optional hook: most embedders load nothing
        """Make now what the first embedding would make (a model's session), for a caller with a
        thread to spare while it does something else (docs/design.md#start-up)."""

    def close(self) -> None:  # noqa: B027 - optional hook: most embedders hold nothing to release
        """Release connections or sessions."""


def normalise_rows(matrix: npt.NDArray[np.floating]) -> Vectors:
    """L2-normalise each row; an all-zero row stays zero rather than becoming NaN."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: Vectors = out / norms
    return normalised
