"""Alias matching and boost (docs/search.md#alias-boost) and the per-document cap
(docs/search.md#per-document-cap)."""

from __future__ import annotations

import pytest

from ragdown.search.aliases import ALIAS_BOOST, boost_aliases, contains_whole, named_alias
from ragdown.search.caps import cap_per_document
from ragdown.search.fusion import Retrieved, rrf


@pytest.mark.parametrize(
    ("text", "phrase", "expected"),
    [
        ("how do we do DR here", "DR", True),
        ("how do we do dr here", "DR", True),
        ("address the drift", "DR", False),
        ("the Alpha plan, revised", "alpha plan", True),
        ("the alpha planning doc", "alpha plan", False),
        ("pg_restore steps", "pg", True),  # `_` is neither a letter nor a digit
        ("c++ tips", "c++", True),
    ],
)
def test_contains_whole(text: str, phrase: str, expected: bool) -> None:
    assert contains_whole(text, phrase) is expected


def test_aliases_shorter_than_three_characters_never_count() -> None:
    assert named_alias("how do we do DR here", ["DR"]) is None
    assert named_alias("the kafka streams setup", ["ks", "Streams"]) == "Streams"


def chunk(chunk_id: str, path: str, aliases: str = "") -> dict[str, object]:
    return {"id": chunk_id, "path": path, "aliases": aliases}


def test_boost_lifts_every_chunk_of_the_named_document_by_one_rank_one_share() -> None:
    dense = [
        Retrieved(chunk("a1", "a.md"), 0.9, 0.9),
        Retrieved(chunk("b1", "b.md"), 0.8, 0.8),
        Retrieved(chunk("k1", "kafka.md", "Streams\nK"), 0.7, 0.7),
        Retrieved(chunk("k2", "kafka.md", "Streams\nK"), 0.6, 0.6),
    ]
    fused = rrf({"dense": dense})
    before = {c.id: c.score for c in fused}
    boosted = boost_aliases(fused, "how is retention set up in streams?")
    assert [c.id for c in boosted] == ["k1", "k2", "a1", "b1"]
    assert {c.id: c.score - before[c.id] for c in boosted} == pytest.approx(
        {"k1": ALIAS_BOOST, "k2": ALIAS_BOOST, "a1": 0.0, "b1": 0.0}
    )


def test_no_alias_named_leaves_the_order_alone() -> None:
    fused = rrf({"dense": [Retrieved(chunk("a", "a.md", "Alpha"), 0.9, 0.9)]})
    assert boost_aliases(fused, "nothing named here") == fused


def test_cap_keeps_the_first_n_of_each_document_and_moves_the_rest_after() -> None:
    items = [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("a", 4), ("c", 1), ("b", 2), ("b", 3)]
    capped = cap_per_document(items, 2, lambda item: item[0])
    assert capped == [("a", 1), ("a", 2), ("b", 1), ("c", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 3)]


def test_cap_zero_is_no_cap_and_an_unfillable_list_fills_from_the_overflow() -> None:
    items = [("a", 1), ("a", 2), ("a", 3)]
    assert cap_per_document(items, 0, lambda item: item[0]) == items
    assert cap_per_document(items, 1, lambda item: item[0])[:3] == items
