"""One filter, two forms: the SQL pre-filter LanceDB runs and the mask over in-memory rows agree,
and the in-memory dense pool ranks exactly as LanceDB's flat scan does."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from ragdown.engine import Engine
from ragdown.indexing import store as store_module
from ragdown.indexing.lexicon import LexiconBuild
from ragdown.search.filters import Prefilter, SearchFilters
from ragdown.search.fusion import Retrieved
from ragdown.search.hybrid import HIT_COLUMNS, _lexical_ranking, retrieve
from tests.conftest import WriteDoc, synced_engine

DOCS = {
    "ops/cache.md": "---\ntags: [ops/cache, infra]\n---\n# Cache\nRedis eviction and memory.",
    "ops/backups.md": "---\ntags: [ops]\n---\n# Backups\nRestore redis snapshots and postgres dumps.",
    "it's/quoted.md": "---\ntags: [infra/net]\n---\n# Quoted\nRedis behind a quote.",
    "agent/summary.md": "---\ncreated_by: claude-code\ntags: [infr]\n---\n# Summary\nRedis summary.",
    "ops/old.md": "# Old\nRedis notes, replaced.",
    "ops/new.md": "---\nsupersedes: old.md\n---\n# New\nRedis notes.",
    "projects/alpha/plan.md": "# Plan\nRedis for alpha.",
    "projects/alpha-old/plan.md": "# Old plan\nRedis for the old alpha.",
}

FILTERS = [
    SearchFilters(),
    SearchFilters(path_prefix="ops/"),
    SearchFilters(path_prefix="it's/"),
    SearchFilters(path_prefix="projects/alpha/"),
    SearchFilters(tag="infra"),
    SearchFilters(tag="infr"),
    SearchFilters(tag="ops"),
    SearchFilters(written_by="agent"),
    SearchFilters(written_by="user", tag="ops"),
    SearchFilters(within=("ops/", "agent/")),
    SearchFilters(within=()),
    SearchFilters(path_prefix="ops/", within=("projects/",)),
]


@pytest.fixture
def engine(make_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    return synced_engine(make_engine, write, DOCS)


@pytest.mark.parametrize("filters", FILTERS)
def test_the_sql_clause_and_the_mask_select_the_same_rows(engine: Engine, filters: SearchFilters) -> None:
    prefilter = Prefilter(filters, engine.store.superseded_paths())
    every = engine.store.chunks(["id", "path", "tags", "created_by"], "true")
    by_mask = set(np.asarray(every.column("id").to_pylist())[prefilter.mask(every)])
    where = prefilter.sql()
    by_sql = set(engine.store.chunks(["id"], where or "true").column("id").to_pylist())
    assert by_mask == by_sql


@pytest.mark.parametrize("filters", FILTERS)
def test_the_in_memory_dense_pool_matches_lancedb(engine: Engine, filters: SearchFilters) -> None:
    prefilter = Prefilter(filters, engine.store.superseded_paths())
    vector = engine.embedder.embed_query("redis memory eviction")
    for pool in (3, 50):
        memory = retrieve(engine.store, "", vector, pool, prefilter)["dense"]
        lance = retrieve(engine.store, "", vector, pool, prefilter.sql())["dense"]
        # The same cosines in the same order (rows with equal cosines may swap places).
        assert [e.similarity for e in memory] == pytest.approx([e.similarity for e in lance], abs=1e-5)
        assert all(set(e.row) == set(HIT_COLUMNS) for e in memory)
    assert {e.row["id"] for e in memory} == {e.row["id"] for e in lance}  # pool 50: every row that passes


@pytest.mark.parametrize("filters", FILTERS)
@pytest.mark.parametrize("postings", [False, True])
def test_the_lexical_pool_read_against_memory_matches_lancedbs_rows(
    engine: Engine, filters: SearchFilters, postings: bool
) -> None:
    """With a snapshot, BM25 comes from its postings once they are built (docs/search.md#bm25-from-memory),
    before that as ids and scores from LanceDB, and the rows and vectors from memory; without one,
    LanceDB returns them all. The same entries every way."""
    snapshot = engine.store.vector_snapshot(HIT_COLUMNS)
    assert snapshot is not None
    building = engine.store.start_lexicon()
    assert building is not None
    building.result()
    if not postings:
        object.__setattr__(snapshot, "lexicon", LexiconBuild(None))  # as before the build
    prefilter = Prefilter(filters, engine.store.superseded_paths())
    query = "redis notes for alpha"
    vector = engine.embedder.embed_query(query)
    memory = retrieve(engine.store, query, vector, 50, prefilter)["lexical"]
    lance = retrieve(engine.store, query, vector, 50, prefilter.sql())["lexical"]

    def entries(pool: list[Retrieved]) -> list[tuple[float, str]]:
        return sorted((-round(e.raw, 4), e.row["id"]) for e in pool)  # rows with equal scores may swap

    assert entries(memory) == entries(lance)
    by_id = {e.row["id"]: e for e in lance}
    for entry in memory:
        assert entry.row == by_id[entry.row["id"]].row
        assert entry.similarity == pytest.approx(by_id[entry.row["id"]].similarity, abs=1e-6)
    if filters == SearchFilters():
        assert len(memory) >= 5  # the comparison is not vacuous


def test_a_lexical_hit_missing_from_the_snapshot_is_left_out(engine: Engine, write: WriteDoc) -> None:
    """A row written after the snapshot was taken (a race with a write) is dropped, never mismatched."""
    snapshot = engine.store.vector_snapshot(HIT_COLUMNS)
    assert snapshot is not None
    write("ops/late.md", "# Late\nRedis notes written late.")
    engine.sync()
    query = "redis late notes"
    vector = engine.embedder.embed_query(query)
    table = engine.store.lexical(query, 50, None, ["id"], with_vectors=False)
    ids = table.column("id").to_pylist()
    late = [i for i in ids if i not in snapshot.positions]
    assert late  # the new file's chunk is in the BM25 answer...
    ranked = _lexical_ranking(table, vector, snapshot)
    assert [e.row["id"] for e in ranked] == [i for i in ids if i in snapshot.positions]  # ...not in ours


def test_a_write_refreshes_the_snapshot(engine: Engine, write: WriteDoc) -> None:
    before = engine.store.vector_snapshot(HIT_COLUMNS)
    assert before is not None
    assert engine.store.vector_snapshot(HIT_COLUMNS) is before  # cached
    write("ops/new-one.md", "# Fresh\nA brand new redis page.")
    engine.sync()
    after = engine.store.vector_snapshot(HIT_COLUMNS)
    assert after is not before
    assert after is not None
    assert "ops/new-one.md" in after.columns.column("path").to_pylist()
    assert any(h.path == "ops/new-one.md" for h in engine.search("brand new redis page", 3))


def test_large_tables_are_searched_by_lancedb(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "VECTOR_INDEX_MIN_ROWS", 3)
    engine.store._cache.forget()  # the next search looks at the table's size again
    assert engine.store.vector_snapshot(HIT_COLUMNS) is None
    assert engine.search("redis eviction", 3)[0].path == "ops/cache.md"


def test_a_second_store_on_the_same_data_sees_the_first_ones_commits(engine: Engine, write: WriteDoc) -> None:
    """What a reader process relies on: its caches follow the table's version, not its own writes."""
    from ragdown.indexing.store import ChunkStore

    reader = ChunkStore(engine.store.data_dir, engine.store.meta, writable=False)
    reader.refresh()
    before = reader.vector_snapshot(HIT_COLUMNS)
    assert before is not None
    write("ops/brand-new.md", "# New\nA page the reader has not seen.")
    write("ops/newer.md", "---\nsupersedes: brand-new.md\n---\n# Newer\nReplaces it.")
    engine.sync()
    reader.refresh()
    after = reader.vector_snapshot(HIT_COLUMNS)
    assert after is not None
    assert "ops/newer.md" in after.columns.column("path").to_pylist()
    assert "ops/brand-new.md" in reader.superseded_paths()
