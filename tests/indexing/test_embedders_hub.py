"""Hub models: pinned download into RAGDOWN_MODELS, verification, offline errors, CLS and prefixes.

A real HTTP server on 127.0.0.1 stands in for the hub, serving a tiny real ONNX encoder and a tiny
`tokenizers` tokenizer. The real specs are reused with their files swapped for these (a spec is
data), so the cache layout, pooling, prefixes and names under test are the shipped ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from ragdown.bounds import HUB_EMBEDDERS
from ragdown.errors import EmbedderError
from ragdown.indexing.embedders import create_embedder
from ragdown.indexing.embedders.hub import (
    HubFile,
    HubModelSpec,
    default_hub_url,
    load_hub_model,
    model_dir,
)
from ragdown.indexing.embedders.hub_models import BGE_SMALL, GRANITE_SMALL, HUB_MODELS
from ragdown.indexing.embedders.model_files import default_models_dir

DIM = 8
WORDS = [
    "represent",
    "this",
    "sentence",
    "for",
    "searching",
    "relevant",
    "passages",
    ":",
    "how",
    "do",
    "i",
    "restart",
    "the",
    "server",
    "backup",
    "runbook",
    "deploy",
    "weather",
    "in",
    "paris",
]
MODEL = "onnx/model_quantized.onnx"
DATA = "onnx/model_quantized.onnx_data"
TOKENIZER = "tokenizer.json"


# --- a tiny real encoder and tokenizer ---------------------------------------------------------


def build_tokenizer(path: Path) -> None:
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    tokenizer.save(str(path))


def unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    out: npt.NDArray[np.float32] = (vector / np.linalg.norm(vector)).astype(np.float32)
    return out


class TinyEncoder:
    """last_hidden_state[b, s] = token[ids[b, s]] + sum over unmasked t of context[ids[b, t]].

    The context term makes the [CLS] position depend on the whole text, as in a real encoder.
    """

    def __init__(self, vocab_size: int, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.token = rng.standard_normal((vocab_size, DIM)).astype(np.float32)
        self.context = rng.standard_normal((vocab_size, DIM)).astype(np.float32)

    def save(self, path: Path, external_data: str | None) -> None:
        nodes = [
            helper.make_node("Gather", ["token_table", "input_ids"], ["tok"]),
            helper.make_node("Gather", ["context_table", "input_ids"], ["ctx_tok"]),
            helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask3"]),
            helper.make_node("Mul", ["ctx_tok", "mask3"], ["ctx_masked"]),
            helper.make_node("ReduceSum", ["ctx_masked", "axis1"], ["ctx"], keepdims=1),
            helper.make_node("Add", ["tok", "ctx"], ["last_hidden_state"]),
        ]
        graph = helper.make_graph(
            nodes,
            "tiny-encoder",
            [
                helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
                helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
            ],
            [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", DIM])],
            initializer=[
                numpy_helper.from_array(self.token, "token_table"),
                numpy_helper.from_array(self.context, "context_table"),
                numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
                numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
            ],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        path.parent.mkdir(parents=True, exist_ok=True)
        if external_data:
            onnx.save_model(
                model,
                str(path),
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=external_data,
                size_threshold=64,  # the tables go to the data file, the axes stay inline
            )
        else:
            onnx.save_model(model, str(path))

    def cls(self, ids: list[int]) -> npt.NDArray[np.float32]:
        vector = self.token[ids[0]] + self.context[ids].sum(axis=0)
        return unit(vector)

    def mean(self, ids: list[int]) -> npt.NDArray[np.float32]:
        vector = self.token[ids].mean(axis=0) + self.context[ids].sum(axis=0)
        return unit(vector)


@dataclasses.dataclass
class TinyModel:
    files: dict[str, bytes]
    encoder: TinyEncoder
    tokenizer: Tokenizer


def build_tiny_model(root: Path, *, external_data: bool) -> TinyModel:
    root.mkdir(parents=True, exist_ok=True)
    build_tokenizer(root / TOKENIZER)
    tokenizer = Tokenizer.from_file(str(root / TOKENIZER))
    encoder = TinyEncoder(tokenizer.get_vocab_size())
    encoder.save(root / MODEL, Path(DATA).name if external_data else None)
    paths = [MODEL, DATA, TOKENIZER] if external_data else [MODEL, TOKENIZER]
    return TinyModel({p: (root / p).read_bytes() for p in paths}, encoder, tokenizer)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pinned(spec: HubModelSpec, files: dict[str, bytes]) -> HubModelSpec:
    """The shipped spec with its files pinned to the tiny model's, and the tiny dimension."""
    return dataclasses.replace(
        spec,
        files=tuple(HubFile(path, sha256(data), len(data)) for path, data in files.items()),
        encoder=dataclasses.replace(spec.encoder, dim=DIM),
    )


# --- a local hub ---------------------------------------------------------------------------------


class Hub:
    """Serves `/{repo}/resolve/{revision}/{path}` by redirecting to `/cdn/...`, as the real hub does."""

    def __init__(self, spec: HubModelSpec, files: dict[str, bytes]) -> None:
        self.prefix = f"/{spec.repo}/resolve/{spec.revision}/"
        self.files = dict(files)
        self.requests: list[str] = []
        self.corrupt: set[str] = set()
        self.truncate: set[str] = set()
        self.oversize: set[str] = set()
        self.status: dict[str, int] = {}
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hub.requests.append(self.path)
                if self.path.startswith(hub.prefix):
                    name = self.path[len(hub.prefix) :]
                    if name in hub.status:
                        self.send_error(hub.status[name])
                        return
                    self.send_response(302)
                    self.send_header("Location", f"/cdn/{name}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                name = self.path.removeprefix("/cdn/")
                if not self.path.startswith("/cdn/") or name not in hub.files:
                    self.send_error(404)
                    return
                body = hub.files[name]
                if name in hub.corrupt:
                    body = bytes([body[0] ^ 0xFF]) + body[1:]
                if name in hub.oversize:
                    body += b"trailing junk"
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if name in hub.truncate:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port_url() -> str:
    """A URL nothing listens on: bind an ephemeral port, then release it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.fixture
def granite_like(tmp_path: Path) -> Iterator[tuple[HubModelSpec, TinyModel, Hub]]:
    """granite-small's spec (graph + external data + tokenizer) over the tiny model."""
    tiny = build_tiny_model(tmp_path / "src-granite", external_data=True)
    spec = pinned(GRANITE_SMALL, tiny.files)
    hub = Hub(spec, tiny.files)
    yield spec, tiny, hub
    hub.close()


@pytest.fixture
def bge_like(tmp_path: Path) -> Iterator[tuple[HubModelSpec, TinyModel, Hub]]:
    """bge-small's spec (single graph + tokenizer, query prefix) over the tiny model."""
    tiny = build_tiny_model(tmp_path / "src-bge", external_data=False)
    spec = pinned(BGE_SMALL, tiny.files)
    hub = Hub(spec, tiny.files)
    yield spec, tiny, hub
    hub.close()


# --- download, cache, verification ---------------------------------------------------------------


def test_download_lands_in_models_dir_under_repo_and_revision(
    tmp_path: Path, granite_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, tiny, hub = granite_like
    models = tmp_path / "models"
    embedder = load_hub_model(spec, models, hub.url, threads=1)
    try:
        root = models / "onnx-community" / "granite-embedding-small-english-r2-ONNX" / GRANITE_SMALL.revision
        assert model_dir(models, spec) == root
        # Exactly the pinned files, at their repo paths, with their bytes: no temporary file left over.
        assert all_files(models) == sorted(root / p for p in tiny.files)
        for path, data in tiny.files.items():
            assert (root / path).read_bytes() == data
        # Every file was fetched through the resolve URL (and its redirect), once.
        assert sorted(r for r in hub.requests if "/resolve/" in r) == sorted(
            hub.prefix + p for p in tiny.files
        )
        # The graph found its external-data file beside it, and runs.
        assert embedder.name == "granite-embedding-small-english-r2-q8"
        assert embedder.dim == DIM
        assert embedder.model_sha256 == sha256(tiny.files[DATA])
        assert (embedder.min_score, embedder.unrelated, embedder.max_chars) == (0.8, 0.75, 1500)
        vectors = embedder.embed(["how do i restart the server", "backup runbook"], "document")
        assert vectors.shape == (2, DIM)
        assert vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
        # No prefixes for granite: a query embeds like a document.
        np.testing.assert_allclose(embedder.embed_query("backup runbook"), vectors[1], rtol=1e-5)
    finally:
        embedder.close()


def test_second_load_reverifies_the_cache_and_never_asks_the_hub(
    tmp_path: Path, granite_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, _, hub = granite_like
    models = tmp_path / "models"
    first = load_hub_model(spec, models, hub.url, threads=1).embed(["deploy the server"], "document")
    asked = len(hub.requests)
    assert asked > 0
    again = load_hub_model(spec, models, hub.url, threads=1).embed(["deploy the server"], "document")
    assert len(hub.requests) == asked
    np.testing.assert_array_equal(first, again)
    # Nor is a hub needed at all once the files are cached.
    offline = load_hub_model(spec, models, closed_port_url(), threads=1)
    np.testing.assert_array_equal(offline.embed(["deploy the server"], "document"), first)


def test_corrupted_download_is_refused_and_nothing_is_cached(
    tmp_path: Path, bge_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, tiny, hub = bge_like
    hub.corrupt.add(MODEL)
    models = tmp_path / "models"
    with pytest.raises(EmbedderError) as caught:
        load_hub_model(spec, models, hub.url, threads=1)
    bad = bytes([tiny.files[MODEL][0] ^ 0xFF]) + tiny.files[MODEL][1:]
    message = str(caught.value)
    assert "does not match its pinned SHA-256" in message
    assert f"expected {sha256(tiny.files[MODEL])}" in message
    assert f"found {sha256(bad)}" in message
    assert MODEL in message
    # Neither the bad file nor a temporary one is left (the model is fetched first, so: nothing).
    assert all_files(models) == []


def test_interrupted_download_leaves_no_partial_file(
    tmp_path: Path, granite_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, _, hub = granite_like
    hub.truncate.add(DATA)
    models = tmp_path / "models"
    with pytest.raises(EmbedderError, match="could not download the granite-small model"):
        load_hub_model(spec, models, hub.url, threads=1)
    files = all_files(models)
    assert not any(p.name.endswith(".part") or "onnx_data" in p.name for p in files), files
    # Once the hub behaves, the same cache completes.
    hub.truncate.clear()
    load_hub_model(spec, models, hub.url, threads=1).close()
    assert (model_dir(models, spec) / DATA).is_file()


def test_download_larger_than_pinned_is_cut_off(
    tmp_path: Path, bge_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, _, hub = bge_like
    hub.oversize.add(TOKENIZER)
    models = tmp_path / "models"
    with pytest.raises(EmbedderError, match="larger than its pinned size"):
        load_hub_model(spec, models, hub.url, threads=1)
    assert not (model_dir(models, spec) / TOKENIZER).exists()
    assert not any(p.name.endswith(".part") for p in all_files(models))


def test_cached_file_that_changed_is_refused_and_deleted(
    tmp_path: Path, bge_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, tiny, hub = bge_like
    models = tmp_path / "models"
    load_hub_model(spec, models, hub.url, threads=1).close()
    cached = model_dir(models, spec) / MODEL
    cached.write_bytes(cached.read_bytes() + b"tampered")
    tampered = sha256(cached.read_bytes())
    with pytest.raises(EmbedderError) as caught:
        load_hub_model(spec, models, hub.url, threads=1)
    message = str(caught.value)
    assert f"the cached bge-small model file {cached}" in message
    assert f"expected {sha256(tiny.files[MODEL])}, found {tampered}" in message
    assert "deleted" in message
    assert not cached.exists()
    # The next start downloads it again.
    asked = len(hub.requests)
    load_hub_model(spec, models, hub.url, threads=1).close()
    assert cached.read_bytes() == tiny.files[MODEL]
    assert len(hub.requests) > asked


def test_unreachable_hub_says_where_to_place_the_files(
    tmp_path: Path, granite_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, tiny, _ = granite_like
    models = tmp_path / "models"
    url = closed_port_url()
    with pytest.raises(EmbedderError) as caught:
        load_hub_model(spec, models, url, threads=1)
    message = str(caught.value)
    assert "could not download the granite-small model" in message
    assert url in message
    assert "RAGDOWN_MODELS" in message
    assert str(model_dir(models, spec).absolute()) in message
    for path, data in tiny.files.items():
        assert f"{path} (sha256 {sha256(data)}, {len(data)} bytes)" in message
    assert "RAGDOWN_HUB_URL" in message
    assert not any(p.name.endswith(".part") for p in all_files(models))


def test_hub_error_status_is_reported(tmp_path: Path, bge_like: tuple[HubModelSpec, TinyModel, Hub]) -> None:
    spec, _, hub = bge_like
    hub.status[MODEL] = 404
    with pytest.raises(EmbedderError, match=r"answered 404 .*RAGDOWN_MODELS"):
        load_hub_model(spec, tmp_path / "models", hub.url, threads=1)


def test_models_dir_and_hub_url_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bge_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, _, hub = bge_like
    monkeypatch.setenv("RAGDOWN_MODELS", str(tmp_path / "env-models"))
    monkeypatch.setenv("RAGDOWN_HUB_URL", hub.url + "/")
    assert default_hub_url() == hub.url + "/"
    load_hub_model(spec, threads=1).close()
    assert (model_dir(tmp_path / "env-models", spec) / MODEL).is_file()

    monkeypatch.delenv("RAGDOWN_MODELS")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_models_dir() == tmp_path / "xdg" / "ragdown" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_models_dir() == tmp_path / "home" / ".cache" / "ragdown" / "models"
    monkeypatch.delenv("RAGDOWN_HUB_URL")
    assert default_hub_url() == "https://huggingface.co"


# --- pooling and prefixes ------------------------------------------------------------------------


def test_cls_pooling_and_the_bge_query_prefix(
    tmp_path: Path, bge_like: tuple[HubModelSpec, TinyModel, Hub]
) -> None:
    spec, tiny, hub = bge_like
    embedder = load_hub_model(spec, tmp_path / "models", hub.url, threads=1)
    assert embedder.name == "bge-small-en-v1.5-q8"
    assert (embedder.min_score, embedder.unrelated, embedder.max_chars) == (0.7, 0.6, 1500)
    prefix = "Represent this sentence for searching relevant passages: "
    assert spec.encoder.query_prefix == prefix
    text = "how do i restart the server"
    document = embedder.embed([text], "document")[0]
    query = embedder.embed([text], "query")[0]
    for vector in (document, query):
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    # Documents carry no prefix, queries carry the instruction, and the vector is the [CLS] one.
    plain_ids = tiny.tokenizer.encode(text).ids
    prefixed_ids = tiny.tokenizer.encode(prefix + text).ids
    np.testing.assert_allclose(document, tiny.encoder.cls(plain_ids), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(query, tiny.encoder.cls(prefixed_ids), rtol=1e-5, atol=1e-6)
    assert float(document @ query) < 0.999
    assert not np.allclose(document, tiny.encoder.mean(plain_ids), atol=1e-3)
    # Batches of different lengths are padded and masked: each row equals its own embedding.
    batch = embedder.embed(["deploy", text, "backup runbook deploy weather in paris"], "document")
    np.testing.assert_allclose(batch[1], document, rtol=1e-5, atol=1e-6)
    embedder.close()


# --- the shipped specs and the registry ----------------------------------------------------------


def test_shipped_specs_are_pinned_completely() -> None:
    assert set(HUB_MODELS) == {"granite-small", "bge-small"}
    assert tuple(HUB_MODELS) == HUB_EMBEDDERS  # the names a setting may give (bounds.py) are the pinned ones
    for key, spec in HUB_MODELS.items():
        assert spec.key == key
        assert len(spec.revision) == 40
        assert all(len(f.sha256) == 64 and f.size > 0 for f in spec.files)
        assert spec.encoder.dim == 384
        assert spec.encoder.pooling == "cls"
        assert spec.encoder.max_chars == 1500
        assert spec.encoder.min_score > spec.encoder.unrelated
        assert spec.encoder.document_prefix == ""
    assert GRANITE_SMALL.encoder.name == "granite-embedding-small-english-r2-q8"
    assert GRANITE_SMALL.encoder.query_prefix == ""
    assert {f.path for f in GRANITE_SMALL.files} == {MODEL, DATA, TOKENIZER}
    assert BGE_SMALL.encoder.name == "bge-small-en-v1.5-q8"
    assert BGE_SMALL.encoder.query_prefix == "Represent this sentence for searching relevant passages: "


def test_a_spec_refuses_branch_revisions_and_escaping_paths() -> None:
    with pytest.raises(ValueError, match="40-hex commit"):
        dataclasses.replace(BGE_SMALL, revision="main")
    with pytest.raises(ValueError, match="plain relative path"):
        HubFile("../outside", "0" * 64, 1)
    with pytest.raises(ValueError, match="not among the pinned files"):
        dataclasses.replace(BGE_SMALL, model_file="onnx/model.onnx")


def test_registry_loads_hub_models_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("RAGDOWN_HUB_URL", closed_port_url())
    for name, spec in HUB_MODELS.items():
        with pytest.raises(EmbedderError) as caught:
            create_embedder(name, threads=1)
        assert f"could not download the {name} model" in str(caught.value)
        assert str(model_dir(tmp_path / "models", spec).absolute()) in str(caught.value)
    with pytest.raises(EmbedderError) as unknown:
        create_embedder("nope")
    assert str(unknown.value) == (
        'RAGDOWN_EMBEDDER must be minilm, granite-small, bge-small, hash or openai:<model>, got "nope"'
    )


def test_an_images_bundled_copy_is_used_verified_and_never_written(
    tmp_path: Path, granite_like: tuple[HubModelSpec, TinyModel, Hub], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pod downloads into a writable RAGDOWN_MODELS, but what its image bakes in
    (RAGDOWN_MODELS_BUNDLED) is found first and needs no hub at all."""
    spec, _, hub = granite_like
    baked = tmp_path / "baked"
    first = load_hub_model(spec, baked, hub.url, threads=1).embed(["deploy the server"], "document")
    writable = tmp_path / "writable"
    monkeypatch.setenv("RAGDOWN_MODELS_BUNDLED", f"{tmp_path / 'missing'}{os.pathsep}{baked}")
    offline = load_hub_model(spec, writable, closed_port_url(), threads=1)
    np.testing.assert_array_equal(offline.embed(["deploy the server"], "document"), first)
    assert not writable.exists()
    # A bundled copy is verified like any other: a changed one is refused, never loaded, and left
    # where it is (it belongs to the image).
    weights = next(p for p in baked.rglob("*.onnx"))
    weights.write_bytes(weights.read_bytes() + b"tampered")
    with pytest.raises(EmbedderError, match=r"bundled granite-small model file .*; rebuild the image"):
        load_hub_model(spec, writable, closed_port_url(), threads=1)
    assert weights.exists()
