"""The float32 rewrites, each on a tiny graph: what replaces the pattern, same outputs, near misses."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ragdown.indexing.embedders.quantize.graph import MS_DOMAIN, Graph
from ragdown.indexing.embedders.quantize.rewrites import (
    drop_softmax_nan_guards,
    float_rewrites,
    fuse_attention,
    fuse_erf_gelu,
    gather_before_dequantize,
    rewritten,
)
from tests.indexing.quantize import tiny


def assert_same_outputs(before: Any, after: Any, feeds: dict[str, Any]) -> None:
    """`after` (as the embedder runs it) computes what `before` does as written."""
    expected = tiny.run(before, feeds, optimized=False)
    actual = tiny.run(after, feeds)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)


def declares_ms_domain(model: Any) -> bool:
    return any(o.domain == MS_DOMAIN for o in model.opset_import)


# --- the NaN guard after Softmax -------------------------------------------------------------------


def test_the_nan_guard_after_a_softmax_is_dropped() -> None:
    model = tiny.softmax_guard()
    after = rewritten(model, [drop_softmax_nan_guards])
    assert tiny.ops(after) == ["Softmax", "MatMul"]
    assert tiny.readers(after, tiny.node_of(after, "Softmax").output[0]) == ["MatMul"]
    assert not declares_ms_domain(after), "nothing was added"
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, (2, 5)).astype(np.float32)
    x[1, 2:] = tiny.FLOAT32_MIN  # masked positions, as attention fills them
    assert_same_outputs(model, after, {"x": x})


@pytest.mark.parametrize(
    "near_miss",
    [{"replacement": 1.0}, {"guarded": "Sigmoid"}],
    ids=["replaces-nan-with-one", "guards-a-sigmoid"],
)
def test_a_nan_guard_that_is_not_the_softmax_one_stays(near_miss: dict[str, Any]) -> None:
    model = tiny.softmax_guard(**near_miss)
    graph = Graph(model.graph)
    assert drop_softmax_nan_guards(graph) == ({}, [])
    assert tiny.same_bytes(rewritten(model, [drop_softmax_nan_guards]), model)


# --- a lookup in an int8 table ----------------------------------------------------------------------


@pytest.mark.parametrize("per_row", [True, False], ids=["scale-per-row", "one-scale"])
def test_a_lookup_picks_int8_rows_before_scaling_them(per_row: bool) -> None:
    model = tiny.int8_lookup(per_row=per_row)
    after = rewritten(model, [gather_before_dequantize])
    table = next(t.name for t in after.graph.initializer if t.name.startswith("q"))
    # Only the looked-up rows are cast: nothing reads the whole table but a Gather, so ONNX Runtime
    # has no float copy of it to fold.
    assert tiny.readers(after, table) == ["Gather"]
    assert sorted(tiny.ops(after)) == sorted(
        ["Gather", "Cast", *(["Gather"] if per_row else []), "Mul", "Add"]
    )
    ids = np.array([[0, 39, 7], [7, 12, 1]], dtype=np.int64)
    expected = tiny.run(model, {"ids": ids}, optimized=False)
    actual = tiny.run(after, {"ids": ids})
    assert np.array_equal(expected[0], actual[0])  # the same products, bit for bit


def test_a_lookup_along_another_axis_stays() -> None:
    model = tiny.int8_lookup(axis=1)
    assert gather_before_dequantize(Graph(model.graph)) == ({}, [])


# --- erf GELU --------------------------------------------------------------------------------------


@pytest.mark.parametrize("swap_outer", [False, True])
@pytest.mark.parametrize("swap_half", [False, True])
@pytest.mark.parametrize("swap_one", [False, True])
def test_erf_gelu_becomes_one_gelu_node(swap_outer: bool, swap_half: bool, swap_one: bool) -> None:
    model = tiny.erf_gelu(swap_outer=swap_outer, swap_half=swap_half, swap_one=swap_one)
    after = rewritten(model, [fuse_erf_gelu])
    assert tiny.ops(after) == ["MatMul", "Add", f"{MS_DOMAIN}.Gelu", "MatMul"]
    gelu = tiny.node_of(after, "Gelu")
    assert list(gelu.input) == [tiny.node_of(after, "Add").output[0]], "GELU reads the FFN projection"
    assert tiny.readers(after, gelu.output[0]) == ["MatMul"]
    assert declares_ms_domain(after)
    x = np.random.default_rng(1).normal(0, 2, (2, 3, 4)).astype(np.float32)
    assert_same_outputs(model, after, {"x": x})


@pytest.mark.parametrize(
    "near_miss",
    [{"divisor": 2.0}, {"erf_of_other": True}],
    ids=["divides-by-two", "erf-of-another-value"],
)
def test_an_almost_gelu_stays(near_miss: dict[str, Any]) -> None:
    model = tiny.erf_gelu(**near_miss)
    assert fuse_erf_gelu(Graph(model.graph)) == ({}, [])
    assert tiny.same_bytes(rewritten(model, [fuse_erf_gelu]), model)


# --- attention -------------------------------------------------------------------------------------


def test_an_attention_block_becomes_multi_head_attention() -> None:
    model = tiny.attention()
    after = rewritten(model, [fuse_attention])
    # Splitting and merging heads, the scores, the mask and the Softmax are all gone.
    assert tiny.ops(after) == [*["MatMul", "Add"] * 3, f"{MS_DOMAIN}.MultiHeadAttention", "MatMul", "Add"]
    attention = tiny.node_of(after, "MultiHeadAttention")
    projections = [n.output[0] for n in after.graph.node if n.op_type == "Add"][:3]
    assert list(attention.input) == [*projections, "", "", "bias"], "query, key, value, the mask as bias"
    assert tiny.attribute(attention, "num_heads") == tiny.HEADS
    assert tiny.attribute(attention, "scale") == pytest.approx(tiny.QUERY_SCALE * tiny.KEY_SCALE)
    assert tiny.readers(after, attention.output[0]) == ["MatMul"], "the output projection reads it"
    assert declares_ms_domain(after)
    assert_same_outputs(model, after, tiny.attention_feeds(np.random.default_rng(2)))


@pytest.mark.parametrize(
    "near_miss",
    [{"merge_transpose": False}, {"key_from_query": True}],
    ids=["heads-merged-without-transpose", "keys-from-the-query-projection"],
)
def test_an_almost_attention_block_stays(near_miss: dict[str, Any]) -> None:
    model = tiny.attention(**near_miss)
    assert fuse_attention(Graph(model.graph)) == ({}, [])
    assert tiny.same_bytes(rewritten(model, [fuse_attention]), model)


# --- the output check that keeps or refuses a set of rewrites --------------------------------------


def test_the_rewrites_are_kept_when_the_outputs_match() -> None:
    model = tiny.encoder_over_ids()
    after = float_rewrites(model, calibration=())
    assert f"{MS_DOMAIN}.MultiHeadAttention" in tiny.ops(after)
    assert "Softmax" not in tiny.ops(after)


def test_a_fusion_that_changes_the_outputs_is_refused() -> None:
    """The attention match is loose: a Softmax over the query axis still matches, and fusing it
    would change the outputs. The check falls back to the next set, which has no fusion."""
    model = tiny.encoder_over_ids(softmax_axis=2)
    assert f"{MS_DOMAIN}.MultiHeadAttention" in tiny.ops(rewritten(model, [fuse_attention]))
    after = float_rewrites(model, calibration=())
    assert tiny.ops(after) == tiny.ops(model)
    assert tiny.same_bytes(after, model)
