"""Hybrid retrieval: both pools, cosine similarity from either side, RRF, filters before fusion."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ragdown.engine import Engine
from ragdown.errors import FilterError
from ragdown.indexing.embedders.base import Embedder
from ragdown.search.filters import SearchFilters, where_clause
from ragdown.search.hybrid import Hit, pool_size
from ragdown.search.policy import SearchPolicy
from tests.conftest import WriteDoc

CORPUS = {
    "ops/cache.md": "---\ntags: [ops/cache]\n---\n# Cache\n## Redis eviction\n"
    "When Redis runs out of memory it evicts keys according to maxmemory-policy; use allkeys-lru.",
    "ops/backups.md": "---\ntags: [ops, databases/postgres]\n---\n# Backups\n## Restore\n"
    "Run pg_restore into a fresh database and compare row counts.",
    "notes/cooking.md": "# Pancakes\nMix flour, eggs and milk; fry in a hot pan.",
    "it's/quoted.md": "# Quoted\nA folder name with a quote in it.",
    "agent/summary.md": "---\ncreated_by: claude-code\n---\n# Summary\n"
    "Redis memory summary written by an agent.",
    "ops/old-cache.md": "# Old cache\nRedis eviction notes from 2019, replaced.",
    "ops/new-cache.md": "---\nsupersedes: old-cache.md\n---\n# New cache\nCurrent redis eviction notes.",
    "projects/infra.md": "---\ntags: [infra]\n---\n# Infra\nTerraform modules for the redis cluster.",
    "projects/alpha.md": "---\ntags: [project/alpha]\n---\n# Alpha\nAlpha project redis usage.",
}


@pytest.fixture
def engine(make_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    for path, text in CORPUS.items():
        write(path, text)
    built = make_engine()
    built.sync()
    return built


def paths(hits: list[Hit]) -> set[str]:
    return {h.path for h in hits}


def test_similarity_is_the_query_chunk_dot_product_from_both_retrievers(engine: Engine) -> None:
    query = "redis eviction"
    vector = engine.embedder.embed_query(query)
    hits = engine.search(query, 10)
    sources = {s for h in hits for s in h.sources}
    assert sources == {"dense", "lexical"}
    stored = {r["id"]: np.asarray(r["vector"]) for r in engine.store.table.search().limit(None).to_list()}
    for hit in hits:
        assert hit.similarity == pytest.approx(float(np.dot(vector, stored[hit.id])), abs=1e-5)


def test_pool_is_four_times_the_limit_and_at_least_sixty() -> None:
    assert [pool_size(n) for n in (1, 5, 15, 16, 25)] == [60, 60, 60, 64, 100]


def test_hits_carry_every_field(engine: Engine) -> None:
    hit = next(h for h in engine.search("pg_restore fresh database", 5) if h.path == "ops/backups.md")
    assert (hit.title, hit.heading) == ("Backups", "Backups › Restore")
    assert hit.text == "Run pg_restore into a fresh database and compare row counts."
    assert (hit.line_start, hit.line_end) == (6, 6)
    assert hit.tags == ["databases/postgres", "ops"]
    assert hit.created_by == ""
    assert hit.mtime_ms > 0
    assert hit.id.startswith("ops/backups.md#0@")


def test_path_prefix_filters_both_pools_and_is_safe_with_a_quote(engine: Engine) -> None:
    assert paths(engine.search("redis", 10, SearchFilters(path_prefix="ops/"))) <= {
        "ops/cache.md",
        "ops/backups.md",
        "ops/new-cache.md",
    }
    assert paths(engine.search("folder quote", 10, SearchFilters(path_prefix="it's/"))) == {"it's/quoted.md"}


def test_tags_match_themselves_and_nested_tags_only(engine: Engine) -> None:
    assert paths(engine.search("redis", 10, SearchFilters(tag="project"))) == {"projects/alpha.md"}
    assert paths(engine.search("redis", 10, SearchFilters(tag="#Ops"))) == {"ops/cache.md", "ops/backups.md"}
    assert engine.search("redis", 10, SearchFilters(tag="infr")) == []
    assert paths(engine.search("redis", 10, SearchFilters(tag="infra"))) == {"projects/infra.md"}


def test_an_invalid_tag_is_refused_with_a_reason() -> None:
    with pytest.raises(FilterError, match="not a valid tag"):
        where_clause(SearchFilters(tag="a b"))


def test_written_by_filters(engine: Engine) -> None:
    assert paths(engine.search("redis memory", 10, SearchFilters(written_by="agent"))) == {"agent/summary.md"}
    assert "agent/summary.md" not in paths(
        engine.search("redis memory", 10, SearchFilters(written_by="user"))
    )


def test_superseded_documents_are_hidden_before_fusion(engine: Engine) -> None:
    found = paths(engine.search("redis eviction notes", 20))
    assert "ops/new-cache.md" in found
    assert "ops/old-cache.md" not in found
    assert engine.store.superseded_paths() == frozenset({"ops/old-cache.md"})


def test_a_query_without_letters_or_digits_uses_dense_only(engine: Engine) -> None:
    hits = engine.search("?!", 5, policy=SearchPolicy(abstain=False))
    assert hits
    assert all(h.sources == ["dense"] for h in hits)


def test_a_query_the_fts_parser_rejects_still_answers(engine: Engine) -> None:
    hits = engine.search('redis "unbalanced AND (', 5)
    assert hits


def test_a_chunk_is_found_lexically_by_its_breadcrumb_only(
    make_engine: Callable[..., Engine], write: WriteDoc
) -> None:
    write("guide.md", "# Zanzibar handbook\n## Setup\nRun the installer and follow the prompts.")
    write("other.md", "# Other\nNothing to see here at all.")
    engine = make_engine()
    engine.sync()
    hits = engine.search("zanzibar", 5)
    assert hits[0].path == "guide.md"
    assert "lexical" in hits[0].sources


def test_aliases_are_searchable_on_the_first_chunk_only(
    make_engine: Callable[..., Engine], write: WriteDoc
) -> None:
    write("pg.md", "---\naliases: [quokkabase]\n---\n# Postgres\nfirst\n## Later\nsecond")
    engine = make_engine()
    engine.sync()
    lexical = [h for h in engine.search("quokkabase", 5) if "lexical" in h.sources]
    assert [(h.path, h.heading) for h in lexical] == [("pg.md", "Postgres")]


@pytest.mark.slow  # builds and runs the real MiniLM
def test_minilm_ranks_the_right_section_first(
    make_engine: Callable[..., Engine], write: WriteDoc, minilm: Embedder, docs: Path
) -> None:
    for path in ("ops/cache.md", "ops/backups.md", "notes/cooking.md"):
        write(path, CORPUS[path])
    engine = make_engine(minilm, "minilm")
    engine.sync()
    hits = engine.search("redis eviction", 3)
    assert hits[0].path == "ops/cache.md"
    assert hits[0].sources == ["dense", "lexical"]
    assert hits[0].similarity > 0.3
    assert hits[0].similarity > max(h.similarity for h in hits[1:])
