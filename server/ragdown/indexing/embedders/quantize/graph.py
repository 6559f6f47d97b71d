"""The ONNX graph as rewrites and the quantizer see it: who makes and reads each value, constants, edits.

`Graph` indexes one graph for pattern matching (producers, consumers, initializers) and hands out
fresh names; `splice_rewrite` splices a rewrite's new nodes in and points readers at their outputs;
`prune` drops whatever no graph output needs afterwards.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ragdown.errors import EmbedderError

# ONNX Runtime's contrib operators (Gelu, MultiHeadAttention).
MS_DOMAIN = "com.microsoft"
_INT8_WEIGHT_DTYPES = (np.int8, np.uint8)
# What produced a MatMul's activation: it decides how the quantizer scales that activation.
Kind = Literal["layernorm", "gelu", "other"]


def to_array(tensor: Any) -> npt.NDArray[Any]:
    from onnx import numpy_helper

    return np.asarray(numpy_helper.to_array(tensor))


def from_array(array: npt.NDArray[Any], name: str) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.ascontiguousarray(array), name)


class Graph:
    """Producers, consumers and constants of a graph, for matching patterns and naming new values."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.initializers: dict[str, Any] = {t.name: t for t in graph.initializer}
        self.producer: dict[str, Any] = {}
        self.consumers: dict[str, list[Any]] = {}
        for node in graph.node:
            for name in node.output:
                self.producer[name] = node
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.names = set(self.initializers) | set(self.producer) | {i.name for i in graph.input}
        self.names |= {node.name for node in graph.node}

    def constant(self, name: str) -> npt.NDArray[Any] | None:
        tensor = self.initializers.get(name)
        return None if tensor is None else to_array(tensor)

    def made_by(self, name: str, op_type: str) -> Any:
        node = self.producer.get(name)
        return node if node is not None and node.op_type == op_type else None

    def is_scalar(self, name: str, value: float, tolerance: float = 1e-6) -> bool:
        array = self.constant(name)
        return array is not None and array.size == 1 and abs(float(array.reshape(-1)[0]) - value) <= tolerance

    def fresh(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self.names:
            name, n = f"{wanted}_{n}", n + 1
        self.names.add(name)
        return name

    def float_weight(self, name: str) -> npt.NDArray[np.float32] | None:
        """A constant 2-D float matrix: an initializer, or int8 x scale folded back (weight-only dequant)."""
        direct = self.constant(name)
        if direct is not None:
            return direct.astype(np.float32) if direct.ndim == 2 and direct.dtype.kind == "f" else None
        mul = self.made_by(name, "Mul")
        if mul is None:
            return None
        for value, scale_name in ((mul.input[0], mul.input[1]), (mul.input[1], mul.input[0])):
            cast = self.made_by(value, "Cast")
            scale = self.constant(scale_name)
            if cast is None or scale is None or scale.dtype.kind != "f":
                continue
            quantized = self.constant(cast.input[0])
            if quantized is None or quantized.dtype not in _INT8_WEIGHT_DTYPES or quantized.ndim != 2:
                continue
            folded = quantized.astype(np.float32) * scale.astype(np.float32)
            return folded if folded.shape == quantized.shape else None
        return None

    def kind(self, activation: str) -> Kind:
        node = self.producer.get(activation)
        if node is not None and node.op_type == "LayerNormalization":
            return "layernorm"
        if node is not None and node.op_type == "Gelu":
            return "gelu"
        return "other"


def quantizable_matmuls(model: Any) -> list[str]:
    """Names of the MatMul nodes whose second input is a constant 2-D matrix, in graph order."""
    graph = Graph(model.graph)
    return [
        node.name
        for node in model.graph.node
        if node.op_type == "MatMul" and node.domain == "" and graph.float_weight(node.input[1]) is not None
    ]


def splice_rewrite(graph: Graph, renames: Mapping[str, str], added: Iterable[Any]) -> None:
    """Insert `added` right after the producers of their inputs; point consumers at renamed values."""
    if renames.keys() & {o.name for o in graph.graph.output}:
        raise EmbedderError("a rewrite would rename a graph output")
    nodes = list(graph.graph.node)
    for extra in added:
        position = max((i for i, n in enumerate(nodes) if set(n.output) & set(extra.input)), default=-1)
        nodes.insert(position + 1, extra)
    for node in nodes:
        for i, name in enumerate(node.input):
            while name in renames:
                name = renames[name]
            node.input[i] = name
    del graph.graph.node[:]
    graph.graph.node.extend(nodes)


def prune(model: Any) -> None:
    """Drop the nodes no graph output needs, then the initializers and value_info nothing reads."""
    graph = model.graph
    needed = {o.name for o in graph.output}
    kept: list[Any] = []
    for node in reversed(graph.node):
        if any(name in needed for name in node.output):
            if any(a.g.node or a.graphs for a in node.attribute):
                raise EmbedderError("graphs with subgraphs are not supported")
            kept.append(node)
            needed.update(name for name in node.input if name)
    kept.reverse()
    del graph.node[:]
    graph.node.extend(kept)
    initializers = [t for t in graph.initializer if t.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    produced = {name for node in kept for name in node.output}
    value_info = [v for v in graph.value_info if v.name in produced]
    del graph.value_info[:]
    graph.value_info.extend(value_info)


def opset_version(model: Any) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
