"""The packaged MiniLM and its int8 build: verified files, the cache, quality, and embedding behaviour."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragdown.errors import ConfigError, EmbedderError
from ragdown.indexing.embedders import minilm, quantize
from ragdown.indexing.embedders.minilm import (
    MODEL_SHA256,
    QUANTIZE_ENV,
    load_minilm,
    minilm_files,
    quantized_minilm,
)
from ragdown.indexing.embedders.model_files import sha256_file
from ragdown.indexing.embedders.onnx_model import OnnxEmbedder
from ragdown.indexing.embedders.quantize import QualityReport, QuantizedModel, compare_embeddings, record_path
from ragdown.indexing.embedders.quantize import cache as quantize_cache

# The int8 build (seconds of CPU, once per session) and the tests that run it or the packaged model
# over more than a text or two. The file checks and the loader's choices stay in the quick loop.
REAL_MODEL = pytest.mark.slow
SENTENCES = [
    "How do I declare a path parameter in FastAPI?",
    "Rust moves a value when it is assigned to another variable.",
    "thanks!",
    "The cat slept on the warm windowsill.",
]
# Words that are each a single token, so N words make N + 2 tokens with [CLS] and [SEP].
WORDS = [
    "river",
    "apple",
    "house",
    "green",
    "table",
    "music",
    "window",
    "garden",
    "city",
    "paper",
    "summer",
    "water",
    "light",
    "stone",
    "market",
    "winter",
    "road",
    "horse",
    "mountain",
    "letter",
]


def words(count: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(count))


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def built(cache_dir: Path) -> QuantizedModel:
    """The int8 build, made once for the session in a temporary cache."""
    model = quantized_minilm(2, cache_dir)
    assert model is not None, "the int8 build fell back to the packaged model"
    return model


@pytest.fixture(scope="session")
def int8(built: QuantizedModel, cache_dir: Path) -> Iterator[OnnxEmbedder]:
    embedder = load_minilm(2, cache_dir)
    yield embedder
    embedder.close()


@pytest.fixture(scope="session")
def packaged() -> Iterator[OnnxEmbedder]:
    embedder = load_minilm(2, quantize=False)
    yield embedder
    embedder.close()


# --- the packaged files ----------------------------------------------------------------------------


def test_the_packaged_files_are_verified_and_a_changed_copy_is_refused(tmp_path: Path) -> None:
    model, _ = minilm_files()
    copy = tmp_path / "model.onnx"
    shutil.copyfile(model, copy)
    assert minilm_files(model_file=copy)[0] == copy
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(EmbedderError, match="does not match its pinned SHA-256") as refused:
        load_minilm(1, tmp_path / "cache", model_file=copy)
    assert str(copy) in str(refused.value)
    assert MODEL_SHA256 in str(refused.value)
    assert not (tmp_path / "cache").exists(), "nothing is built from a refused file"


def test_a_missing_model_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="is missing"):
        load_minilm(1, quantize=False, model_file=tmp_path / "absent.onnx")


# --- the int8 build and its cache ------------------------------------------------------------------


@REAL_MODEL
def test_the_int8_build_is_cached_with_its_digest_and_reused(built: QuantizedModel, cache_dir: Path) -> None:
    assert built.path.parent == cache_dir
    assert built.path.name == f"minilm-q8-{MODEL_SHA256[:12]}.onnx"
    record = json.loads(record_path(built.path).read_text())
    assert record["sha256"] == built.sha256 == sha256_file(built.path)
    assert record["source_sha256"] == MODEL_SHA256
    assert built.quality.passed, built.quality
    assert built.keep_float == ()
    stamp = built.path.stat().st_mtime_ns
    again = quantized_minilm(1, cache_dir)
    assert again is not None
    assert not again.built
    assert again.sha256 == built.sha256
    assert built.path.stat().st_mtime_ns == stamp


@REAL_MODEL
def test_the_int8_build_keeps_its_tables_int8_in_memory(built: QuantizedModel) -> None:
    """No node reads a whole int8 table but a lookup: a Cast of the 30,522-row word embeddings would be
    folded into a 47 MB float32 copy when ONNX Runtime loads the file (docs/design.md#memory)."""
    import onnx

    model = onnx.load(str(built.path))
    tables = {
        t.name for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT8 and len(t.dims) == 2
    }
    readers = {n.op_type for n in model.graph.node if any(name in tables for name in n.input)}
    assert "Cast" not in readers
    assert "Gather" in readers  # the embedding tables are looked up as int8


@REAL_MODEL
def test_the_embedder_runs_the_int8_file_and_reports_its_digest(
    int8: OnnxEmbedder, packaged: OnnxEmbedder, built: QuantizedModel
) -> None:
    assert int8.model_path == built.path
    assert int8.model_sha256 == built.sha256
    assert packaged.model_sha256 == MODEL_SHA256
    assert int8.name == packaged.name


@REAL_MODEL
def test_a_corrupted_cached_file_is_rebuilt_to_the_same_bytes(built: QuantizedModel, tmp_path: Path) -> None:
    cache = tmp_path / "models"
    shutil.copytree(built.path.parent, cache)
    cached = cache / built.path.name
    data = bytearray(cached.read_bytes())
    data[-100] ^= 0xFF
    cached.write_bytes(bytes(data))
    rebuilt = quantized_minilm(1, cache)
    assert rebuilt is not None
    assert rebuilt.built
    # The build is deterministic: the same source gives the same bytes.
    assert rebuilt.sha256 == built.sha256 == sha256_file(cached)
    assert not list(cache.glob(".*.tmp")), "no temporary files are left behind"


def test_a_build_that_fails_the_quality_check_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The build looks the plans up in the cache module, where it runs.
    monkeypatch.setattr(quantize_cache, "fallback_plans", lambda model: [()])
    model, _ = minilm_files()
    with caplog.at_level(logging.WARNING, logger=quantize.__name__):
        result = quantize.ensure_quantized(
            model, MODEL_SHA256, tmp_path, lambda candidate: QualityReport(0.95, 0.90, 3), stem="minilm-q8"
        )
    assert result is None
    assert "falls short" in caplog.text
    assert "running the packaged model" in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_the_loader_falls_back_to_the_packaged_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(minilm, "ensure_quantized", lambda *args, **kwargs: None)
    embedder = load_minilm(1, tmp_path)
    assert embedder.model_path == minilm_files()[0]
    assert embedder.model_sha256 == MODEL_SHA256


def test_the_environment_turns_the_int8_build_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(QUANTIZE_ENV, "false")
    assert load_minilm(1, tmp_path).model_path == minilm_files()[0]
    assert list(tmp_path.iterdir()) == [], "nothing is built"
    monkeypatch.setenv(QUANTIZE_ENV, "maybe")
    with pytest.raises(ConfigError, match=f"^{QUANTIZE_ENV} must be true or false, got 'maybe'$"):
        load_minilm(1, tmp_path)


def test_the_session_runs_without_its_own_arena_and_without_spinning() -> None:
    """ONNX Runtime's arena would keep the largest activations it served; spinning workers would
    keep a core busy after each query (docs/design.md#memory)."""
    embedder = load_minilm(2, quantize=False)
    try:
        options = embedder._model()[0].get_session_options()
        assert options.enable_cpu_mem_arena is False
        assert options.intra_op_num_threads == 2
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert np.isclose(np.linalg.norm(embedder.embed(["arena"], "query")), 1.0)
    finally:
        embedder.close()


@REAL_MODEL
def test_the_int8_build_agrees_with_the_packaged_model(int8: OnnxEmbedder, packaged: OnnxEmbedder) -> None:
    report = compare_embeddings(packaged, int8, SENTENCES)
    assert report.minimum >= 0.98, report


# --- embedding behaviour (the int8 build, the default) ---------------------------------------------


@REAL_MODEL
def test_embeddings_are_unit_length(int8: OnnxEmbedder) -> None:
    vectors = int8.embed(SENTENCES, "document")
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@REAL_MODEL
def test_a_related_pair_scores_higher_than_an_unrelated_one(int8: OnnxEmbedder) -> None:
    query = int8.embed_query("how do I read query parameters from the URL?")
    related, unrelated = int8.embed(
        [
            "Query parameters are the key-value pairs after the ? in a URL; declare them as arguments.",
            "The orchestra performed Beethoven's Ninth Symphony to a sold-out hall.",
        ],
        "document",
    )
    assert float(query @ related) > float(query @ unrelated) + 0.2


@REAL_MODEL
def test_query_and_document_vectors_are_identical(int8: OnnxEmbedder) -> None:
    np.testing.assert_array_equal(int8.embed(SENTENCES, "query"), int8.embed(SENTENCES, "document"))


@REAL_MODEL
def test_texts_are_read_past_128_tokens_and_cut_at_256(int8: OnnxEmbedder) -> None:
    def count(text: str) -> int:
        return len(int8.tokenizer.encode(text).ids)

    assert count(words(200)) == 202
    assert count(words(126)) == 128
    first, prefix = int8.embed([words(200), words(126)], "document")
    assert float(first @ prefix) < 0.9999, "a 202-token text embeds like its first 128 tokens"
    long, cut = int8.embed([words(400), words(254)], "document")
    assert count(words(400)) == count(words(254)) == 256
    np.testing.assert_allclose(long, cut, atol=1e-6)


@REAL_MODEL
def test_a_text_embeds_the_same_alone_or_in_any_batch(int8: OnnxEmbedder, packaged: OnnxEmbedder) -> None:
    texts = [*SENTENCES, words(150), words(30)]
    for embedder in (int8, packaged):
        together = embedder.embed(texts, "document")
        alone = np.stack([embedder.embed([text], "document")[0] for text in texts])
        reversed_order = embedder.embed(texts[::-1], "document")[::-1]
        np.testing.assert_allclose(together, alone, atol=1e-5)
        np.testing.assert_allclose(together, reversed_order, atol=1e-5)


@REAL_MODEL
def test_an_empty_list_embeds_to_no_rows(int8: OnnxEmbedder) -> None:
    assert int8.embed([], "document").shape == (0, 384)


@REAL_MODEL
def test_a_bundled_int8_build_is_used_and_none_is_made_again(
    built: QuantizedModel, cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image bakes the int8 build in (read-only); a pod whose RAGDOWN_MODELS is a fresh volume
    uses it instead of building its own (which would need onnx and a minute of CPU)."""
    writable = tmp_path / "volume"
    monkeypatch.setenv("RAGDOWN_MODELS_BUNDLED", str(cache_dir))
    embedder = load_minilm(1, writable)
    try:
        assert embedder.model_sha256 == built.sha256
    finally:
        embedder.close()
    assert not writable.exists() or list(writable.iterdir()) == []
