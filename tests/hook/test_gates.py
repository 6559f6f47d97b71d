"""The hook's gates and bypasses (docs/hook.md#gates steps 5–8) on hand-made candidates."""

from __future__ import annotations

from ragdown.hook.gates import Gated, apply_bypasses, similarity_gates, take_top
from ragdown.search.hybrid import Hit


def hit(
    chunk_id: str, similarity: float, path: str = "", text: str = "", aliases: list[str] | None = None
) -> Hit:
    return Hit(
        id=chunk_id,
        path=path or f"{chunk_id}.md",
        title=chunk_id,
        heading="",
        text=text or f"text of {chunk_id}",
        line_start=1,
        line_end=2,
        score=0.0,
        similarity=similarity,
        sources=["dense"],
        aliases=aliases or [],
    )


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


def test_min_score_and_seen_drop_and_the_rest_sorts_by_similarity() -> None:
    candidates = [hit("a", 0.5), hit("b", 0.9), hit("c", 0.1), hit("d", 0.7)]
    gated = similarity_gates(candidates, frozenset({"d"}), min_score=0.3, min_ratio=0)
    assert ids(gated.hits) == ["b", "a"]
    assert gated.dropped == {"c": "min_score", "d": "seen"}


def test_the_ratio_gate_keeps_hits_near_the_best_and_the_best_always() -> None:
    candidates = [hit("a", 0.80), hit("b", 0.77), hit("c", 0.75)]
    gated = similarity_gates(candidates, frozenset(), min_score=0, min_ratio=0.95)
    assert ids(gated.hits) == ["a", "b"]  # 0.75 < 0.80 × 0.95 = 0.76
    assert gated.dropped == {"c": "ratio"}
    assert ids(similarity_gates(candidates, frozenset(), 0, 1.0).hits) == ["a"]
    assert ids(similarity_gates(candidates, frozenset(), 0, 0.0).hits) == ["a", "b", "c"]


def test_the_ratio_is_taken_against_the_best_unseen_hit() -> None:
    candidates = [hit("seen", 0.95), hit("a", 0.6), hit("b", 0.58)]
    gated = similarity_gates(candidates, frozenset({"seen"}), min_score=0, min_ratio=0.95)
    assert ids(gated.hits) == ["a", "b"]


def test_cap_applies_to_the_cosine_sorted_list_before_top_k() -> None:
    gated = Gated(
        [hit("a1", 0.9, "a.md"), hit("a2", 0.8, "a.md"), hit("b1", 0.7, "b.md"), hit("c1", 0.6, "c.md")]
    )
    top = take_top(gated, top_k=2, max_per_document=1)
    assert ids(top.hits) == ["a1", "b1"]
    assert top.dropped == {"c1": "top_k", "a2": "top_k"}
    assert ids(take_top(Gated(list(gated.hits)), top_k=3, max_per_document=0).hits) == ["a1", "a2", "b1"]


def test_a_quoted_command_bypasses_every_gate_and_goes_first() -> None:
    weak = hit("cmd", 0.05, text="Run `veltra build kestrel` before the deploy.")
    candidates = [hit("x", 0.9), weak, hit("y", 0.8)]
    gated = take_top(similarity_gates(candidates, frozenset(), 0.5, 0), top_k=2, max_per_document=0)
    assert gated.dropped["cmd"] == "min_score"
    final = apply_bypasses(
        "how do I run `veltra build kestrel` safely?", candidates, frozenset(), gated, top_k=2
    )
    assert ids(final.hits) == ["cmd", "x"]
    assert final.dropped == {"y": "top_k"}  # made room; cmd is no longer counted as dropped


def test_the_quoted_name_must_match_whole_and_unseen() -> None:
    candidates = [
        hit("partial", 0.1, text="pg_restored copies it"),
        hit("whole", 0.1, text="use PG_RESTORE now"),
    ]
    gated = Gated([])
    final = apply_bypasses('what does "pg_restore" do', candidates, frozenset(), gated, top_k=4)
    assert ids(final.hits) == ["whole"]
    assert (
        apply_bypasses('what does "pg_restore" do', candidates, frozenset({"whole"}), Gated([]), 4).hits == []
    )


def test_a_plain_backticked_word_or_an_unquoted_name_does_not_bypass() -> None:
    candidates = [hit("ts", 0.1, text="the typescript compiler and pg_restore")]
    assert (
        apply_bypasses("is the `typescript` compiler slow", candidates, frozenset(), Gated([]), 4).hits == []
    )
    assert apply_bypasses("what does pg_restore do exactly", candidates, frozenset(), Gated([]), 4).hits == []


def test_an_alias_bypass_follows_the_quoted_one_and_both_fit_within_top_k() -> None:
    candidates = [
        hit("g1", 0.9),
        hit("k1", 0.1, path="kafka.md", aliases=["Streams"]),
        hit("k2", 0.1, path="kafka.md", aliases=["Streams"]),
        hit("q", 0.1, text="see `rm -rf /tmp/x` first"),
    ]
    gated = Gated([hit("g1", 0.9)])
    final = apply_bypasses(
        "before `rm -rf /tmp/x`, check streams retention", candidates, frozenset(), gated, 2
    )
    assert ids(final.hits) == ["q", "k1"]
    assert final.dropped == {"g1": "top_k"}


def test_a_two_letter_alias_never_bypasses() -> None:
    candidates = [hit("dr", 0.1, aliases=["DR"])]
    assert apply_bypasses("what is our DR plan for prod", candidates, frozenset(), Gated([]), 4).hits == []


def test_one_chunk_satisfying_both_bypasses_appears_once() -> None:
    both = hit("both", 0.1, text="run `veltra build x`", aliases=["Kestrel"])
    final = apply_bypasses("kestrel: `veltra build x`?", [both], frozenset(), Gated([]), 4)
    assert ids(final.hits) == ["both"]


def test_top_k_zero_returns_nothing_even_with_a_bypass() -> None:
    candidates = [hit("q", 0.1, text="`a b`")]
    assert apply_bypasses("try `a b` now please", candidates, frozenset(), Gated([]), 0).hits == []
