"""The int8 rewrite: every MatMul with a constant weight becomes DynamicQuantizeLinear + MatMulInteger.

Activations are quantized per tensor while the model runs, weights per output channel, symmetric:
the shape ONNX Runtime fuses into its int8 GEMM kernels. Two things keep the result within cosine
0.99 of the packaged model on x86 CPUs without VNNI, whose u8 x s8 kernel adds pairs of products in
16 bits and saturates past 32767:

- MatMuls reading a LayerNorm output (query, key, value, FFN up) get SmoothQuant (calibration.py);
  their weights, and those of the attention output projection, keep 7 bits (|q| <= 63) so no pair
  of products can saturate.
- MatMuls reading the GELU output (FFN down) have each token's row divided by its own peak before
  quantizing and multiplied back after: their outliers are per token ([CLS] reaches 24 where other
  tokens stay under 2), which neither per-tensor scales nor channel factors absorb. GELU output is
  almost never negative, so most codes sit near a small zero point and full 8-bit weights do not
  saturate.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ragdown.indexing.embedders.quantize.calibration import Feed, activation_peaks, smoothing_factors
from ragdown.indexing.embedders.quantize.graph import (
    Graph,
    from_array,
    opset_version,
    prune,
    quantizable_matmuls,
)
from ragdown.indexing.embedders.quantize.rewrites import float_rewrites

# Bump whenever the bytes written for the same source change: a cached file of another recipe is rebuilt.
RECIPE_VERSION = 2
# The smallest value of erf GELU is -0.16997 (at x = -0.75): a row peak floored here bounds |x / peak| by 1.
_GELU_FLOOR = 0.17


def quantize_per_channel(
    weight: npt.NDArray[np.float32], levels: int = 127
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Symmetric int8 per output column: `weight ≈ q * scale` with |q| <= `levels`, zero point 0."""
    peak = np.abs(weight).max(axis=0).astype(np.float32)
    scale = np.where(peak > 0, peak / np.float32(levels), np.float32(1)).astype(np.float32)
    quantized = np.clip(np.rint(weight / scale), -levels, levels).astype(np.int8)
    return quantized, scale


class _Quantizer:
    """Rewrites the MatMuls of one graph; new nodes are emitted in place of the MatMul they replace."""

    def __init__(self, model: Any, smoothing: Mapping[str, npt.NDArray[np.float32]]) -> None:
        self.model = model
        self.graph = Graph(model.graph)
        self.smoothing = smoothing
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        # activation → (uint8 codes, scale, zero point, row peaks or "")
        self.quantized: dict[str, tuple[str, str, str, str]] = {}

    def constant(self, array: npt.NDArray[Any], name: str) -> str:
        name = self.graph.fresh(name)
        self.initializers.append(from_array(array, name))
        return name

    def node(
        self, op_type: str, inputs: list[str], output: str, *, keep_name: bool = False, **attributes: Any
    ) -> str:
        """Append a node; its output gets a fresh name built on `output`, or `output` itself."""
        from onnx import helper

        name = output if keep_name else self.graph.fresh(output)
        node_name = self.graph.fresh(f"{name}_op")
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=node_name, **attributes))
        return name

    def quantize_activation(self, activation: str) -> tuple[str, str, str, str]:
        from onnx import helper

        if activation in self.quantized:
            return self.quantized[activation]
        value, row_peak = activation, ""
        factor = self.smoothing.get(activation)
        if factor is not None:
            value = self.node(
                "Mul", [value, self.constant(1 / factor, f"{activation}_smooth")], f"{activation}_smoothed"
            )
        if self.graph.kind(activation) == "gelu":
            if opset_version(self.model) >= 18:
                peak = self.node(
                    "ReduceMax",
                    [value, self.constant(np.array([-1]), f"{activation}_axes")],
                    f"{activation}_row_max",
                    keepdims=1,
                )
            else:
                peak = self.node("ReduceMax", [value], f"{activation}_row_max", axes=[-1], keepdims=1)
            floor = self.constant(np.array(_GELU_FLOOR, dtype=np.float32), f"{activation}_floor")
            row_peak = self.node("Max", [peak, floor], f"{activation}_row_peak")
            value = self.node("Div", [value, row_peak], f"{activation}_per_row")
        codes, scale, zero = (
            self.graph.fresh(f"{activation}_{s}") for s in ("quantized", "scale", "zero_point")
        )
        node_name = self.graph.fresh(f"{codes}_op")
        self.nodes.append(
            helper.make_node("DynamicQuantizeLinear", [value], [codes, scale, zero], name=node_name)
        )
        self.quantized[activation] = (codes, scale, zero, row_peak)
        return self.quantized[activation]

    def replace(self, matmul: Any, weight: npt.NDArray[np.float32]) -> None:
        from onnx import TensorProto

        activation = matmul.input[0]
        codes, a_scale, a_zero, row_peak = self.quantize_activation(activation)
        factor = self.smoothing.get(activation)
        if factor is not None:
            weight = weight * factor[:, None]
        # 7 bits keep u8 x s8 pair sums under 2^15; GELU-fed codes are small enough for 8.
        levels = 127 if self.graph.kind(activation) == "gelu" else 63
        q, w_scale = quantize_per_channel(weight, levels)
        stem = matmul.name or matmul.output[0]
        w_codes = self.constant(q, f"{stem}_w8")
        w_zero = self.constant(np.zeros(q.shape[1], dtype=np.int8), f"{stem}_w8_zero_point")
        w_scales = self.constant(w_scale, f"{stem}_w8_scale")
        # The shape quantize_dynamic writes, which ONNX Runtime fuses into MatMulIntegerToFloat.
        scales = self.node("Mul", [a_scale, w_scales], f"{stem}_scales")
        integer = self.node("MatMulInteger", [codes, w_codes, a_zero, w_zero], f"{stem}_int32")
        as_float = self.node("Cast", [integer], f"{stem}_float", to=TensorProto.FLOAT)
        if row_peak:
            per_row = self.node("Mul", [as_float, scales], f"{stem}_per_row")
            self.node("Mul", [per_row, row_peak], matmul.output[0], keep_name=True)
        else:
            self.node("Mul", [as_float, scales], matmul.output[0], keep_name=True)

    def run(self, keep_float: Collection[str]) -> None:
        for node in list(self.model.graph.node):
            weight = None
            if node.op_type == "MatMul" and node.domain == "" and node.name not in keep_float:
                weight = self.graph.float_weight(node.input[1])
            if weight is None:
                self.nodes.append(node)
            else:
                self.replace(node, weight)
        del self.model.graph.node[:]
        self.model.graph.node.extend(self.nodes)
        self.model.graph.initializer.extend(self.initializers)


def quantize_model(
    source: Path,
    keep_float: Collection[str] = (),
    *,
    calibration: Sequence[Feed] = (),
) -> Any:
    """The model at `source` with its MatMuls in int8, except the MatMul nodes named in `keep_float`.

    `calibration` (model inputs, one text each) sets the smoothing of LayerNorm-fed activations;
    without it they are quantized as they are.
    """
    import onnx

    model = float_rewrites(onnx.load(str(source)), calibration)
    return quantize_matmuls(model, keep_float, calibration=calibration)


def quantize_matmuls(
    model: Any,
    keep_float: Collection[str] = (),
    *,
    calibration: Sequence[Feed] = (),
) -> Any:
    """`model` itself, edited: its MatMuls with a constant weight in int8, but those in `keep_float`.

    No float32 rewrites here (`quantize_model` applies them first), so a float graph made by other
    means can be quantized the same way.
    """
    import onnx

    graph = Graph(model.graph)
    weights: dict[str, list[npt.NDArray[np.float32]]] = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.domain == "" and node.name not in keep_float:
            weight = graph.float_weight(node.input[1])
            if weight is not None and graph.kind(node.input[0]) == "layernorm":
                weights.setdefault(node.input[0], []).append(weight)
    smoothing: dict[str, npt.NDArray[np.float32]] = {}
    if calibration and weights:
        peaks = activation_peaks(model, list(weights), calibration)
        smoothing = {name: smoothing_factors(peaks[name], group) for name, group in weights.items()}
    _Quantizer(model, smoothing).run(keep_float)
    prune(model)
    model.producer_name = "ragdown.quantize"
    model.producer_version = str(RECIPE_VERSION)
    onnx.checker.check_model(model)
    return model


def fallback_plans(model: Any) -> list[tuple[str, ...]]:
    """The MatMuls to leave in float32, from none to more; a build takes the first plan that passes.

    Then the FFN down-projections (the MatMuls that narrow their input), then those plus every
    MatMul of the first and last layers.
    """
    graph = Graph(model.graph)
    names = quantizable_matmuls(model)
    nodes = {node.name: node for node in model.graph.node}
    narrowing = set()
    for name in names:
        weight = graph.float_weight(nodes[name].input[1])
        if weight is not None and weight.shape[0] > weight.shape[1]:
            narrowing.add(name)
    layer = len(names) // len(narrowing) if narrowing else len(names)
    ends = set(names[:layer] + names[-layer:])
    plans = [(), tuple(n for n in names if n in narrowing), tuple(n for n in names if n in narrowing | ends)]
    return [plan for i, plan in enumerate(plans) if plan not in plans[:i]]
