"""An int8 MiniLM built from the packaged one at first use: checked against it, cached, verified.

The packaged ONNX file stores each weight as int8 and multiplies it back to float32 inside the graph
(Cast + Mul by a scale), so ONNX Runtime computes in float32: the int8 only makes the file small.
Here those weights are folded back to float32 and every MatMul with a constant weight is rewritten as
DynamicQuantizeLinear + MatMulInteger (activations quantized per tensor while the model runs, weights
per output channel, symmetric), which ONNX Runtime fuses into its int8 GEMM kernels.

Two things keep the int8 model within cosine 0.99 of the packaged one on x86 CPUs without VNNI,
whose u8 x s8 kernel adds pairs of products in 16 bits and saturates past 32767:

- MatMuls reading a LayerNorm output (query, key, value, FFN up) get SmoothQuant: a few channels of
  those activations run 10-30x wider than the rest (channel 99 of MiniLM reaches 30), and with one
  scale per tensor they would leave the others a handful of int8 steps. Each channel is divided by a
  factor (a power of two, so exact in float32) that the weight's row takes back, with the factor set
  from activation peaks measured on a few fixed texts (`CALIBRATION_TEXTS`). Their weights, and those
  of the attention output projection, keep 7 bits (|q| <= 63) so no pair of products can saturate.
- MatMuls reading the GELU output (FFN down) have each token's row divided by its own peak before
  quantizing and multiplied back after: their outliers are per token ([CLS] reaches 24 where other
  tokens stay under 2), which per-tensor scales cannot absorb and channel factors cannot either.
  GELU output is almost never negative, so most codes sit near a small zero point and full 8-bit
  weights do not saturate.

Exact float32 rewrites ride along for speed, each set kept only if the outputs on padded test
batches do not change: the IsNaN/Where guard after each attention Softmax goes (the mask fills with
the float32 minimum, never -inf, so a Softmax of finite input has no NaN to replace), the erf GELU
becomes `com.microsoft.Gelu`, and each attention block (split heads, scores, mask, Softmax, merge
heads) becomes `com.microsoft.MultiHeadAttention` (about 10% faster on 140-token texts).

The file is cached as `<cache dir>/minilm-q8-<12 hex of the source SHA-256>.onnx` beside a JSON record
(its SHA-256, the recipe version, the MatMuls left in float32, the quality figures); a load re-hashes
the file and rebuilds it when it changed. The build is deterministic: the same source, recipe and
calibration give the same bytes, so concurrent builders write identical files.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ragdown.indexing.embedders.base import Embedder, EmbedderError
from ragdown.indexing.embedders.files import sha256_file

log = logging.getLogger(__name__)

# Bump whenever the bytes written for the same source change: a cached file of another recipe is rebuilt.
RECIPE_VERSION = 1
MIN_MEAN_COSINE = 0.99
MIN_COSINE = 0.98
# SmoothQuant's migration strength: 0.5 splits each channel's range evenly between activation and weight.
SMOOTHING_ALPHA = 0.5
# The smallest value of erf GELU is -0.16997 (at x = -0.75): a row peak floored here bounds |x / peak| by 1.
_GELU_FLOOR = 0.17

_MS_DOMAIN = "com.microsoft"
_INT8_WEIGHT_DTYPES = (np.int8, np.uint8)
Feed = Mapping[str, npt.NDArray[Any]]
_Kind = Literal["layernorm", "gelu", "other"]

# Fixed, varied texts for the quality check: prose, questions, code, lists, numbers, other languages,
# one-word and long inputs (the long ones run well past 128 tokens).
QUALITY_SENTENCES: tuple[str, ...] = (
    "How do I declare a path parameter with a type in FastAPI?",
    "Ownership rules in Rust: each value has a single owner, and the value is dropped when the owner "
    "goes out of scope.",
    "The cat slept on the warm windowsill all afternoon.",
    "Quarterly revenue rose 12% to $4.3 billion, beating analyst expectations.",
    "def add(a: int, b: int) -> int:\n    return a + b",
    'fn main() {\n    let v = vec![1, 2, 3];\n    println!("{:?}", v);\n}',
    "SELECT name, count(*) FROM users GROUP BY name HAVING count(*) > 1;",
    "kubectl rollout restart deployment/ragdown -n search",
    "Error: EACCES: permission denied, open '/etc/hosts'",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "The meeting has been moved to Thursday at 3 pm in room 4B.",
    "Le chat dort sur le canapé depuis ce matin.",
    "Der Zug nach Berlin hat zwanzig Minuten Verspätung.",
    "東京は日本の首都です。",
    "Wie viele Einwohner hat München?",
    "Dependencies are declared in Cargo.toml under the [dependencies] table.",
    "- install the package\n- run the migrations\n- restart the service",
    "# Installation\n\nRun `pip install ragdown` and then `ragdown serve ~/notes`.",
    "Why does my Docker container exit immediately after starting?",
    "Pydantic models validate request bodies and return a 422 response on invalid input.",
    "Borrowing lets a function use a value without taking ownership of it.",
    "The mitochondria is the powerhouse of the cell.",
    "She sold seashells by the seashore on a sunny Sunday.",
    "Use async def for path operations that await I/O, and plain def for blocking code.",
    "A trait defines shared behaviour that types can implement.",
    "The recipe calls for two cups of flour, one egg and a pinch of salt.",
    "Backups run nightly at 02:00 UTC and are kept for thirty days.",
    "OAuth2 with password flow and bearer tokens, using JWT for the access token.",
    "thanks!",
    "pagination",
    "What is the difference between a process and a thread?",
    "The stock market fell sharply after the central bank raised interest rates.",
    "Tokio is an asynchronous runtime for the Rust programming language.",
    "The quick brown fox jumps over the lazy dog.",
    "Patch notes: fixed a crash when the config file is empty; improved startup time by 30 percent.",
    "To reset your password, click 'Forgot password' on the sign-in page and follow the emailed link.",
    "| name | type | default |\n|------|------|---------|\n| port | int  | 8000    |",
    "HTTP 404 Not Found: the requested resource does not exist on this server.",
    "Lifetimes ensure that references are valid as long as they are used.",
    "Climate change is raising sea levels and making heatwaves more frequent.",
    "The orchestra performed Beethoven's Ninth Symphony to a sold-out hall.",
    "import numpy as np\nx = np.linspace(0, 1, 11)\nprint(x.mean())",
    "Dependency injection in FastAPI: declare a parameter with Depends() and the framework calls it "
    "for you, caching the result for the duration of the request.",
    "Pattern matching with match arms must be exhaustive: every possible value of the type has to be "
    "covered, or the compiler reports which cases are missing.",
    "Background tasks run after the response has been sent, which suits sending an email or writing a "
    "log line without making the client wait.",
    "The garden needs watering twice a week in summer, more often when the soil is sandy.",
    # Long inputs (about 150-250 tokens).
    " ".join(
        [
            "Smart pointers such as Box, Rc and RefCell give Rust programs heap allocation, shared "
            "ownership and interior mutability.",
            "Box stores a value on the heap and is useful for recursive types whose size is not known at "
            "compile time.",
            "Rc counts references so that several owners can read the same data, and the value is "
            "dropped when the last owner goes away.",
            "RefCell moves the borrowing rules from compile time to run time and panics when they are "
            "broken.",
            "Combining Rc and RefCell gives multiple owners of mutable data, at the price of checks that "
            "happen while the program runs.",
        ]
    ),
    " ".join(
        [
            "FastAPI generates an OpenAPI schema from your path operations, parameters and Pydantic "
            "models, and serves interactive documentation at /docs and /redoc.",
            "Each endpoint's request body, query parameters, headers and cookies are described with "
            "their types and validation rules, so clients can be generated automatically.",
            "You can add tags, summaries, descriptions and examples to enrich the schema, hide "
            "endpoints from it, or change the URL where it is served.",
            "Security schemes such as OAuth2 and API keys are also part of the schema, which lets the "
            "documentation page offer an Authorize button.",
        ]
    ),
    " ".join(
        [
            "The expedition left base camp before dawn, climbing through fresh snow toward the ridge.",
            "By noon the wind had picked up and the guides decided to turn back rather than risk the "
            "exposed traverse.",
            "They reached the tents in the late afternoon, tired but safe, and spent the evening melting "
            "snow for water and checking the forecast for a better window later in the week.",
            "Two days later the weather cleared and the team made the summit in under seven hours.",
        ]
    ),
    " ".join(
        [
            "version: 2.1\njobs:\n  test:\n    docker:\n      - image: python:3.11\n    steps:\n",
            "      - checkout\n      - run: pip install -e .[test]\n      - run: pytest -q\n",
            "workflows:\n  main:\n    jobs:\n      - test\n",
            "This configuration runs the test suite on every push inside a Python 3.11 container.",
        ]
    ),
)


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


@dataclass(frozen=True)
class QualityReport:
    """Cosine between reference and candidate embeddings of the same texts."""

    mean: float
    minimum: float
    count: int

    @property
    def passed(self) -> bool:
        return self.mean >= MIN_MEAN_COSINE and self.minimum >= MIN_COSINE

    def __str__(self) -> str:
        return f"cosine mean {self.mean:.4f}, min {self.minimum:.4f} over {self.count} texts"


def cosine_report(expected: npt.NDArray[np.float32], actual: npt.NDArray[np.float32]) -> QualityReport:
    """Row-by-row cosine of two sets of unit vectors."""
    cosines = np.sum(expected.astype(np.float64) * actual.astype(np.float64), axis=1)
    return QualityReport(float(cosines.mean()), float(cosines.min()), int(cosines.size))


def compare_embeddings(
    reference: Embedder, candidate: Embedder, texts: Sequence[str] = QUALITY_SENTENCES
) -> QualityReport:
    """Embed `texts` with both as documents and compare them row by row."""
    return cosine_report(reference.embed(list(texts), "document"), candidate.embed(list(texts), "document"))


class QualityCheck:
    """Compares a candidate model file with the reference embedder (embedded once, on first use)."""

    def __init__(
        self,
        reference: Callable[[], Embedder],
        load: Callable[[Path], Embedder],
        texts: Sequence[str] = QUALITY_SENTENCES,
    ) -> None:
        self._reference = reference
        self._load = load
        self._texts = list(texts)
        self._expected: npt.NDArray[np.float32] | None = None

    def __call__(self, candidate: Path) -> QualityReport:
        if self._expected is None:
            reference = self._reference()
            try:
                self._expected = reference.embed(self._texts, "document")
            finally:
                reference.close()
        embedder = self._load(candidate)
        try:
            return cosine_report(self._expected, embedder.embed(self._texts, "document"))
        finally:
            embedder.close()


# --- the graph ---------------------------------------------------------------------------------------


def _array(tensor: Any) -> npt.NDArray[Any]:
    from onnx import numpy_helper

    return np.asarray(numpy_helper.to_array(tensor))


def _tensor(array: npt.NDArray[Any], name: str) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.ascontiguousarray(array), name)


class _Graph:
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
        return None if tensor is None else _array(tensor)

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

    def kind(self, activation: str) -> _Kind:
        node = self.producer.get(activation)
        if node is not None and node.op_type == "LayerNormalization":
            return "layernorm"
        if node is not None and node.op_type == "Gelu":
            return "gelu"
        return "other"


def quantizable_matmuls(model: Any) -> list[str]:
    """Names of the MatMul nodes whose second input is a constant 2-D matrix, in graph order."""
    graph = _Graph(model.graph)
    return [
        node.name
        for node in model.graph.node
        if node.op_type == "MatMul" and node.domain == "" and graph.float_weight(node.input[1]) is not None
    ]


def quantize_per_channel(
    weight: npt.NDArray[np.float32], levels: int = 127
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Symmetric int8 per output column: `weight ≈ q * scale` with |q| <= `levels`, zero point 0."""
    peak = np.abs(weight).max(axis=0).astype(np.float32)
    scale = np.where(peak > 0, peak / np.float32(levels), np.float32(1)).astype(np.float32)
    quantized = np.clip(np.rint(weight / scale), -levels, levels).astype(np.int8)
    return quantized, scale


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


def _drop_softmax_nan_guards(graph: _Graph) -> tuple[dict[str, str], list[Any]]:
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


def _fuse_erf_gelu(graph: _Graph) -> tuple[dict[str, str], list[Any]]:
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
                    "Gelu", [x], [output], domain=_MS_DOMAIN, name=graph.fresh(f"{node.name}_gelu")
                )
            )
            renames[node.output[0]] = output
            break
    return renames, added


def _through_layout(graph: _Graph, name: str) -> str:
    """The value `name` is a Reshape/Transpose of (or itself)."""
    node = graph.producer.get(name)
    while node is not None and node.op_type in ("Reshape", "Transpose"):
        name = node.input[0]
        node = graph.producer.get(name)
    return name


def _scaled(graph: _Graph, name: str) -> tuple[str, float]:
    """(x, c) for `name = x * c` with a scalar constant c, else (name, 1)."""
    mul = graph.made_by(name, "Mul")
    if mul is not None:
        for value, factor in ((mul.input[0], mul.input[1]), (mul.input[1], mul.input[0])):
            constant = graph.constant(factor)
            if constant is not None and constant.size == 1:
                return value, float(constant.reshape(-1)[0])
    return name, 1.0


def _head_size(graph: _Graph, heads_value: str) -> int | None:
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


def _projection_width(graph: _Graph, name: str) -> int | None:
    """The output width of `x @ W (+ b)` with a constant W, when `name` is one."""
    node = graph.producer.get(name)
    if node is not None and node.op_type == "Add":
        node = next((graph.producer[i] for i in node.input if graph.made_by(i, "MatMul") is not None), None)
    weight = graph.float_weight(node.input[1]) if node is not None and node.op_type == "MatMul" else None
    return None if weight is None else int(weight.shape[1])


def _fuse_attention(graph: _Graph) -> tuple[dict[str, str], list[Any]]:
    """Split-heads attention (MatMul, Add mask, Softmax, MatMul, merge heads) → `MultiHeadAttention`.

    The additive mask goes in unchanged as `attention_bias`. The match is loose about the layout
    ops around the heads: `_float_rewrites` keeps the fusion only if the outputs do not change.
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
                domain=_MS_DOMAIN,
                num_heads=width // head_size,
                scale=query_scale * key_scale,
                name=graph.fresh(f"{softmax.name}_attention"),
            )
        )
        renames[merged[0].output[0]] = output
    return renames, added


def _apply(graph: _Graph, renames: Mapping[str, str], added: Iterable[Any]) -> None:
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


def _prune(model: Any) -> None:
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


_Rewrite = Callable[[_Graph], tuple[dict[str, str], list[Any]]]
# Each later set drops the riskiest rewrite of the one before; the first whose outputs match is used.
_REWRITES: tuple[tuple[_Rewrite, ...], ...] = (
    (_drop_softmax_nan_guards, _fuse_erf_gelu, _fuse_attention),
    (_drop_softmax_nan_guards, _fuse_erf_gelu),
    (),
)


def _check_feeds(calibration: Sequence[Feed]) -> list[dict[str, npt.NDArray[np.int64]]]:
    """A padded two-text batch of made-up ids, and the calibration texts padded into one batch."""
    from ragdown.indexing.embedders.onnx_model import batch_feeds

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


def _float_rewrites(model: Any, calibration: Sequence[Feed]) -> Any:
    """`model` with the float32 rewrites (the first set that leaves its outputs unchanged)."""
    from onnx import helper

    feeds = _check_feeds(calibration)
    for rewrites in _REWRITES:
        candidate = type(model)()
        candidate.CopyFrom(model)
        for rewrite in rewrites:
            graph = _Graph(candidate.graph)
            renames, added = rewrite(graph)
            _apply(graph, renames, added)
            if added and not any(o.domain == _MS_DOMAIN for o in candidate.opset_import):
                candidate.opset_import.append(helper.make_opsetid(_MS_DOMAIN, 1))
            _prune(candidate)
        if not rewrites or _same_outputs(model, candidate, feeds):
            return candidate
        log.info("%d float32 rewrites changed the outputs; trying fewer", len(rewrites))
    raise AssertionError("unreachable: the empty rewrite set always matches")


def _opset(model: Any) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


class _Quantizer:
    """Rewrites the MatMuls of one graph; new nodes are emitted in place of the MatMul they replace."""

    def __init__(self, model: Any, smoothing: Mapping[str, npt.NDArray[np.float32]]) -> None:
        self.model = model
        self.graph = _Graph(model.graph)
        self.smoothing = smoothing
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        # activation → (uint8 codes, scale, zero point, row peaks or "")
        self.quantized: dict[str, tuple[str, str, str, str]] = {}

    def constant(self, array: npt.NDArray[Any], name: str) -> str:
        name = self.graph.fresh(name)
        self.initializers.append(_tensor(array, name))
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
            if _opset(self.model) >= 18:
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

    model = _float_rewrites(onnx.load(str(source)), calibration)
    graph = _Graph(model.graph)
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
    _prune(model)
    model.producer_name = "ragdown.quantize"
    model.producer_version = str(RECIPE_VERSION)
    onnx.checker.check_model(model)
    return model


# --- the cache ---------------------------------------------------------------------------------------


def cached_model_path(cache_dir: Path, stem: str, source_sha256: str) -> Path:
    return cache_dir / f"{stem}-{source_sha256[:12]}.onnx"


def record_path(model_path: Path) -> Path:
    """The JSON record beside a cached model: its SHA-256, the recipe and the quality figures."""
    return model_path.with_name(model_path.name + ".json")


@dataclass(frozen=True)
class QuantizedModel:
    """A verified quantized model file; `built` says whether this call wrote it."""

    path: Path
    sha256: str
    built: bool
    keep_float: tuple[str, ...]
    quality: QualityReport


def fallback_plans(model: Any) -> list[tuple[str, ...]]:
    """The MatMuls to leave in float32, from none to more; a build takes the first plan that passes.

    Then the FFN down-projections (the MatMuls that narrow their input), then those plus every
    MatMul of the first and last layers.
    """
    graph = _Graph(model.graph)
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


def _write_atomic(path: Path, data: bytes) -> None:
    """Write a temporary file beside `path`, flush it to disk, then rename it over `path`."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        Path(temporary).chmod(0o644)
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)


def _reuse(path: Path, source_sha256: str) -> QuantizedModel | None:
    """The cached file, if its record matches this source and recipe and its bytes match the record."""
    if not path.is_file():
        return None
    try:
        record = json.loads(record_path(path).read_text(encoding="utf-8"))
        expected = str(record["sha256"])
        quality = QualityReport(
            float(record["quality"]["mean"]), float(record["quality"]["min"]), int(record["quality"]["count"])
        )
        keep_float = tuple(str(name) for name in record["keep_float"])
        matches = record["recipe"] == RECIPE_VERSION and record["source_sha256"] == source_sha256
    except (OSError, ValueError, KeyError, TypeError):
        log.warning("the int8 model %s has no readable record beside it; rebuilding it", path)
        return None
    if not matches:
        log.info("the int8 model %s was built by another recipe or from another source; rebuilding it", path)
        return None
    actual = sha256_file(path)
    if actual != expected:
        log.warning(
            "the int8 model %s does not match its recorded SHA-256 (expected %s, found %s); rebuilding it",
            path,
            expected,
            actual,
        )
        return None
    return QuantizedModel(path, actual, False, keep_float, quality)


def _build(
    source: Path,
    source_sha256: str,
    path: Path,
    check: Callable[[Path], QualityReport],
    calibration: Sequence[Feed],
) -> QuantizedModel | None:
    import onnx

    path.parent.mkdir(parents=True, exist_ok=True)
    for keep_float in fallback_plans(onnx.load(str(source))):
        data = quantize_model(source, keep_float, calibration=calibration).SerializeToString(
            deterministic=True
        )
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        candidate = Path(temporary)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            candidate.chmod(0o644)
            quality = check(candidate)
            if not quality.passed:
                log.warning(
                    "the int8 model with %d MatMuls left in float32 falls short of cosine mean %.2f / "
                    "min %.2f against the packaged one (%s)",
                    len(keep_float),
                    MIN_MEAN_COSINE,
                    MIN_COSINE,
                    quality,
                )
                continue
            os.replace(candidate, path)
        finally:
            candidate.unlink(missing_ok=True)
        digest = hashlib.sha256(data).hexdigest()
        record = {
            "sha256": digest,
            "source_sha256": source_sha256,
            "recipe": RECIPE_VERSION,
            "keep_float": list(keep_float),
            "quality": {"mean": quality.mean, "min": quality.minimum, "count": quality.count},
        }
        _write_atomic(record_path(path), (json.dumps(record, indent=2) + "\n").encode())
        log.info("built the int8 model %s: %s", path, quality)
        return QuantizedModel(path, digest, True, keep_float, quality)
    return None


def ensure_quantized(
    source: Path,
    source_sha256: str,
    cache_dir: Path,
    check: Callable[[Path], QualityReport],
    *,
    stem: str,
    calibration: Sequence[Feed] = (),
    bundled: Sequence[Path] = (),
) -> QuantizedModel | None:
    """The cached int8 model of `source` (verified `source_sha256`), built when missing or changed.

    A verified build in one of the `bundled` folders (an image's, read-only) is used first.

    A build writes each candidate beside its final path, runs `check` on it, and renames the first
    that passes into place before recording its digest. None, with a warning, when no candidate
    passes or the build fails: the caller then runs `source` itself.
    """
    for folder in bundled:
        found = _reuse(cached_model_path(folder, stem, source_sha256), source_sha256)
        if found is not None:
            return found
    path = cached_model_path(cache_dir, stem, source_sha256)
    reused = _reuse(path, source_sha256)
    if reused is not None:
        return reused
    log.info("building the int8 model %s from %s (first use: a few seconds)", path, source)
    try:
        built = _build(source, source_sha256, path, check, calibration)
    except OSError as error:
        log.warning(
            "cannot write the int8 model to %s (%s); running the packaged model (point RAGDOWN_MODELS "
            "at a writable folder to cache it)",
            cache_dir,
            error,
        )
        return None
    except Exception as error:  # a model the quantizer cannot handle must not stop the embedder loading
        log.warning("cannot build the int8 model (%s); running the packaged model", error)
        return None
    if built is None:
        log.warning("no int8 build of %s passed the quality check; running the packaged model", source)
    return built
