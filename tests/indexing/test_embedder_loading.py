"""The embedder loaded on a thread of its own while a one-shot search imports the rest
(docs/design.md#start-up): the same embedder, its session made there, and its errors raised where
the embedder is wanted."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ragdown.engine.snapshot_engine import SnapshotEngine
from ragdown.errors import EmbedderError
from ragdown.indexing import embedder_loading
from ragdown.indexing.embedders import onnx_model
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.embedders.minilm import MINILM
from ragdown.indexing.embedders.onnx_model import OnnxEmbedder
from ragdown.settings import ServerSettings


class LoadedOn(HashEmbedder):
    """A hash embedder that says which thread loaded it."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded_on: list[str] = []

    def load(self) -> None:
        self.loaded_on.append(threading.current_thread().name)


def test_the_embedder_loads_on_a_thread_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    made: list[tuple[str | None, int | None]] = []

    def create(name: str | None = None, *, threads: int | None = None) -> LoadedOn:
        made.append((name, threads))
        return LoadedOn()

    monkeypatch.setattr(embedder_loading, "create_embedder", create)
    embedder, name = embedder_loading.load_beside(tmp_path, "hash", ServerSettings(threads=1)).result(30)
    assert isinstance(embedder, LoadedOn)
    assert (name, made) == ("hash", [("hash", 1)])
    assert embedder.loaded_on == ["ragdown-embedder"]  # its session made there, not by the caller


def test_an_embedder_that_cannot_load_is_refused_where_it_is_wanted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def create(name: str | None = None, *, threads: int | None = None) -> HashEmbedder:
        raise EmbedderError("the model is not there")

    monkeypatch.setattr(embedder_loading, "create_embedder", create)
    loading = embedder_loading.load_beside(tmp_path, "hash", ServerSettings())
    with pytest.raises(EmbedderError, match="the model is not there"):
        loading.result(30)
    docs = tmp_path / "docs"
    docs.mkdir()
    with pytest.raises(EmbedderError, match="the model is not there"):
        SnapshotEngine.open(docs, tmp_path / "data", loading, "", ServerSettings())


def test_loading_an_onnx_embedder_makes_its_session_and_tokenizer_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sessions: list[int] = []
    tokenizers: list[Path] = []

    class Session:
        def get_inputs(self) -> list[object]:
            return []

    def session(self: OnnxEmbedder, threads: int) -> Session:
        sessions.append(threads)
        return Session()

    made = object()

    def tokenizer(path: Path, max_tokens: int) -> object:
        tokenizers.append(path)
        return made

    monkeypatch.setattr(OnnxEmbedder, "_session", session)
    monkeypatch.setattr(onnx_model, "load_tokenizer", tokenizer)
    embedder = OnnxEmbedder(MINILM, Path("model.onnx"), Path("tokenizer.json"), threads=2)
    assert (sessions, tokenizers) == ([], [])  # nothing until asked
    embedder.load()
    embedder.load()
    assert (sessions, tokenizers) == ([2], [Path("tokenizer.json")])
    assert embedder.tokenizer is made
