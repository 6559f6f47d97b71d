"""MiniLM model files for `embed_speed.py --ort-optimizer`: ONNX Runtime's transformer optimizer against
the hand-written float32 rewrites of `ragdown.indexing.embedders.quantize`, in float32 and before int8.

ONNX Runtime's optimizer is `onnxruntime.transformers.optimizer.optimize_model(model_type="bert",
num_heads=12, hidden_size=384)` at its default level for BERT (1): ONNX Runtime's basic graph
optimizations, then the Python transformer fusions. Its own path to the first step imports torch
(for a GPU check) even on CPU, so here that step runs directly with the same settings; the fusions
need sympy, which onnxruntime does not depend on.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdown.indexing.embedders.quantize.calibration import Feed
from ragdown.indexing.embedders.quantize.graph import Graph, Kind
from ragdown.indexing.embedders.quantize.quantizer import quantize_matmuls
from ragdown.indexing.embedders.quantize.rewrites import (
    drop_softmax_nan_guards,
    float_rewrites,
    fuse_erf_gelu,
    rewritten,
)

NUM_HEADS = 12
HIDDEN_SIZE = 384


@dataclass(frozen=True)
class Variant:
    label: str
    path: Path


def ort_optimizer_missing() -> str:
    """Why ONNX Runtime's transformer optimizer cannot run here, or "" when it can."""
    try:
        from onnxruntime.transformers.optimizer import optimize_model  # noqa: F401
    except ImportError as error:
        return f"onnxruntime.transformers.optimizer is not importable ({error})"
    try:
        import sympy  # noqa: F401
    except ImportError:
        return "its fusions need sympy (`pip install sympy`), which onnxruntime does not depend on"
    return ""


def ort_optimized(model: Any) -> tuple[Any, dict[str, int]]:
    """`model` after ONNX Runtime's transformer optimizer for BERT, and how many of each op it fused."""
    import onnx
    import onnxruntime as ort
    from onnxruntime.transformers.optimizer import optimize_model

    with tempfile.TemporaryDirectory() as scratch:
        basic = Path(scratch) / "basic.onnx"
        # What optimize_model(opt_level=1) runs on CPU before its fusions.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(basic)
        options.log_severity_level = 3
        ort.InferenceSession(
            model.SerializeToString(),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=["ConstantSharing"],
        )
        optimized = optimize_model(
            str(basic), model_type="bert", num_heads=NUM_HEADS, hidden_size=HIDDEN_SIZE, opt_level=0
        )
        # The statistics count op types in the result: subtract those the input already had.
        before = Counter(node.op_type for node in model.graph.node)
        counts = optimized.get_fused_operator_statistics().items()
        fused = {op: n - before[op] for op, n in counts if n > before[op]}
        return onnx.ModelProto.FromString(optimized.model.SerializeToString()), fused


@contextmanager
def quantizer_knows_ort_fusions() -> Iterator[None]:
    """Let the quantizer treat ONNX Runtime's fused SkipLayerNormalization as the LayerNorm and
    BiasGelu as the GELU they end in, so SmoothQuant, 7-bit weights and per-token scaling still
    apply after ONNX Runtime's optimizer (the quantizer itself knows only the plain ops)."""
    plain = Graph.kind

    def kind(graph: Graph, activation: str) -> Kind:
        node = graph.producer.get(activation)
        if node is not None and node.op_type == "SkipLayerNormalization" and node.output[0] == activation:
            return "layernorm"
        if node is not None and node.op_type in ("BiasGelu", "FastGelu"):
            return "gelu"
        return plain(graph, activation)

    Graph.kind = kind  # type: ignore[method-assign,assignment]  # for the duration of this context only
    try:
        yield
    finally:
        Graph.kind = plain  # type: ignore[method-assign]  # the quantizer's own, back


def _copy(model: Any) -> Any:
    copy = type(model)()
    copy.CopyFrom(model)
    return copy


def _fused(counts: dict[str, int]) -> str:
    return ", ".join(f"{op} x{n}" for op, n in counts.items()) or "nothing"


def build_variants(source: Path, calibration: Sequence[Feed], folder: Path) -> list[Variant]:
    """Float32 and int8 variants of the packaged model, written to `folder` (the shipped int8 build
    is not among them). Prints what ONNX Runtime's optimizer fused, or why it cannot run."""
    import onnx

    def save(name: str, model: Any) -> Path:
        path = folder / f"{name}.onnx"
        path.write_bytes(model.SerializeToString(deterministic=True))
        return path

    ours = float_rewrites(onnx.load(str(source)), calibration)
    no_attention = rewritten(onnx.load(str(source)), [drop_softmax_nan_guards, fuse_erf_gelu])
    variants = [
        Variant("packaged + our float32 rewrites", save("ours-fp32", ours)),
        # What the attention fusion is worth: ONNX Runtime's optimizer does not fuse attention here.
        Variant(
            "int8, our rewrites but the attention fusion",
            save("ours-int8-no-attention", quantize_matmuls(no_attention, calibration=calibration)),
        ),
    ]
    missing = ort_optimizer_missing()
    if missing:
        print(f"ONNX Runtime's transformer optimizer is not measured: {missing}")
        return variants
    ort_fp32, fused = ort_optimized(onnx.load(str(source)))
    both, fused_after_ours = ort_optimized(ours)
    print(f"ORT's optimizer fused {_fused(fused)} in the packaged model", end="; ")
    print(f"{_fused(fused_after_ours)} after our float32 rewrites")
    variants += [
        Variant("packaged + ORT optimizer", save("ort-fp32", ort_fp32)),
        Variant(
            "int8 after ORT optimizer (instead of ours)",
            save("ort-int8", quantize_matmuls(_copy(ort_fp32), calibration=calibration)),
        ),
    ]
    with quantizer_knows_ort_fusions():
        variants += [
            Variant(
                "int8 after ORT optimizer (instead of ours), quantizer told ORT's fused ops",
                save("ort-int8-told", quantize_matmuls(_copy(ort_fp32), calibration=calibration)),
            ),
            Variant(
                "int8 after ours + ORT optimizer, quantizer told ORT's fused ops",
                save("both-int8-told", quantize_matmuls(both, calibration=calibration)),
            ),
        ]
    return variants
