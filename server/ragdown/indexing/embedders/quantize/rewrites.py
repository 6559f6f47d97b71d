"""Exact float32 rewrites applied before quantizing, for speed; each set is kept only if outputs match.

- `drop_softmax_nan_guards`: the IsNaN/Where after each attention Softmax goes (the mask fills with
  the float32 minimum, never -inf, so a Softmax of finite input has no NaN to replace).
- `fuse_erf_gelu`: the erf GELU becomes `com.microsoft.Gelu`.
- `fuse_attention`: each attention block (split heads, scores, mask, Softmax, merge heads) becomes
  `com.microsoft.MultiHeadAttention` (about 10% faster on 140-token texts).
- `gather_before_dequantize`: a lookup in an int8 table with per-row scales (the word embeddings,
  30,522 x 384) picks the int8 rows first and scales only those. Otherwise ONNX Runtime folds
  `Cast`/`Mul` of the whole table into a float32 copy when it loads the model: 47 MB held, and
  ~100 MB more at the load (docs/design.md#the-int8-minilm-build).

`float_rewrites` tries the sets of `REWRITES` in order and keeps the first whose outputs on padded
test batches match the model's.

Why not ONNX Runtime's own transformer optimizer (`onnxruntime.transformers.optimizer`, bert, 12
heads, hidden 384; measured with ONNX Runtime 1.32, bench/README.md): on this export it
fuses no attention block, with or without the NaN guards, only SkipLayerNormalization (which ONNX
Runtime makes itself when it loads our int8 file) and BiasGelu. In float32, at the same output, these
rewrites ran 1.13x as fast as its result, which was no faster than the packaged model. In their
place before int8, the build lost MultiHeadAttention; the quantizer, which knows only the plain
LayerNormalization and Gelu ops, also lost its smoothing and per-token scaling and fell below the
quality bar (min cosine 0.89). Taught ORT's fused ops it passed, at 0.75x the speed of ours. After
these rewrites it gained nothing (0.91x). It also needs sympy, which onnxruntime does not depend on.
So these stay.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragdown.indexing.embedders.onnx_model import batch_feeds
from ragdown.indexing.embedders.quantize.calibration import Feed
from ragdown.indexing.embedders.quantize.graph import MS_DOMAIN, Graph, prune, splice_rewrite

log = logging.getLogger(__name__)


def drop_softmax_nan_guards(graph: Graph) -> tuple[dict[str, str], list[Any]]:
    """`Where(IsNaN(softmax), 0, softmax)` → `softmax`."""
    renames: dict[str, str] = {}
    for node in graph.graph.node:
        if node.op_type != "Where" or len(node.input) != 3:
            continue
        isnan = graph.made_by(node.input[0], "IsNaN")
        if isnan is None or isnan.input[0] != node.input[2] or not graph.is_scalar(node.input[1], 0.0):
            continue
        if graph.made_by(node.input[2], "Softmax") is not None:
            renames[node.output[0]] = node.input[2]
    return renames, []


def fuse_erf_gelu(graph: Graph) -> tuple[dict[str, str], list[Any]]:
    """`x * (0.5 * (erf(x / √2) + 1))`, operands in either order → `com.microsoft.Gelu(x)`."""
    from onnx import helper

    renames: dict[str, str] = {}
    added: list[Any] = []
    for node in graph.graph.node:
        if node.op_type != "Mul":
            continue
        for x, other in ((node.input[0], node.input[1]), (node.input[1], node.input[0])):
            half = graph.made_by(other, "Mul")
            if half is None or not any(graph.is_scalar(i, 0.5) for i in half.input):
                continue
            plus_one = graph.made_by(next(i for i in half.input if not graph.is_scalar(i, 0.5)), "Add")
            if plus_one is None or not any(graph.is_scalar(i, 1.0) for i in plus_one.input):
                continue
            erf = graph.made_by(next(i for i in plus_one.input if not graph.is_scalar(i, 1.0)), "Erf")
            div = None if erf is None else graph.made_by(erf.input[0], "Div")
            if (
                div is None
                or div.input[0] != x
                or not graph.is_scalar(div.input[1], float(np.sqrt(2.0)), 1e-5)
            ):
                continue
            output = graph.fresh(f"{node.output[0]}_gelu")
            added.append(
                helper.make_node(
                    "Gelu", [x], [output], domain=MS_DOMAIN, name=graph.fresh(f"{node.name}_gelu")
                )
            )
            renames[node.output[0]] = output
            break
    return renames, added


def _through_layout(graph: Graph, name: str) -> str:
    """The value `name` is a Reshape/Transpose of (or itself)."""
    node = graph.producer.get(name)
    while node is not None and node.op_type in ("Reshape", "Transpose"):
        name = node.input[0]
        node = graph.producer.get(name)
    return name


def _scaled(graph: Graph, name: str) -> tuple[str, float]:
    """(x, c) for `name = x * c` with a scalar constant c, else (name, 1)."""
    mul = graph.made_by(name, "Mul")
    if mul is not None:
        for value, factor in ((mul.input[0], mul.input[1]), (mul.input[1], mul.input[0])):
            constant = graph.constant(factor)
            if constant is not None and constant.size == 1:
                return value, float(constant.reshape(-1)[0])
    return name, 1.0


def _head_size(graph: Graph, heads_value: str) -> int | None:
    """The last dimension of the Reshape that splits a projection into heads, when it is a constant."""
    node = graph.producer.get(heads_value)
    while node is not None and node.op_type == "Transpose":
        node = graph.producer.get(node.input[0])
    if node is None or node.op_type != "Reshape":
        return None
    shape = graph.constant(node.input[1])
    if shape is None:
        concat = graph.made_by(node.input[1], "Concat")
        shape = None if concat is None else graph.constant(concat.input[-1])
    return int(shape.reshape(-1)[-1]) if shape is not None and shape.size >= 1 else None


def _projection_width(graph: Graph, name: str) -> int | None:
    """The output width of `x @ W (+ b)` with a constant W, when `name` is one."""
    node = graph.producer.get(name)
    if node is not None and node.op_type == "Add":
        node = next((graph.producer[i] for i in node.input if graph.made_by(i, "MatMul") is not None), None)
    weight = graph.float_weight(node.input[1]) if node is not None and node.op_type == "MatMul" else None
    return None if weight is None else int(weight.shape[1])


def fuse_attention(graph: Graph) -> tuple[dict[str, str], list[Any]]:
    """Split-heads attention (MatMul, Add mask, Softmax, MatMul, merge heads) → `MultiHeadAttention`.

    The additive mask goes in unchanged as `attention_bias`. The match is loose about the layout
    ops around the heads: `float_rewrites` keeps the fusion only if the outputs do not change.
    """
    from onnx import helper

    renames: dict[str, str] = {}
    added: list[Any] = []
    for softmax in graph.graph.node:
        add = graph.made_by(softmax.input[0], "Add") if softmax.op_type == "Softmax" else None
        if add is None:
            continue
        scores = next((graph.producer[i] for i in add.input if graph.made_by(i, "MatMul") is not None), None)
        readers = graph.consumers.get(softmax.output[0], [])
        if scores is None or len(readers) != 1 or readers[0].op_type != "MatMul":
            continue
        context = readers[0]
        merge = graph.consumers.get(context.output[0], [])
        if len(merge) != 1 or merge[0].op_type != "Transpose":
            continue
        merged = graph.consumers.get(merge[0].output[0], [])
        if len(merged) != 1 or merged[0].op_type != "Reshape":
            continue
        query_heads, query_scale = _scaled(graph, scores.input[0])
        key_heads, key_scale = _scaled(graph, scores.input[1])
        query = _through_layout(graph, query_heads)
        key = _through_layout(graph, key_heads)
        value = _through_layout(graph, context.input[1])
        head_size = _head_size(graph, query_heads)
        width = _projection_width(graph, query)
        if head_size is None or width is None or width % head_size or len({query, key, value}) != 3:
            continue
        output = graph.fresh(f"{merged[0].output[0]}_attention")
        mask = next(i for i in add.input if i != scores.output[0])
        added.append(
            helper.make_node(
                "MultiHeadAttention",
                [query, key, value, "", "", mask],
                [output],
                domain=MS_DOMAIN,
                num_heads=width // head_size,
                scale=query_scale * key_scale,
                name=graph.fresh(f"{softmax.name}_attention"),
            )
        )
        renames[merged[0].output[0]] = output
    return renames, added


def gather_before_dequantize(graph: Graph) -> tuple[dict[str, str], list[Any]]:
    """`Gather(Cast(q) * scale, ids)` → `Cast(Gather(q, ids)) * Gather(scale, ids)`, for a 2-D int8
    constant `q` and a constant `scale` per row (shape [rows, 1]) or for the whole table; the same
    numbers, multiplied only for the rows looked up."""
    from onnx import TensorProto, helper

    renames: dict[str, str] = {}
    added: list[Any] = []
    for node in graph.graph.node:
        if (
            node.op_type != "Gather"
            or node.domain
            or any(a.name == "axis" and a.i != 0 for a in node.attribute)
        ):
            continue
        mul = graph.made_by(node.input[0], "Mul")
        if mul is None:
            continue
        for value, scale_name in ((mul.input[0], mul.input[1]), (mul.input[1], mul.input[0])):
            cast = graph.made_by(value, "Cast")
            table, scale = (
                (None, None) if cast is None else (graph.constant(cast.input[0]), graph.constant(scale_name))
            )
            if cast is None or table is None or scale is None:
                continue
            to_float = any(a.name == "to" and a.i == TensorProto.FLOAT for a in cast.attribute)
            per_row = scale.shape == (table.shape[0], 1) if table.ndim == 2 else False
            if not to_float or table.dtype not in (np.int8, np.uint8) or not (per_row or scale.size == 1):
                continue
            stem = node.output[0]
            rows = graph.fresh(f"{stem}_int8")
            as_float = graph.fresh(f"{stem}_float")
            added += [
                helper.make_node(
                    "Gather",
                    [cast.input[0], node.input[1]],
                    [rows],
                    name=graph.fresh(f"{stem}_gather_int8"),
                    axis=0,
                ),
                helper.make_node(
                    "Cast", [rows], [as_float], name=graph.fresh(f"{stem}_cast"), to=TensorProto.FLOAT
                ),
            ]
            row_scales = scale_name
            if per_row:
                row_scales = graph.fresh(f"{stem}_scales")
                added.append(
                    helper.make_node(
                        "Gather",
                        [scale_name, node.input[1]],
                        [row_scales],
                        name=graph.fresh(f"{stem}_gather_scales"),
                        axis=0,
                    )
                )
            output = graph.fresh(f"{stem}_scaled")
            added.append(
                helper.make_node("Mul", [as_float, row_scales], [output], name=graph.fresh(f"{stem}_scale"))
            )
            renames[node.output[0]] = output
            break
    return renames, added


Rewrite = Callable[[Graph], tuple[dict[str, str], list[Any]]]
# Each later set drops the riskiest rewrite of the one before; the first whose outputs match is used.
REWRITES: tuple[tuple[Rewrite, ...], ...] = (
    (gather_before_dequantize, drop_softmax_nan_guards, fuse_erf_gelu, fuse_attention),
    (gather_before_dequantize, drop_softmax_nan_guards, fuse_erf_gelu),
    (),
)


def _check_feeds(calibration: Sequence[Feed]) -> list[dict[str, npt.NDArray[np.int64]]]:
    """A padded two-text batch of made-up ids, and the calibration texts padded into one batch."""
    rows = [[101, *range(2000, 2007), 102], [101, *range(3000, 3020), 102]]
    rows_of = [[int(i) for i in feed["input_ids"][0] if i] for feed in calibration if "input_ids" in feed]
    return [batch_feeds(rows)] + ([batch_feeds(rows_of)] if rows_of else [])


def _same_outputs(before: Any, after: Any, feeds: Sequence[Feed]) -> bool:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    sessions = [
        ort.InferenceSession(m.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"])
        for m in (before, after)
    ]
    inputs = {i.name for i in sessions[0].get_inputs()}
    for feed in feeds:
        given = {k: v for k, v in feed.items() if k in inputs}
        expected, actual = (session.run(None, given) for session in sessions)
        if not all(np.allclose(e, a, rtol=1e-3, atol=1e-4) for e, a in zip(expected, actual, strict=True)):
            return False
    return True


def rewritten(model: Any, rewrites: Iterable[Rewrite]) -> Any:
    """A copy of `model` with `rewrites` applied in order, each on the graph the previous one left.

    The com.microsoft opset is declared when a rewrite adds nodes; nodes nothing reads any more go.
    """
    from onnx import helper

    candidate = type(model)()
    candidate.CopyFrom(model)
    for rewrite in rewrites:
        graph = Graph(candidate.graph)
        renames, added = rewrite(graph)
        splice_rewrite(graph, renames, added)
        if added and not any(o.domain == MS_DOMAIN for o in candidate.opset_import):
            candidate.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
        prune(candidate)
    return candidate


def float_rewrites(model: Any, calibration: Sequence[Feed]) -> Any:
    """`model` with the float32 rewrites (the first set that leaves its outputs unchanged)."""
    feeds = _check_feeds(calibration)
    for rewrites in REWRITES:
        candidate = rewritten(model, rewrites)
        if not rewrites or _same_outputs(model, candidate, feeds):
            return candidate
        log.info("%d float32 rewrites changed the outputs; trying fewer", len(rewrites))
    raise AssertionError("unreachable: the empty rewrite set always matches")
