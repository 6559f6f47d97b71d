"""The composed pipeline on real LanceDB: routing, alias boost, cap and follow-links change the order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ragdown.engine import Engine
from ragdown.search.filters import SearchFilters
from ragdown.search.policy import SearchPolicy
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc

DOCS = {
    "notes/kafka.md": "---\naliases: [Event bus]\n---\n# Kafka\n## Retention\n"
    "Topics keep messages for seven days.\n## Partitions\nTwelve partitions per topic.\n"
    "## Consumers\nConsumer groups commit offsets.",
    "notes/bus-schedule.md": "# Bus schedule\n## Event days\n"
    "The event bus leaves at nine; on event days the bus runs every ten minutes. Event bus tickets.",
    "ops/pg.md": "# Postgres\n## Restore\nRun pg_restore --clean against a fresh database. "
    "See [[Event bus]] and [[missing note]] and [[pg]].\n## Vacuum\nNightly vacuum.",
    "ops/misc.md": "# Misc\n## Restore notes\n"
    "Restore restore restore a fresh database database from the restore notes.",
    "ops/old.md": "# Old\nRestore a fresh database the old way.",
    "ops/new.md": "---\nsupersedes: old.md\n---\n# New\nRestore a fresh database. See [[old]].",
}
PLAIN = SearchPolicy(route_identifiers=False, alias_boost=False)


@pytest.fixture
def engine(make_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    for path, text in DOCS.items():
        write(path, text)
    built = make_engine(settings=ServerSettings(abstain=False))
    built.sync()
    return built


def order(engine: Engine, query: str, limit: int = 4, **policy: Any) -> list[tuple[str, str, list[str]]]:
    hits = engine.search(query, limit, policy=SearchPolicy(**policy))
    return [(h.path, h.heading, h.sources) for h in hits]


def test_the_alias_boost_puts_the_aliased_document_first(engine: Engine) -> None:
    query = "how long does the event bus keep messages"
    assert engine.search(query, 4, policy=PLAIN)[0].path == "notes/bus-schedule.md"
    boosted = engine.search(query, 4)
    assert boosted[0].path == "notes/kafka.md"
    assert boosted[0].heading == "Kafka › Retention"


def test_an_identifier_query_is_routed_to_score_fusion(engine: Engine) -> None:
    query = "restore a fresh database with pg_restore"
    assert engine.search(query, 4, policy=PLAIN)[0].path != "ops/pg.md"
    outcome = engine.search_outcome(query, 4)
    assert outcome.routed
    assert outcome.hits[0].path == "ops/pg.md"
    assert not engine.search_outcome("restore a fresh database", 4).routed


def test_a_routed_query_gets_no_alias_boost(engine: Engine) -> None:
    query = "event bus retention for topic_a"
    routed = engine.search(query, 8)
    unrouted = engine.search(query, 8, policy=SearchPolicy(route_identifiers=False))
    assert any(h.path == "notes/kafka.md" for h in routed)
    assert max(h.score for h in routed) <= 1.0  # score fusion's scale, no 1/61 added on top
    assert unrouted[0].path == "notes/kafka.md"


def test_the_cap_moves_a_documents_extra_sections_after_the_others(engine: Engine) -> None:
    query = "kafka topics partitions consumers retention"
    uncapped = order(engine, query, 6)
    assert [p for p, _, _ in uncapped[:3]] == ["notes/kafka.md"] * 3
    capped = order(engine, query, 6, max_per_document=1)
    assert len(capped) == 6
    assert capped[0] == uncapped[0]
    paths = [p for p, _, _ in capped]
    assert len(set(paths[:4])) == 4  # one section of each document first, other documents filling in
    kafka = [hit for hit in capped if hit[0] == "notes/kafka.md"]
    assert kafka == uncapped[: len(kafka)]  # the overflow keeps its original order


def test_follow_links_inserts_the_linked_sections_after_the_hit(engine: Engine) -> None:
    query = "restore a fresh database with pg_restore"
    plain = order(engine, query, 3)
    followed = order(engine, query, 3, follow_links=1)
    assert plain[0][0] == followed[0][0] == "ops/pg.md"
    assert "notes/kafka.md" not in [p for p, _, _ in plain]
    # [[Event bus]] resolves by alias; two sections per linked document, right after the hit,
    # and the list is cut back to the limit.
    assert followed[1:] == [
        ("notes/kafka.md", "Kafka › Consumers", ["link"]),
        ("notes/kafka.md", "Kafka › Retention", ["link"]),
    ]
    hits = engine.search(query, 3, policy=SearchPolicy(follow_links=1))
    assert hits[1].score == hits[2].score == hits[0].score
    assert hits[1].similarity >= hits[2].similarity  # nearest to the query first


def test_follow_links_skips_own_missing_superseded_and_filtered_documents(engine: Engine) -> None:
    followed = engine.search("restore a fresh database the new way", 6, policy=SearchPolicy(follow_links=6))
    assert all(h.path != "ops/old.md" for h in followed)
    scoped = engine.search(
        "restore a fresh database with pg_restore",
        6,
        SearchFilters(path_prefix="ops/"),
        policy=SearchPolicy(follow_links=6),
    )
    assert all(h.path.startswith("ops/") for h in scoped)
    assert not any(h.sources == ["link"] for h in scoped)


def test_only_the_first_m_hits_are_followed(engine: Engine) -> None:
    query = "restore a fresh database"
    first = engine.search(query, 6, policy=SearchPolicy(follow_links=1))
    assert first[0].path != "ops/pg.md"
    assert not any(h.sources == ["link"] for h in first)


def test_abstention_refuses_a_query_of_unknown_words_without_a_strong_match(
    make_engine: Callable[..., Engine], write: WriteDoc
) -> None:
    for path, text in DOCS.items():
        write(path, text)
    engine = make_engine()
    engine.sync()
    outcome = engine.search_outcome("zxqv wobblefrump glorp", 5)
    assert outcome.abstained
    assert outcome.hits == []
    assert engine.search("zxqv wobblefrump glorp", 5, policy=SearchPolicy(abstain=False))
    assert engine.search("nightly vacuum", 5)[0].path == "ops/pg.md"


def test_score_evidence_reorders_by_raw_scores_and_zero_restores_the_spec(engine: Engine) -> None:
    query = "restore a fresh database"
    plain = engine.search(query, 6, policy=SearchPolicy(score_evidence=0))
    assert plain == engine.search(query, 6)  # the hash embedder measured none: plain RRF
    heavy = engine.search(query, 6, policy=SearchPolicy(score_evidence=1.0))
    assert [h.score for h in heavy] == sorted((h.score for h in heavy), reverse=True)
    assert max(h.score for h in heavy) > max(h.score for h in plain) + 0.1  # the evidence is on top of RRF
    routed = engine.search_outcome("restore with pg_restore", 4, policy=SearchPolicy(score_evidence=0.04))
    assert routed.routed
    assert routed.hits[0].path == "ops/pg.md"
    assert routed.hits[0].score < 0.2  # RRF scale, not the 0-1 scale of min–max score fusion


def test_a_long_section_comes_back_once_and_the_next_sections_fill_its_slots(
    make_engine: Callable[..., Engine], write: WriteDoc
) -> None:
    # Three paragraphs of ~1,000 characters: the hash embedder's 1,500-character chunks hold one each.
    paragraph = "Restore the nightly dump into a fresh database and check the row counts. " * 14
    body = "\n\n".join([paragraph] * 3)
    write("ops/long.md", f"# Long\n## Restore\n{body}\n## Other\nUnrelated words.")
    for name in ("a", "b", "c"):
        write(f"ops/{name}.md", f"# {name.upper()}\n## Restore\nRestore the nightly dump, said {name}.")
    engine = make_engine()
    engine.sync()
    engine.syncer.compaction.drain()  # BM25 from the full-text index scores unindexed rows apart
    query = "restore the nightly dump into a fresh database"
    every = engine.search(query, 4, policy=SearchPolicy(one_per_section=False))
    assert [(h.path, h.heading) for h in every[:3]] == [("ops/long.md", "Long › Restore")] * 3
    once = engine.search(query, 4)
    assert once[0] == every[0]
    assert len({(h.path, h.heading) for h in once}) == 4
    assert {h.path for h in once[1:]} == {"ops/a.md", "ops/b.md", "ops/c.md"}
    merged = engine.search(query, 4, policy=SearchPolicy(merge_sections=True))
    assert merged[0].text == "\n\n".join(h.text for h in sorted(every[:3], key=lambda h: h.line_start))
    assert (merged[0].line_start, merged[0].line_end) == (3, 7)
    assert merged[1:] == once[1:]
