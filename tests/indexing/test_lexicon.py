"""BM25 from memory scores every row as LanceDB's full-text index does (docs/search.md#bm25-from-memory):
the same analysis (split, length limit, lower case, stemming, stop words, folding) and the same
Okapi BM25, checked against real LanceDB queries on the same table."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from ragdown.engine import Engine
from ragdown.indexing.lexicon import ANALYZER, MAX_TOKEN_BYTES, STOP_WORDS, Lexicon
from ragdown.indexing.store import ChunkStore
from ragdown.search.filters import Prefilter, SearchFilters
from ragdown.search.hybrid import HIT_COLUMNS, start_lexical
from tests.conftest import WriteDoc, synced_engine

LONG = "x" * (MAX_TOKEN_BYTES - 1)
DOCS = {
    "run.md": "# Running\nThe runner runs; it ran. Running jobs run nightly, and having run, they stop.",
    "english.md": "# Plain words\nDoes it work? I don't think so: isn't it the cache's job, or ours?\n\n"
    "Mostly owned by others, underlying offs and alls: wheres the yourselves.",
    "code.md": "# Code\n`snake_case_name`, camelCaseName, foo.bar(), HTTP_404, v3.14 and 2026-12-01.\n\n"
    "snake snake snake case",
    "accents.md": "# Café\nA naïve café on the Straße in Ærø; Œuvre, façade, jalapeño, Łódź, þorn, Ðe.",
    "scripts.md": "# Scripts\n日本語のテキスト, Ελληνικά γράμματα, русский текст,\n\n"
    "ﬁne ligature, x² and ①, ＦＵＬＬ.",
    "long.md": f"# Long\n{LONG} {LONG}z words past forty bytes are dropped, {'y' * 60} too.",
    "repeat.md": "# Cache\ncache cache cache eviction policy for the cache layer",
    "empty-ish.md": "# The\nto be or not to be",
}
WORDS = sorted({w for text in DOCS.values() for w in text.replace("`", " ").split()})


@pytest.fixture
def engine(make_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    return synced_engine(make_engine, write, DOCS)


def lexicon_of(store: ChunkStore) -> tuple[Lexicon, list[str]]:
    snapshot = store.vector_snapshot(HIT_COLUMNS)
    assert snapshot is not None
    building = store.start_lexicon()
    assert building is not None
    lexicon = building.result()
    assert lexicon is not None
    return lexicon, snapshot.columns.column("id").to_pylist()


def both(store: ChunkStore, query: str) -> tuple[dict[str, float], dict[str, float]]:
    """Every matching row and its score: LanceDB's, and ours."""
    lexicon, ids = lexicon_of(store)
    table = store.lexical(query, 1000, None, ["id"], with_vectors=False)
    lance = dict(zip(table.column("id").to_pylist(), table.column("_score").to_pylist(), strict=True))
    positions, scores = lexicon.top(query, 1000)
    return lance, {ids[p]: s for p, s in zip(positions.tolist(), scores.tolist(), strict=True)}


def test_every_word_matches_the_same_rows_with_the_same_score(engine: Engine) -> None:
    matched = 0
    for word in WORDS:
        lance, ours = both(engine.store, word)
        assert ours.keys() == lance.keys(), word
        for row, score in lance.items():
            assert ours[row] == pytest.approx(score, rel=1e-5), (word, row)
        matched += bool(lance)
    assert matched > len(WORDS) // 2  # not a comparison of empty answers


@pytest.mark.parametrize(
    "query",
    [
        "cache eviction",
        "cache cache policy",  # a repeated query word counts twice, in both
        "snake case name",
        "running jobs nightly for the cache",
        "cafe naive strasse aero oeuvre",
        "what does it do",
        "HTTP 404 v3 14",
    ],
)
def test_queries_of_several_words_score_alike(engine: Engine, query: str) -> None:
    lance, ours = both(engine.store, query)
    assert lance
    assert ours.keys() == lance.keys()
    for row, score in lance.items():
        assert ours[row] == pytest.approx(score, rel=1e-5)


def test_stop_words_are_dropped_after_stemming(engine: Engine) -> None:
    """A stop word finds nothing in either, and so does a word whose stem is one ("having" → "have");
    a stop word whose stem is not one ("does" → "doe") is kept, by both."""
    dropped = 0
    for word in [*sorted(STOP_WORDS), "having", "mostly", "owned", "others"]:
        lance, ours = both(engine.store, word)
        assert ours.keys() == lance.keys(), word
        dropped += not lance
    assert dropped > len(STOP_WORDS) - 10
    assert ANALYZER.terms("having mostly Does yourselves") == ["doe", "yourselv"]
    for word in ("does", "yourselves"):
        lance, ours = both(engine.store, word)
        assert lance
        assert ours.keys() == lance.keys()


def test_long_tokens_and_folding() -> None:
    assert ANALYZER.terms(f"{LONG} {LONG}z") == [LONG]
    # Stemmed, then folded.
    assert ANALYZER.terms("Straße Ærø naïve ÉCOLE") == ["strasse", "aero", "naiv", "ecole"]
    assert ANALYZER.terms("русский Ελληνικά") == ["русский", "ελληνικά"]  # other scripts kept


def test_the_in_memory_pool_is_used_once_built_and_matches_lancedb(engine: Engine) -> None:
    lexicon_of(engine.store)
    for filters in (SearchFilters(), SearchFilters(path_prefix="code"), SearchFilters(within=("run.md",))):
        prefilter = Prefilter(filters, engine.store.superseded_paths())
        pool = start_lexical(engine.store, "snake cache running", 50, prefilter)
        assert pool is not None
        assert pool.found is not None
        assert pool.rows is None
        positions, scores = pool.found
        snapshot = engine.store.vector_snapshot(HIT_COLUMNS)
        assert snapshot is not None
        ids = snapshot.columns.column("id").to_pylist()
        table = engine.store.lexical("snake cache running", 50, prefilter.sql(), ["id"], with_vectors=False)
        lance = dict(zip(table.column("id").to_pylist(), table.column("_score").to_pylist(), strict=True))
        assert {ids[p] for p in positions.tolist()} == set(lance)
        assert sorted(scores) == pytest.approx(sorted(lance.values()), rel=1e-5)


def test_ties_are_broken_by_row_and_the_limit_keeps_the_best() -> None:
    lexicon = Lexicon.build(["alpha beta", "alpha", "beta gamma", "alpha", "gamma"])
    positions, scores = lexicon.top("alpha", 2)
    assert positions.tolist() == [1, 3]  # the two short rows tie; the longer one scores less
    assert scores[0] == scores[1] > 0
    keep = np.array([True, False, True, True, True])
    assert lexicon.top("alpha", 5, keep)[0].tolist() == [3, 0]
    assert lexicon.top("delta", 5)[0].size == 0
    assert Lexicon.build([]).top("alpha", 5)[0].size == 0


def test_the_second_search_of_a_snapshot_starts_the_build(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-shot command (one search) never pays for the postings; a server's second search does
    (when no search snapshot on disk brings them: docs/design.md#search-snapshot)."""
    monkeypatch.setattr(ChunkStore, "_persisted", lambda self, version: None)
    engine.store._cache.forget()
    engine.search("snake case", 3)
    snapshot = engine.store.vector_snapshot(HIT_COLUMNS)
    assert snapshot is not None
    assert snapshot.lexicon._future is None
    engine.search("cache eviction", 3)
    assert snapshot.lexicon._future is not None
    assert snapshot.lexicon._future.result() is not None
    assert snapshot.lexicon._texts is None  # the texts are let go


def test_warm_up_starts_the_build(engine: Engine) -> None:
    engine.warm()
    snapshot = engine.store.vector_snapshot(HIT_COLUMNS)
    assert snapshot is not None
    future = snapshot.lexicon._future  # one search, and the build is under way all the same
    assert future is not None
    assert future.result() is not None
    assert snapshot.lexicon.ready() is future.result()


def test_a_write_gives_the_next_snapshot_new_postings(engine: Engine, write: WriteDoc) -> None:
    before, _ = lexicon_of(engine.store)
    write("fresh.md", "# Fresh\nquokka sightings")
    engine.sync()
    after, ids = lexicon_of(engine.store)
    assert after is not before
    assert before.scores("quokka") is None
    positions, _ = after.top("quokka", 5)
    assert [ids[p] for p in positions.tolist()]
    assert all(ids[p].startswith("fresh.md") for p in positions)


def test_after_edits_and_deletions_both_still_agree(engine: Engine, write: WriteDoc) -> None:
    """LanceDB's statistics after a sync (rows deleted and added, the index brought up to date) are
    still those of the live rows, as ours are."""
    write("repeat.md", "# Cache\ncache eviction, rewritten with more words about the cache layer")
    write("extra.md", "# Extra\nrunning the cache")
    (engine.docs_dir / "long.md").unlink()
    engine.sync()
    engine.syncer.compaction.drain()  # as once writes pause (docs/design.md#compaction)
    for query in ("cache eviction", "running", "snake case", "layer words"):
        lance, ours = both(engine.store, query)
        assert lance, query
        assert ours.keys() == lance.keys(), query
        for row, score in lance.items():
            assert ours[row] == pytest.approx(score, rel=1e-5), (query, row)
