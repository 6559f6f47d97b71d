"""A full re-index as the docs describe it (docs/tools.md#ragdown_reindex, docs/design.md#meta-and-rebuilds):
it rebuilds from every file reusing the vectors the index holds, the tool says so, and a rebuild the
user asked for is not reported as a warning; one nobody asked for warns once."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.indexing.embedders.base import Embedder
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.sync import SyncReport
from ragdown.serving import folder_tools


def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(3):
        (folder / f"note-{n}.md").write_text(f"# Note {n}\n\n## Steps\n\nRestart service {n}.\n", "utf-8")
    return folder


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def open_engine(folder: Path, data: Path, embedder: Embedder) -> Engine:
    return Engine(folder, data, embedder, source="hash", watch=False)


def indexed_once(folder: Path, data: Path) -> SyncReport:
    """The folder indexed by an engine that is then closed, as by an earlier run or release."""
    first = open_engine(folder, data, HashEmbedder())
    try:
        return first.sync()
    finally:
        first.close()


def test_a_full_reindex_reuses_every_vector_and_warns_of_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = open_engine(docs(tmp_path), tmp_path / "data", HashEmbedder())
    try:
        first = engine.sync()
        with caplog.at_level(logging.INFO, logger="ragdown"):
            rebuilt = engine.sync(full=True)
    finally:
        engine.close()
    assert rebuilt.chunks == first.chunks > 0
    assert rebuilt.reused == rebuilt.chunks  # nothing embedded again
    assert warnings(caplog) == []
    logged = [r.getMessage() for r in caplog.records]
    assert any("a full rebuild was asked for" in message for message in logged)  # at info


def test_a_rebuild_nobody_asked_for_warns_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = docs(tmp_path)
    indexed_once(folder, tmp_path / "data")
    with caplog.at_level(logging.INFO, logger="ragdown"):
        second = open_engine(folder, tmp_path / "data", HashEmbedder(dim=64))  # another model
        try:
            report = second.sync()
        finally:
            second.close()
    assert report.reused == 0  # another model never reuses a vector
    assert warnings(caplog) == [
        "rebuilding the index beside the current one: the embedder changed from hash-384 to hash-64"
    ]


def test_the_tool_says_full_reuses_vectors() -> None:
    description = folder_tools.ragdown_reindex.__doc__ or ""
    assert "re-embed everything" not in description
    assert "reusing the vectors" in description


def test_after_a_chunker_change_the_old_index_answers_and_gives_its_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release with another chunker rebuilds beside the old index: meanwhile the old one answers
    searches, and every text the new chunker cuts the same takes its old vector."""
    from ragdown.indexing import meta

    folder = docs(tmp_path)
    built = indexed_once(folder, tmp_path / "data")
    from ragdown.documents.chunks import CHUNKER_VERSION

    monkeypatch.setattr(meta, "CHUNKER_VERSION", CHUNKER_VERSION + 1)
    second = open_engine(folder, tmp_path / "data", HashEmbedder())
    try:
        assert second.store.building
        assert second.recall("restart service 1", 1)[0].path == "note-1.md"  # the old index answers
        report = second.sync()
        assert second.store.meta.chunker_version == CHUNKER_VERSION + 1
    finally:
        second.close()
    assert report.chunks == built.chunks
    assert report.reused == report.chunks


def test_a_rebuild_no_old_index_can_serve_answers_searches_with_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another table layout: the old index is not read, and a search before the first batch finds
    nothing rather than failing."""
    from ragdown.indexing import active, meta

    folder = docs(tmp_path)
    indexed_once(folder, tmp_path / "data")
    monkeypatch.setattr(meta, "INDEX_VERSION", meta.INDEX_VERSION + 1)
    monkeypatch.setattr(active, "INDEX_VERSION", meta.INDEX_VERSION)
    second = open_engine(folder, tmp_path / "data", HashEmbedder())
    try:
        assert second.store.building
        assert second.recall("restart service 1", 1) == []
        second.sync()
        assert second.recall("restart service 1", 1)[0].path == "note-1.md"
    finally:
        second.close()
