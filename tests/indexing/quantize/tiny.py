"""Tiny ONNX graphs holding the patterns the int8 build rewrites, and a way to run them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

from ragdown.indexing.embedders.quantize.graph import MS_DOMAIN

Array = npt.NDArray[Any]
# The packaged MiniLM's IR and opset; ONNX Runtime reads both.
IR_VERSION = 10
OPSET = 17
FLOAT32_MIN = float(np.finfo(np.float32).min)


class Tiny:
    """Nodes and constants of one graph, added in order; each node gets a fresh output name."""

    def __init__(self, seed: int = 0) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.inputs: list[Any] = []
        self.rng = np.random.default_rng(seed)
        self._count = 0

    def _name(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def input(self, name: str, shape: Sequence[int | str], elem: int = TensorProto.FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem, list(shape)))
        return name

    def const(self, value: npt.ArrayLike, stem: str = "c") -> str:
        array = np.asarray(value)
        if array.dtype.kind == "f":
            array = array.astype(np.float32)
        name = self._name(stem)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, rows: int, columns: int) -> str:
        return self.const(self.rng.normal(0, 0.5, (rows, columns)), "w")

    def op(self, op_type: str, *inputs: str, domain: str = "", **attributes: Any) -> str:
        output = self._name(op_type.lower())
        self.nodes.append(
            helper.make_node(
                op_type, list(inputs), [output], name=f"{output}_op", domain=domain or None, **attributes
            )
        )
        return output

    def linear(self, x: str, rows: int, columns: int) -> str:
        """`x @ W + b` with random constants, as a PyTorch export writes a Linear layer."""
        product = self.op("MatMul", x, self.weight(rows, columns))
        return self.op("Add", product, self.const(self.rng.normal(0, 0.1, columns), "b"))

    def model(self, outputs: Sequence[str], shapes: Sequence[Sequence[int | str]] = ()) -> Any:
        """The graph with these outputs; their shapes are inferred unless given (contrib ops have no
        shape inference in onnx)."""
        graph = helper.make_graph(
            self.nodes,
            "tiny",
            self.inputs,
            [
                helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape) if shapes else None)
                for name, shape in zip(outputs, shapes or [()] * len(outputs), strict=True)
            ],
            initializer=self.initializers,
        )
        opsets = [helper.make_opsetid("", OPSET)]
        if any(node.domain == MS_DOMAIN for node in self.nodes):
            opsets.append(helper.make_opsetid(MS_DOMAIN, 1))
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = IR_VERSION
        if not shapes:
            # The checker wants a shape on each output.
            model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
            del model.graph.value_info[:]
        onnx.checker.check_model(model, full_check=not shapes)
        return model


def run(model: Any, feeds: Mapping[str, Array], *, optimized: bool = True) -> list[Array]:
    """The outputs of `model` in ONNX Runtime; `optimized=False` runs the graph as written, without
    the fusions ONNX Runtime makes on load (a reference that cannot share them with a rewrite)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    if not optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        model.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"]
    )
    return [np.asarray(value) for value in session.run(None, dict(feeds))]


def ops(model: Any) -> list[str]:
    """The op types of a model's nodes, in graph order, with their domain when it is not ONNX's."""
    return [f"{n.domain}.{n.op_type}" if n.domain else n.op_type for n in model.graph.node]


def node_of(model: Any, op_type: str) -> Any:
    """The one node of this op type (an error when there are none or several)."""
    (node,) = (n for n in model.graph.node if n.op_type == op_type)
    return node


def readers(model: Any, value: str) -> list[str]:
    """The op types of the nodes that read `value`."""
    return [n.op_type for n in model.graph.node if value in n.input]


def attribute(node: Any, name: str) -> Any:
    return next(helper.get_attribute_value(a) for a in node.attribute if a.name == name)


def same_bytes(a: Any, b: Any) -> bool:
    return bool(a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True))


# --- the patterns ------------------------------------------------------------------------------------


def softmax_guard(*, replacement: float = 0.0, guarded: str = "Softmax") -> Any:
    """`Where(IsNaN(p), replacement, p)` after `p = guarded(x)`, read by a MatMul (as in attention).

    Input `x` [2, 5]; output `y` [2, 3].
    """
    t = Tiny()
    x = t.input("x", [2, 5])
    probs = t.op("Softmax", x, axis=-1) if guarded == "Softmax" else t.op(guarded, x)
    isnan = t.op("IsNaN", probs)
    guarded_probs = t.op("Where", isnan, t.const(np.float32(replacement)), probs)
    return t.model([t.op("MatMul", guarded_probs, t.weight(5, 3))])


def erf_gelu(
    *,
    swap_outer: bool = False,
    swap_half: bool = False,
    swap_one: bool = False,
    divisor: float = np.sqrt(2.0),
    erf_of_other: bool = False,
) -> Any:
    """An FFN: `h = x @ W1 + b1`, then `h * (0.5 * (erf(h / divisor) + 1))`, then `@ W2`.

    The `swap_*` flags put each Mul's or Add's operands the other way round (exporters differ). Not
    GELU: a `divisor` other than √2, or `erf_of_other` (the erf reads `relu(h)`, not `h`).
    Input `x` [2, 3, 4]; output `y` [2, 3, 4].
    """
    t = Tiny()
    h = t.linear(t.input("x", [2, 3, 4]), 4, 8)
    erf = t.op("Erf", t.op("Div", t.op("Relu", h) if erf_of_other else h, t.const(np.float32(divisor))))
    one = t.const(np.float32(1.0))
    plus_one = t.op("Add", *((one, erf) if swap_one else (erf, one)))
    half = t.const(np.float32(0.5))
    halved = t.op("Mul", *((plus_one, half) if swap_half else (half, plus_one)))
    gelu = t.op("Mul", *((halved, h) if swap_outer else (h, halved)))
    return t.model([t.op("MatMul", gelu, t.weight(8, 4))])


HIDDEN, HEADS, HEAD_SIZE = 8, 2, 4
QUERY_SCALE, KEY_SCALE = 0.6, 0.7


def attention_block(
    t: Tiny,
    x: str,
    bias: str,
    *,
    softmax_axis: int = -1,
    merge_transpose: bool = True,
    key_from_query: bool = False,
) -> str:
    """BERT self-attention as the torch exporter writes MiniLM's, on `x` [B, S, 8] with 2 heads of 4.

    Heads are split by Reshape to a shape built from `Shape` (B, S, -1, 4) and Transpose; keys are
    transposed straight to [B, N, 4, S]; query and key heads are each scaled by a constant. Returns
    the output projection. The flags break the pattern: a Softmax over another axis (matched, but
    not attention: the output check must refuse it), no Transpose before merging heads, or keys
    made from the query projection.
    """
    batch = t.op("Shape", x, start=0, end=1)
    length = t.op("Shape", x, start=1, end=2)
    heads_shape = t.op("Concat", batch, length, t.const([-1]), t.const([HEAD_SIZE]), axis=0)

    def heads(projection: str, perm: list[int]) -> str:
        return t.op("Transpose", t.op("Reshape", projection, heads_shape), perm=perm)

    query = t.linear(x, HIDDEN, HIDDEN)
    key = query if key_from_query else t.linear(x, HIDDEN, HIDDEN)
    value = t.linear(x, HIDDEN, HIDDEN)
    query_heads = t.op("Mul", heads(query, [0, 2, 1, 3]), t.const(np.float32(QUERY_SCALE)))
    key_heads = t.op("Mul", heads(key, [0, 2, 3, 1]), t.const(np.float32(KEY_SCALE)))
    scores = t.op("Add", t.op("MatMul", query_heads, key_heads), bias)
    probs = t.op("Softmax", scores, axis=softmax_axis)
    context = t.op("MatMul", probs, heads(value, [0, 2, 1, 3]))
    if merge_transpose:
        context = t.op("Transpose", context, perm=[0, 2, 1, 3])
    merged = t.op("Reshape", context, t.op("Concat", batch, length, t.const([-1]), axis=0))
    return t.linear(merged, HIDDEN, HIDDEN)


def attention(**flags: Any) -> Any:
    """`attention_block` over inputs `x` [B, S, 8] and an additive mask `bias` [B, 1, S, S]."""
    t = Tiny()
    return t.model(
        [attention_block(t, t.input("x", ["B", "S", HIDDEN]), t.input("bias", ["B", 1, "S", "S"]), **flags)]
    )


def attention_feeds(rng: np.random.Generator, batch: int = 2, length: int = 6) -> dict[str, Array]:
    """Random `x` and a padding mask: row i attends to its first `length - i` positions."""
    bias = np.zeros((batch, 1, length, length), dtype=np.float32)
    for row in range(batch):
        bias[row, :, :, length - row :] = FLOAT32_MIN
    return {"x": rng.normal(0, 1, (batch, length, HIDDEN)).astype(np.float32), "bias": bias}


def encoder_over_ids(*, softmax_axis: int = -1, vocabulary: int = 3100) -> Any:
    """Token ids → embeddings → one attention block, with the mask built from `attention_mask`.

    The inputs have MiniLM's names, so `float_rewrites` can feed it its own check batches (token ids
    up to 3020).
    """
    t = Tiny()
    ids = t.input("input_ids", ["B", "S"], TensorProto.INT64)
    mask = t.op("Cast", t.input("attention_mask", ["B", "S"], TensorProto.INT64), to=TensorProto.FLOAT)
    x = t.op("Gather", t.const(t.rng.normal(0, 1, (vocabulary, HIDDEN))), ids, axis=0)
    masked = t.op("Mul", t.op("Sub", t.const(np.float32(1.0)), mask), t.const(np.float32(FLOAT32_MIN)))
    # [B, 1, 1, S] + [B, 1, S, 1] of zeros: the [B, 1, S, S] mask MultiHeadAttention takes.
    rows = t.op("Unsqueeze", t.op("Mul", mask, t.const(np.float32(0.0))), t.const([1, 3]))
    bias = t.op("Add", t.op("Unsqueeze", masked, t.const([1, 2])), rows)
    return t.model([attention_block(t, x, bias, softmax_axis=softmax_axis)])


def layernorm_matmul(*, wide_channel: float = 1.0) -> Any:
    """`LayerNorm(x) @ W` (x [B, S, 8], W [8, 6]); channel 3 of the LayerNorm output is
    `wide_channel` times wider than the rest, as a few of MiniLM's are."""
    t = Tiny(3)
    gamma = np.ones(8)
    gamma[3] = wide_channel
    normed = t.op(
        "LayerNormalization", t.input("x", ["B", "S", 8]), t.const(gamma), t.const(np.zeros(8)), epsilon=1e-12
    )
    return t.model([t.op("MatMul", normed, t.weight(8, 6))])


def gelu_matmul() -> Any:
    """`Gelu(x) @ W` (x [B, S, 8], W [8, 6]) with the fused `com.microsoft.Gelu`."""
    t = Tiny(4)
    gelu = t.op("Gelu", t.input("x", ["B", "S", 8]), domain=MS_DOMAIN)
    return t.model([t.op("MatMul", gelu, t.weight(8, 6))], shapes=[["B", "S", 6]])


def packaged_weight_matmul() -> Any:
    """`x @ (float(Wq) * scale)`: an int8 weight multiplied back to float32 in the graph, as the
    packaged MiniLM stores its weights (x [B, S, 8], Wq int8 [8, 6], one scale per column)."""
    t = Tiny(5)
    codes = t.const(t.rng.integers(-127, 128, (8, 6)).astype(np.int8), "w_q")
    weight = t.op("Mul", t.op("Cast", codes, to=TensorProto.FLOAT), t.const(np.full((1, 6), 0.01)))
    return t.model([t.op("MatMul", t.input("x", ["B", "S", 8]), weight)])


def unquantizable() -> Any:
    """`x @ y` of two inputs (x [B, 4, 8], y [B, 8, 4]): no constant weight to quantize."""
    t = Tiny()
    return t.model([t.op("MatMul", t.input("x", ["B", 4, 8]), t.input("y", ["B", 8, 4]))])


def int8_lookup(*, per_row: bool = True, axis: int = 0) -> Any:
    """`Gather(Cast(q) * scale, ids) + 1`: a lookup in an int8 table of 40 x 6 with a scale per row
    (or one for the table), as the packaged MiniLM stores its word embeddings, then added to.

    Input `ids` [2, 3] (int64); output `y` [2, 3, 6] ([40, 2, 3] with axis 1: ids below 6 then).
    """
    t = Tiny()
    ids = t.input("ids", [2, 3], TensorProto.INT64)
    table = t.const(t.rng.integers(-127, 128, (40, 6)).astype(np.int8), "q")
    scale = t.const(t.rng.uniform(0.001, 0.05, (40, 1) if per_row else ()), "scale")
    as_float = t.op("Cast", table, to=TensorProto.FLOAT)
    dequantized = t.op("Mul", as_float, scale)
    looked_up = t.op("Gather", dequantized, ids, axis=axis)
    return t.model([t.op("Add", looked_up, t.const(1.0))])
