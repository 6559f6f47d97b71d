"""The bar an int8 build must clear (quantize/quality.py), on stand-in embedders: the real build and its
check are tests/indexing/test_minilm.py's, in the slow tier."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ragdown.indexing.embedders.base import EmbedKind, Vectors
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.embedders.quantize.quality import (
    MIN_COSINE,
    MIN_MEAN_COSINE,
    QualityCheck,
    QualityReport,
    compare_embeddings,
    cosine_report,
)


class Closing(HashEmbedder):
    """The hash embedder, counting what it embeds and whether it was closed."""

    def __init__(self, name: str, log: list[str]) -> None:
        super().__init__()
        self.label = name
        self.log = log

    def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        self.log.append(f"{self.label} embeds {len(texts)}")
        return super().embed(texts, kind)

    def close(self) -> None:
        self.log.append(f"{self.label} closed")


class Skewed(Closing):
    """Its vectors turned away from the hash embedder's by `angle` radians, every one of them."""

    def __init__(self, name: str, log: list[str], angle: float) -> None:
        super().__init__(name, log)
        self.angle = angle

    def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        vectors = super().embed(texts, kind)
        other = np.roll(vectors, 1, axis=1)
        other -= np.sum(other * vectors, axis=1, keepdims=True) * vectors  # orthogonal to each row
        other /= np.linalg.norm(other, axis=1, keepdims=True)
        turned: Vectors = (np.cos(self.angle) * vectors + np.sin(self.angle) * other).astype(np.float32)
        return turned


def test_the_bar_is_the_mean_and_the_worst_text_at_once() -> None:
    assert QualityReport(MIN_MEAN_COSINE, MIN_COSINE, 3).passed
    assert not QualityReport(MIN_MEAN_COSINE - 1e-6, 1.0, 3).passed
    assert not QualityReport(1.0, MIN_COSINE - 1e-6, 3).passed
    assert str(QualityReport(0.99512, 0.98, 50)) == "cosine mean 0.9951, min 0.9800 over 50 texts"


def test_the_report_is_the_row_by_row_cosine() -> None:
    expected = np.eye(3, dtype=np.float32)
    actual = np.array([[1, 0, 0], [0, 0.6, 0.8], [0, 0, 1]], dtype=np.float32)
    report = cosine_report(expected, actual)
    assert (report.mean, report.minimum) == pytest.approx((2.6 / 3, 0.6))
    assert report.count == 3
    same = compare_embeddings(HashEmbedder(), HashEmbedder(), ["one text", "another"])
    assert (same.mean, same.minimum) == pytest.approx((1.0, 1.0))
    assert same.count == 2


def test_the_check_embeds_the_reference_once_and_closes_every_model_it_loads(tmp_path: Path) -> None:
    log: list[str] = []
    texts = ["alpha beta", "gamma", "delta epsilon zeta"]
    candidates: dict[str, Callable[[], Closing]] = {
        "same": lambda: Closing("same", log),
        "close": lambda: Skewed("close", log, angle=0.1),  # cos 0.995: over the bar
        "far": lambda: Skewed("far", log, angle=0.3),  # cos 0.955: under it
    }
    check = QualityCheck(lambda: Closing("reference", log), lambda path: candidates[path.name](), texts)
    reports = {name: check(tmp_path / name) for name in candidates}
    assert reports["same"].passed
    assert reports["close"].passed
    assert not reports["far"].passed
    assert (reports["far"].mean, reports["far"].minimum) == pytest.approx((np.cos(0.3), np.cos(0.3)))
    assert log == [
        "reference embeds 3",
        "reference closed",
        *[line for name in candidates for line in (f"{name} embeds 3", f"{name} closed")],
    ]
