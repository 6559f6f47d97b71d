"""Vectors reused by the text they embed (ragdown.indexing.vector_cache, docs/design.md#embedding-cache):
a move of 100 files, a full rebuild and an edit re-embed only what changed, counted in the report,
and never across models. Real LanceDB, the hash embedder."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from ragdown.engine import Engine
from ragdown.indexing.embedders.hashing import HashEmbedder


def note(number: int) -> str:
    steps = f"## Steps\n\nRestart service {number} and check its logs.\n\n"
    return f"# Runbook {number}\n\n{steps}## Owner\n\nTeam {number}.\n"


def vectors_by_text(engine: Engine) -> dict[str, list[float]]:
    rows = engine.store.chunks(["text", "vector"], "")
    return dict(zip(rows.column("text").to_pylist(), rows.column("vector").to_pylist(), strict=True))


def test_a_move_of_100_files_re_embeds_nothing(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "old").mkdir(parents=True)
    for number in range(100):
        (docs / "old" / f"runbook-{number}.md").write_text(note(number), encoding="utf-8")
    engine = Engine(docs, tmp_path / "data", HashEmbedder(), source="hash", watch=False)
    try:
        first = engine.sync()
        assert (first.added, first.reused) == (100, 0)
        before = vectors_by_text(engine)
        shutil.move(docs / "old", docs / "new")
        moved = engine.sync()
        assert (moved.added, moved.removed) == (100, 100)
        assert moved.chunks == first.chunks
        assert moved.reused == moved.chunks  # every vector came from the index, none from the model
        assert vectors_by_text(engine) == before
        assert set(engine.store.files()) == {f"new/runbook-{n}.md" for n in range(100)}
    finally:
        engine.close()


def test_an_edit_re_embeds_only_the_sections_it_changed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(note(1), encoding="utf-8")
    engine = Engine(docs, tmp_path / "data", HashEmbedder(), source="hash", watch=False)
    try:
        engine.sync()
        (docs / "a.md").write_text(note(1).replace("Team 1.", "Team 2 now."), encoding="utf-8")
        edited = engine.sync()
        assert edited.updated == 1
        assert edited.chunks >= 2  # one section changed, the others did not
        assert edited.reused == edited.chunks - 1
    finally:
        engine.close()


def test_a_full_rebuild_with_the_same_model_reuses_every_vector(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(5):
        (docs / f"n{number}.md").write_text(note(number), encoding="utf-8")
    engine = Engine(docs, tmp_path / "data", HashEmbedder(), source="hash", watch=False)
    try:
        first = engine.sync()
        rebuilt = engine.sync(full=True)
        assert rebuilt.added == 5
        assert rebuilt.reused == rebuilt.chunks == first.chunks
    finally:
        engine.close()


def test_vectors_are_never_reused_across_models(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(note(1), encoding="utf-8")
    engine = Engine(docs, tmp_path / "data", HashEmbedder(), source="hash", watch=False)
    try:
        engine.sync()
        other = HashEmbedder(dim=64)
        engine.index.embedder, engine.index.source = other, "hash"
        engine.syncer.store = engine.index.rebuild_beside()
        engine.syncer.embedder = other
        switched = engine.sync()
        assert switched.reused == 0
        assert {len(v) for v in vectors_by_text(engine).values()} == {64}
        assert np.isfinite(np.array(list(vectors_by_text(engine).values()))).all()
    finally:
        engine.close()


def test_a_text_repeated_across_new_files_is_embedded_once(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    footer = "## License\n\nApache-2.0, see the LICENSE file at the top of the repository.\n"
    for number in range(30):
        (docs / f"page-{number}.md").write_text(f"# Page\n\n{footer}", encoding="utf-8")
    engine = Engine(docs, tmp_path / "data", HashEmbedder(), source="hash", watch=False)
    try:
        report = engine.sync()
        distinct = len(set(vectors_by_text(engine)))
        assert (report.chunks, distinct) == (30, 1)  # a small page is one chunk: one text in all
        assert report.reused == 29
    finally:
        engine.close()
