"""The hub models ragdown knows by name, pinned to a commit with every file's SHA-256 and size.

Both are the int8 ("q8") ONNX exports in each repository's `onnx/` folder; each spec gives its model's
pooling, prefixes and cosine scale (`min_score`, `unrelated`).

Where the pins come from. This machine cannot reach the hub, so no value below was checked by
downloading the file here. Each was taken from public projects that pin the same repo, revision and
files with SHA-256, and is used only where independent projects agree:

- bge-small, `Xenova/bge-small-en-v1.5` at `ea104dac…`: the revision is pinned by many projects;
  `onnx/model_quantized.onnx` (34,014,426 bytes, `6c9c6101…`) and `tokenizer.json` (711,396 bytes,
  `d241a60d…`) appear with those digests and sizes in several unrelated manifests, one of which says
  they were checked against the hub's LFS metadata and a download.
- granite-small, `onnx-community/granite-embedding-small-english-r2-ONNX` at `1dc7835b…`: the graph
  `onnx/model_quantized.onnx` (598,902 bytes, `a3fad524…`) keeps its weights in the external-data file
  `onnx/model_quantized.onnx_data` (51,885,568 bytes, `1f4cf47e…`), which must sit beside it; with
  `tokenizer.json` (2,128,614 bytes, `feeb8334…`) these agree across two unrelated projects (one
  documents them as checked against the hub's tree API).

Still unverified here: that the hub serves these exact bytes today. The first real download checks
it (a mismatch is refused with both digests, never loaded); until someone has run one, treat the
pins as corroborated, not verified.
"""

from __future__ import annotations

from ragdown.indexing.embedders.hub import HubFile, HubModelSpec
from ragdown.indexing.embedders.onnx_model import OnnxModelSpec

GRANITE_SMALL = HubModelSpec(
    key="granite-small",
    repo="onnx-community/granite-embedding-small-english-r2-ONNX",
    revision="1dc7835ba0cb9c76a3618d0bf0c427c97671b3c8",
    files=(
        HubFile(
            "onnx/model_quantized.onnx",
            "a3fad524afc3f060216a8ddbb1ac89c9b6498fba8995b5718bde879076a2e9ba",
            598_902,
        ),
        HubFile(
            "onnx/model_quantized.onnx_data",
            "1f4cf47e4adec7f7ae09db03d071ba8667e07f9a4203142c7efa8d37fe453597",
            51_885_568,
        ),
        HubFile(
            "tokenizer.json",
            "feeb83348dcb033bc6b9d2e1f7906ca9eb2d122845000c9416d894d7c2927149",
            2_128_614,
        ),
    ),
    model_file="onnx/model_quantized.onnx",
    tokenizer_file="tokenizer.json",
    weights_file="onnx/model_quantized.onnx_data",
    encoder=OnnxModelSpec(
        name="granite-embedding-small-english-r2-q8",
        dim=384,
        # The model reads 8192 tokens; a 1500-character chunk plus its breadcrumb is well under 512.
        max_tokens=512,
        pooling="cls",
        max_chars=1500,
        min_score=0.8,
        unrelated=0.75,
    ),
)

BGE_SMALL = HubModelSpec(
    key="bge-small",
    repo="Xenova/bge-small-en-v1.5",
    revision="ea104dacec62c0de699686887e3f920caeb4f3e3",
    files=(
        HubFile(
            "onnx/model_quantized.onnx",
            "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
            34_014_426,
        ),
        HubFile(
            "tokenizer.json",
            "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
            711_396,
        ),
    ),
    model_file="onnx/model_quantized.onnx",
    tokenizer_file="tokenizer.json",
    encoder=OnnxModelSpec(
        name="bge-small-en-v1.5-q8",
        dim=384,
        max_tokens=512,
        pooling="cls",
        max_chars=1500,
        min_score=0.7,
        unrelated=0.6,
        query_prefix="Represent this sentence for searching relevant passages: ",
    ),
)

HUB_MODELS: dict[str, HubModelSpec] = {spec.key: spec for spec in (GRANITE_SMALL, BGE_SMALL)}
