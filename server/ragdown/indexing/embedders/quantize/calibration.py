"""Calibration: the fixed texts run through the model at build time, and the SmoothQuant factors.

A few channels of MiniLM's LayerNorm outputs run 10-30x wider than the rest (channel 99 reaches
30); with one int8 scale per tensor the others would keep a handful of steps. `smoothing_factors`
divides each such channel by a power of two that the weight's row takes back, set from the peaks
`activation_peaks` measures on `CALIBRATION_TEXTS`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

# SmoothQuant's migration strength: 0.5 splits each channel's range evenly between activation and weight.
SMOOTHING_ALPHA = 0.5
# Model inputs (input_ids, attention_mask, token_type_ids) of one text, or of a padded batch.
Feed = Mapping[str, npt.NDArray[Any]]

# Texts whose activation peaks set the smoothing factors; kept apart from QUALITY_SENTENCES so the
# check measures texts the build did not see.
CALIBRATION_TEXTS: tuple[str, ...] = (
    "search",
    "How do I configure logging for a background worker?",
    "Release notes\n\n- Faster startup\n- Fixed a crash on empty input\n- Dropped Python 3.8",
    "The river flooded the lower town twice last spring, and the council voted to raise the levee.",
    "```python\nfor path in sorted(root.rglob('*.md')):\n    print(path.stem)\n```",
    "impl Display for Point {\n    fn fmt(&self, f: &mut Formatter) -> fmt::Result {\n"
    '        write!(f, "({}, {})", self.x, self.y)\n    }\n}',
    "Guide › Deployment › Environment variables\n\nSet DATABASE_URL before the first start; the service "
    "reads it once and keeps the connection pool open for the life of the process.",
    "Die Bibliothek öffnet um neun Uhr und schließt am Samstag schon um Mittag.",
    "¿Dónde está la estación de tren más cercana?",
    " ".join(
        [
            "A closure captures variables from the scope where it is defined.",
            "It can borrow them immutably, borrow them mutably, or take ownership, and the compiler "
            "picks the least restrictive of the three that the body allows.",
            "The move keyword forces ownership, which matters when the closure outlives the scope, as "
            "it does when it is handed to a new thread.",
            "Closures implement one or more of the Fn, FnMut and FnOnce traits, and functions that "
            "accept closures name the trait they need.",
        ]
    ),
    " ".join(
        [
            "Query parameters that are not part of the path are read from the URL after the question mark.",
            "Declare them as function parameters with default values to make them optional, or "
            "without a default to make them required; the framework converts and validates each one "
            "and answers with a clear error when a value has the wrong type.",
            "Lists, enums and constrained numbers work the same way, and every rule shows up in the "
            "generated OpenAPI schema.",
        ]
    ),
    "| Flag | Meaning |\n|---|---|\n| -v | verbose |\n| -q | quiet |",
)


def smoothing_factors(
    activation_peak: npt.NDArray[np.floating[Any]],
    weights: Sequence[npt.NDArray[np.float32]],
    alpha: float = SMOOTHING_ALPHA,
) -> npt.NDArray[np.float32]:
    """SmoothQuant's per-input-channel factors `peak_x^alpha / peak_w^(1 - alpha)`, as powers of two.

    `x @ w == (x / s) @ (s[:, None] * w)`; powers of two keep both sides exact in float32 and make
    the factors immune to the last-bit differences of a calibration run on another CPU.
    """
    weight_peak = np.max([np.abs(w).max(axis=1) for w in weights], axis=0).astype(np.float64)
    peak = np.asarray(activation_peak, dtype=np.float64)
    usable = (peak > 0) & (weight_peak > 0)
    factor = np.ones_like(peak)
    factor[usable] = peak[usable] ** alpha / weight_peak[usable] ** (1 - alpha)
    exponent = np.clip(np.rint(np.log2(factor)), -16, 16)
    return np.asarray(np.exp2(exponent), dtype=np.float32)


def activation_peaks(model: Any, names: Collection[str], feeds: Iterable[Feed]) -> dict[str, Any]:
    """max |value| per channel (last axis) of each named float tensor over the feeds (one text each)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    probe = type(model)()
    probe.CopyFrom(model)
    present = {o.name for o in probe.graph.output}
    probe.graph.output.extend(
        helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in names if name not in present
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(
        probe.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"]
    )
    inputs = {i.name for i in session.get_inputs()}
    outputs = [o.name for o in session.get_outputs()]
    peaks: dict[str, Any] = {}
    for feed in feeds:
        values = session.run(None, {k: v for k, v in feed.items() if k in inputs})
        for name, value in zip(outputs, values, strict=True):
            if name in names:
                peak = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
                peaks[name] = np.maximum(peaks[name], peak) if name in peaks else peak
    return peaks
