"""An int8 MiniLM built from the packaged one at first use: checked against it, cached, verified.

The packaged ONNX file stores each weight as int8 and multiplies it back to float32 inside the graph
(Cast + Mul by a scale), so ONNX Runtime computes in float32: the int8 only makes the file small.
A build folds those weights back to float32, applies exact float32 rewrites, and rewrites every
MatMul with a constant weight as DynamicQuantizeLinear + MatMulInteger; the result must stay within
cosine 0.99 (mean) / 0.98 (min) of the packaged model or it is not used.

- `calibration`: the texts run at build time and the SmoothQuant factors set from them.
- `graph`: pattern matching over an ONNX graph, and splicing edits into it.
- `rewrites`: the float32 rewrites (NaN guards, GELU, attention), kept only if outputs match.
- `quantizer`: the int8 MatMul rewrite and the plans of MatMuls to leave in float32.
- `quality`: the cosine check against the packaged model.
- `cache`: the cached file, its JSON record, reuse and rebuild (`ensure_quantized`).

The build is deterministic: the same source, recipe and calibration give the same bytes. onnx is
imported only inside the functions that build, so a runtime without it can still load a cached file.
"""

from __future__ import annotations

from ragdown.indexing.embedders.quantize.cache import (
    QuantizedModel,
    cached_model_path,
    ensure_quantized,
    record_path,
)
from ragdown.indexing.embedders.quantize.calibration import CALIBRATION_TEXTS
from ragdown.indexing.embedders.quantize.quality import (
    QualityCheck,
    QualityReport,
    compare_embeddings,
    cosine_report,
)

__all__ = [
    "CALIBRATION_TEXTS",
    "QualityCheck",
    "QualityReport",
    "QuantizedModel",
    "cached_model_path",
    "compare_embeddings",
    "cosine_report",
    "ensure_quantized",
    "record_path",
]
