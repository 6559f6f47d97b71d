"""Sentence embeddings from an ONNX encoder with ONNX Runtime and a `tokenizers` tokenizer (no torch)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from ragdown.errors import EmbedderError
from ragdown.indexing.embedders.base import Embedder, EmbedKind, GapEvidence, Vectors, normalise_rows
from ragdown.indexing.embedders.model_files import sha256_file
from ragdown.settings import embedder_settings

if TYPE_CHECKING:
    from tokenizers import Tokenizer

Pooling = Literal["mean", "cls"]
Feeds = dict[str, npt.NDArray[np.int64]]


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
    # Unmeasured, a model's tuning is the Embedder's default (one home for those values).
    min_ratio: float = Embedder.min_ratio
    score_evidence: float = Embedder.score_evidence
    lexical_weight: float = Embedder.lexical_weight
    routed_lexical_weight: float = Embedder.routed_lexical_weight
    gap_evidence: GapEvidence | None = Embedder.gap_evidence
    query_prefix: str = ""
    document_prefix: str = ""


def default_threads() -> int:
    """`RAGDOWN_THREADS`, else every CPU this process may use."""
    return embedder_settings().cpu_threads()


def load_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    """The tokenizer at `path`, truncating at `max_tokens` and never padding (batches pad themselves)."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises plain Exception subclasses
        raise EmbedderError(f"cannot load the tokenizer {path}: {error}") from error
    # The packaged MiniLM tokenizer.json pads and truncates at 128; the model reads more than that.
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()
    return tokenizer


def batch_feeds(token_ids: Sequence[Sequence[int]]) -> Feeds:
    """input_ids, attention_mask and token_type_ids of a batch padded to its longest member."""
    width = max(len(ids) for ids in token_ids)
    input_ids = np.zeros((len(token_ids), width), dtype=np.int64)
    mask = np.zeros_like(input_ids)
    for row, ids in enumerate(token_ids):
        input_ids[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}


class OnnxEmbedder(Embedder):
    """One text per forward pass, `threads` passes at a time, pooled and L2-normalised.

    Measured on 2 cores with MiniLM over Markdown chunks (bench/embed_speed.py --batch-sweep): two
    single-text passes side by side on one-thread sessions beat length-sorted batches of 16/32/64
    padded to their longest member through one session with 2 intra-op threads, by 1.4-2.3x for the
    float32 model (13,900 against 10,200/8,700/6,100 chars/s) and 1.3-2x for the int8 one. A batch's
    activations (up to 64 x 256 x 1536 floats) spill out of cache and intra-op threads meet at every
    node, while one text's activations stay near L2 and the passes share nothing. A text alone also
    never sees a neighbour's padding or, in the int8 model, a neighbour's activation range, so its
    vector does not depend on the batch it came in.
    """

    # Texts per forward pass; >1 pads each length-sorted batch to its longest member.
    batch_size = 1

    def __init__(
        self,
        spec: OnnxModelSpec,
        model_path: Path,
        tokenizer_path: Path,
        threads: int,
        *,
        model_sha256: str = "",
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.dim = spec.dim
        self.max_chars = spec.max_chars
        self.min_score = spec.min_score
        self.min_ratio = spec.min_ratio
        self.score_evidence = spec.score_evidence
        self.lexical_weight = spec.lexical_weight
        self.routed_lexical_weight = spec.routed_lexical_weight
        self.gap_evidence = spec.gap_evidence
        self.unrelated = spec.unrelated
        self.model_path = model_path
        self.threads = max(1, threads)
        self._model_sha256 = model_sha256
        self.tokenizer_path = tokenizer_path
        # One session for batches and queries alike: a second one with its own thread count cost
        # ~50 MB held and ~90 MB more at its load, and bought nothing (docs/design.md#onnx-sessions).
        # It is made (and the tokenizer loaded) on the first embedding, not here: a sync with nothing
        # to embed and a command that only opens the index never pay for it (docs/design.md#start-up).
        self._loaded: tuple[Any, frozenset[str]] | None = None
        self._load_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @functools.cached_property
    def tokenizer(self) -> Tokenizer:
        """Loaded on first use, like the session (a cached_property may load it twice in a race, which
        costs time, never correctness)."""
        return load_tokenizer(self.tokenizer_path, self.spec.max_tokens)

    def _model(self) -> tuple[Any, frozenset[str]]:
        """The ONNX session and the names of its inputs, made once."""
        loaded = self._loaded
        if loaded is None:
            with self._load_lock:
                if self._loaded is None:
                    session = self._session(self.threads)
                    self._loaded = (session, frozenset(i.name for i in session.get_inputs()))
                loaded = self._loaded
        return loaded

    def load(self) -> None:
        self._model()
        self.tokenizer  # noqa: B018 - a cached_property: loaded here, once

    def _session(self, threads: int) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        # Spinning workers would keep burning a core after each query, starving the BM25 search
        # that runs right after it.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        # ONNX Runtime's own arena keeps the largest activations it ever served for good (~12 MB
        # after the longest texts); without it they go back to the C allocator, as fast on
        # one-text passes (docs/design.md#memory).
        options.enable_cpu_mem_arena = False
        try:
            return ort.InferenceSession(
                str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own exception types
            raise EmbedderError(f"cannot load the ONNX model {self.model_path}: {error}") from error

    @property
    def model_sha256(self) -> str:
        """The digest passed in (already verified), else the SHA-256 of the file, hashed once."""
        if not self._model_sha256:
            self._model_sha256 = sha256_file(self.model_path)
        return self._model_sha256

    def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        prefix = self.spec.query_prefix if kind == "query" else self.spec.document_prefix
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch([prefix + t for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        ids = [[encodings[i].ids for i in batch] for batch in batches]
        vectors: Iterable[Vectors]
        if self.threads == 1 or len(batches) == 1:
            vectors = map(self._forward, ids)
        else:
            # Longest first, so the last passes to finish are short ones.
            vectors = reversed(list(self._executor().map(self._forward, ids[::-1])))
        for batch, rows in zip(batches, vectors, strict=True):
            out[batch] = rows
        return out

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="ragdown-embed")
            return self._pool

    def _forward(self, token_ids: list[list[int]]) -> Vectors:
        session, input_names = self._model()
        batch = batch_feeds(token_ids)
        feeds = {name: value for name, value in batch.items() if name in input_names}
        hidden: npt.NDArray[np.float32] = session.run(None, feeds)[0]
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = batch["attention_mask"][:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalise_rows(pooled)

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
