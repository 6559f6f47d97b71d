"""Heading evidence (docs/search.md#heading-evidence): the arithmetic on candidates built by hand."""

from __future__ import annotations

import pytest

from ragdown.search.fusion import Candidate
from ragdown.search.headings import boost_headings, heading_share, own_heading
from ragdown.search.policy import HEADING_BOOST


def cand(chunk_id: str, title: str, heading: str, score: float) -> Candidate:
    return Candidate({"id": chunk_id, "path": f"{title}.md", "title": title, "heading": heading}, 0.5, score)


@pytest.mark.parametrize(
    ("title", "heading", "own"),
    [
        ("Osprey", "Osprey › Deployment › Production", "Deployment › Production"),
        ("Osprey", "Osprey", ""),  # the text under the title heading: nothing of its own
        ("Osprey", "", ""),
        ("Notes", "Setup › Keys", "Setup › Keys"),  # no H1: the heading path is all its own
    ],
)
def test_own_heading_is_the_heading_path_below_the_title(title: str, heading: str, own: str) -> None:
    assert own_heading(title, heading) == own


def test_the_share_counts_distinct_analysed_terms_and_needs_two() -> None:
    # "who approves production deploys of osprey" analyses to {approv, product, deploy, osprey}
    # ("who", "of" are stop words); "Deployment › Production" holds deploy and product.
    terms = {"approv", "product", "deploy", "osprey"}
    assert heading_share(terms, "Osprey", "Osprey › Deployment › Production") == 2 / 4
    assert heading_share(terms, "Osprey", "Osprey › Deployment › Staging") == 0.0  # one term only
    assert heading_share(terms, "Osprey", "Osprey › Deployment › Staging", min_terms=1) == 1 / 4
    assert heading_share(terms, "Osprey", "Osprey") == 0.0  # the title never counts
    assert heading_share(set(), "Osprey", "Osprey › Deployment › Production") == 0.0


def test_the_boost_adds_weight_times_share_and_reorders_the_sections() -> None:
    staging = cand("s", "Osprey", "Osprey › Deployment › Staging", 0.040)
    production = cand("p", "Osprey", "Osprey › Deployment › Production", 0.035)
    overview = cand("o", "Osprey", "Osprey › Overview", 0.030)
    ranked = boost_headings([staging, production, overview], "Who approves production deploys of Osprey?")
    assert [c.id for c in ranked] == ["p", "s", "o"]
    assert production.score == pytest.approx(0.035 + HEADING_BOOST * 2 / 4)
    assert (staging.score, overview.score) == (0.040, 0.030)


def test_weight_zero_or_a_query_without_terms_leaves_the_list_as_it_was() -> None:
    first = cand("a", "T", "T › Zeta", 0.2)
    second = cand("b", "T", "T › Alpha beta", 0.1)
    listed = [first, second]
    assert boost_headings(listed, "alpha beta", 0.0) is listed
    assert boost_headings(listed, "the of and", 1.0) is listed
    assert second.score == 0.1
    assert [c.id for c in boost_headings(listed, "alpha beta", 1.0)] == ["b", "a"]
    assert second.score == pytest.approx(1.1)
