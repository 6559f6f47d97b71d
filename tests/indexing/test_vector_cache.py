"""Vectors reused by the text they embed (ragdown.indexing.vector_cache, docs/design.md#embedding-cache):
a move of 100 files, a full rebuild and an edit re-embed only what changed, counted in the report,
and never across models. Real LanceDB, the hash embedder."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from ragdown.engine import Engine
from ragdown.indexing.embedders.hashing import HashEmbedder

OpenEngine = Callable[[dict[str, str]], Engine]


def note(number: int) -> str:
    steps = f"## Steps\n\nRestart service {number} and check its logs.\n\n"
    return f"# Runbook {number}\n\n{steps}## Owner\n\nTeam {number}.\n"


@pytest.fixture
def open_engine(tmp_path: Path) -> Iterator[OpenEngine]:
    """An engine over a docs folder holding `files` (path: text), closed after the test."""
    opened: list[Engine] = []

    def make(files: dict[str, str]) -> Engine:
        docs = tmp_path / "docs"
        for name, text in files.items():
            (docs / name).parent.mkdir(parents=True, exist_ok=True)
            (docs / name).write_text(text, encoding="utf-8")
        opened.append(Engine(docs, tmp_path / "data", HashEmbedder(), source="hash", watch=False))
        return opened[-1]

    yield make
    for engine in opened:
        engine.close()


def vectors_by_text(engine: Engine) -> dict[str, list[float]]:
    rows = engine.store.chunks(["text", "vector"], "")
    return dict(zip(rows.column("text").to_pylist(), rows.column("vector").to_pylist(), strict=True))


def test_a_move_of_100_files_re_embeds_nothing(open_engine: OpenEngine) -> None:
    engine = open_engine({f"old/runbook-{n}.md": note(n) for n in range(100)})
    first = engine.sync()
    assert (first.added, first.reused) == (100, 0)
    before = vectors_by_text(engine)
    shutil.move(engine.docs_dir / "old", engine.docs_dir / "new")
    moved = engine.sync()
    assert (moved.added, moved.removed) == (100, 100)
    assert moved.chunks == first.chunks
    assert moved.reused == moved.chunks  # every vector came from the index, none from the model
    assert vectors_by_text(engine) == before
    assert set(engine.store.files()) == {f"new/runbook-{n}.md" for n in range(100)}


def test_an_edit_re_embeds_only_the_sections_it_changed(open_engine: OpenEngine) -> None:
    engine = open_engine({"a.md": note(1)})
    engine.sync()
    (engine.docs_dir / "a.md").write_text(note(1).replace("Team 1.", "Team 2 now."), encoding="utf-8")
    edited = engine.sync()
    assert edited.updated == 1
    assert edited.chunks >= 2  # one section changed, the others did not
    assert edited.reused == edited.chunks - 1


def test_a_full_rebuild_with_the_same_model_reuses_every_vector(open_engine: OpenEngine) -> None:
    engine = open_engine({f"n{n}.md": note(n) for n in range(5)})
    first = engine.sync()
    rebuilt = engine.sync(full=True)
    assert rebuilt.added == 5
    assert rebuilt.reused == rebuilt.chunks == first.chunks


def test_vectors_are_never_reused_across_models(open_engine: OpenEngine) -> None:
    engine = open_engine({"a.md": note(1)})
    engine.sync()
    other = HashEmbedder(dim=64)  # what Engine.switch_embedder does, with a model it cannot name
    engine.index.embedder, engine.index.source = other, "hash"
    engine.syncer.store = engine.index.rebuild_beside()
    engine.syncer.embedder = other
    switched = engine.sync()
    assert switched.reused == 0
    vectors = np.array(list(vectors_by_text(engine).values()))
    assert vectors.shape[1] == 64
    assert np.isfinite(vectors).all()


def test_a_text_repeated_across_new_files_is_embedded_once(open_engine: OpenEngine) -> None:
    footer = "## License\n\nApache-2.0, see the LICENSE file at the top of the repository.\n"
    engine = open_engine({f"page-{n}.md": f"# Page\n\n{footer}" for n in range(30)})
    report = engine.sync()
    distinct = len(set(vectors_by_text(engine)))
    assert (report.chunks, distinct) == (30, 1)  # a small page is one chunk: one text in all
    assert report.reused == 29
