"""Sentence embeddings from an ONNX encoder with ONNX Runtime and a `tokenizers` tokenizer (no torch)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from ragdown.indexing.embedders.base import Embedder, EmbedderError, EmbedKind, Vectors, normalise_rows

Pooling = Literal["mean", "cls"]


@dataclass(frozen=True)
class OnnxModelSpec:
    """What differs between encoder models: pooling, token window, prefixes and defaults."""

    name: str
    dim: int
    max_tokens: int
    pooling: Pooling
    max_chars: int
    min_score: float
    unrelated: float
    query_prefix: str = ""
    document_prefix: str = ""


def default_threads() -> int:
    """`RAGDOWN_THREADS`, else every CPU this process may use."""
    configured = os.environ.get("RAGDOWN_THREADS", "").strip()
    if configured:
        try:
            threads = int(configured)
        except ValueError:
            raise EmbedderError(f"RAGDOWN_THREADS must be a whole number, got {configured!r}") from None
        if threads < 1:
            raise EmbedderError(f"RAGDOWN_THREADS must be at least 1, got {threads}")
        return threads
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


class OnnxEmbedder(Embedder):
    """Batches sorted by length (less padding), a fixed thread count, pooled and L2-normalised."""

    batch_size = 32

    def __init__(self, spec: OnnxModelSpec, model_path: Path, tokenizer_path: Path, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.spec = spec
        self.name = spec.name
        self.dim = spec.dim
        self.max_chars = spec.max_chars
        self.min_score = spec.min_score
        self.unrelated = spec.unrelated
        self.model_path = model_path
        self.threads = threads
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # The packaged tokenizer.json pads and truncates at 128; the model reads more than that.
        self.tokenizer.enable_truncation(max_length=spec.max_tokens)
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self.session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own exception types
            raise EmbedderError(f"cannot load the ONNX model {model_path}: {error}") from error
        self.input_names = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        prefix = self.spec.query_prefix if kind == "query" else self.spec.document_prefix
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch([prefix + t for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            out[batch] = self._forward([encodings[i].ids for i in batch])
        return out

    def _forward(self, token_ids: list[list[int]]) -> Vectors:
        width = max(len(ids) for ids in token_ids)
        input_ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, ids in enumerate(token_ids):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden: npt.NDArray[np.float32] = self.session.run(None, feeds)[0]
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalise_rows(pooled)
