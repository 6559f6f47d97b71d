"""The int8 MatMul rewrite on tiny graphs: the nodes it writes, the weight codes, outputs near float."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ragdown.indexing.embedders.quantize.graph import to_array
from ragdown.indexing.embedders.quantize.quantizer import quantize_matmuls
from tests.indexing.quantize import tiny

# What replaces `x @ W`: x quantized while the model runs, an integer product, both scales applied.
INT8_MATMUL = ["DynamicQuantizeLinear", "Mul", "MatMulInteger", "Cast", "Mul"]


def quantized(model: Any, **options: Any) -> Any:
    copy = type(model)()
    copy.CopyFrom(model)
    return quantize_matmuls(copy, **options)


def weight_codes(model: Any) -> np.ndarray[Any, Any]:
    (codes,) = (to_array(t) for t in model.graph.initializer if t.name.endswith("_w8"))
    return codes


def relative_error(model: Any, int8: Any, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Per token: the largest error of the int8 model's output over the largest float32 output."""
    (expected,) = tiny.run(model, {"x": x}, optimized=False)
    (actual,) = tiny.run(int8, {"x": x})
    return np.asarray(np.abs(actual - expected).max(axis=-1) / np.abs(expected).max(axis=-1))


def mean_error(model: Any, int8: Any, x: np.ndarray[Any, Any]) -> float:
    (expected,) = tiny.run(model, {"x": x}, optimized=False)
    (actual,) = tiny.run(int8, {"x": x})
    return float(np.abs(actual - expected).mean())


def tokens(seed: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).normal(0, 1, (2, 5, 8)).astype(np.float32)


def test_a_layernorm_fed_matmul_gets_7_bit_weights() -> None:
    model = tiny.layernorm_matmul()
    int8 = quantized(model)
    assert tiny.ops(int8) == ["LayerNormalization", *INT8_MATMUL]
    assert int8.graph.output[0].name == model.graph.output[0].name, "the output keeps its name"
    codes = weight_codes(int8)
    assert codes.dtype == np.int8
    # Every column reaches its peak, and no code passes 63: u8 x s8 pair sums stay under 2^15.
    assert (np.abs(codes).max(axis=0) == 63).all()
    assert relative_error(model, int8, tokens(0)).max() < 0.03


def test_a_gelu_fed_matmul_scales_each_token_by_its_own_peak() -> None:
    """[CLS]'s FFN activations run 10x wider than other tokens' in MiniLM; one scale for the
    tensor would leave the others a few int8 steps."""
    model = tiny.gelu_matmul()
    int8 = quantized(model)
    assert tiny.ops(int8) == [
        "com.microsoft.Gelu",
        "ReduceMax",  # the row's peak
        "Max",  # floored at GELU's smallest value
        "Div",
        *INT8_MATMUL,
        "Mul",  # times the row's peak again
    ]
    assert (np.abs(weight_codes(int8)).max(axis=0) == 127).all(), "full 8-bit weights"
    x = tokens(1)
    x[0, 0] *= 20
    assert relative_error(model, int8, x).max() < 0.03, "small tokens keep their precision"


def test_calibration_narrows_a_wide_layernorm_channel_by_a_power_of_two() -> None:
    model = tiny.layernorm_matmul(wide_channel=30.0)
    calibration = [{"x": tokens(seed)[:1]} for seed in (10, 11, 12)]
    smoothed = quantized(model, calibration=calibration)
    assert tiny.ops(smoothed) == ["LayerNormalization", "Mul", *INT8_MATMUL]
    (divide,) = (to_array(t) for t in smoothed.graph.initializer if t.name.endswith("_smooth"))
    factors = 1 / divide
    assert np.array_equal(factors, np.exp2(np.round(np.log2(factors)))), "powers of two: exact"
    assert int(np.argmax(factors)) == 3
    # The wide channel no longer sets the scale the other seven share (3-5x smaller errors here).
    assert mean_error(model, smoothed, tokens(2)) < mean_error(model, quantized(model), tokens(2)) / 2


def test_a_weight_stored_as_int8_times_scale_is_folded_and_requantized() -> None:
    """The packaged MiniLM multiplies its int8 weights back to float32 inside the graph."""
    model = tiny.packaged_weight_matmul()
    int8 = quantized(model)
    assert tiny.ops(int8) == INT8_MATMUL, "the Cast and Mul of the stored weight are gone"
    assert [t.name for t in int8.graph.initializer if t.name.startswith("w_q")] == []
    assert relative_error(model, int8, tokens(3)).max() < 0.03


@pytest.mark.parametrize("case", ["no-constant-weight", "kept-in-float32"])
def test_a_matmul_without_a_constant_weight_or_kept_in_float32_stays(case: str) -> None:
    keep: tuple[str, ...]
    if case == "no-constant-weight":
        model, keep = tiny.unquantizable(), ()
    else:
        model = tiny.layernorm_matmul()
        keep = (tiny.node_of(model, "MatMul").name,)
    int8 = quantized(model, keep_float=keep)
    assert tiny.ops(int8) == tiny.ops(model)
    assert int8.graph.node == model.graph.node
    assert int8.graph.initializer == model.graph.initializer
