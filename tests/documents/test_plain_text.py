"""Markdown as plain text for search snippets (docs/web.md#search): the words a reader sees, the
syntax gone, code kept as written, and work linear in the input (docs/documents.md#bounded-parsing)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdown.documents.plain import plain_text
from tests.documents.test_linear_parsing import SHAPES, calls_and_chars, document


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("## Redis **eviction** policy ##", "Redis eviction policy"),
        ("# Setup {#setup .wide}", "Setup"),
        ("> quoted *text* > here", "quoted text > here"),
        (
            "- [x] done, see [the docs](https://example.com/a_(b)) and ![a diagram](img/a.png)",
            "done, see the docs and a diagram",
        ),
        ("1. first ~~old~~ item", "first old item"),
        (
            "See [[backups|the backups]], [[Vacuum#Nightly]] and ![[plan.png]]",
            "See the backups, Vacuum#Nightly and plan.png",
        ),
        ("[text][ref] and [ref]", "text and [ref]"),
        (
            "`a **b** [c](d)` stays as code, snake_case and 2*3 too",
            "a **b** [c](d) stays as code, snake_case and 2*3 too",
        ),
        (r"an \*escaped\* star and a \[bracket]", "an *escaped* star and a [bracket]"),
        (
            "<https://example.com/x> and a <b>tag</b> and a < b > c",
            "https://example.com/x and a <b>tag</b> and a < b > c",
        ),
        ("| a | **b** |\n|---|:-:|\n| 1 | 2 |", "a · b\n1 · 2"),
        ("Intro\n\n---\n\n[ref]: https://example.com\n\nEnd\n===", "Intro\nEnd"),
        ("```python\nx = **1**  # [not](a link)\n```\nafter", "x = **1**  # [not](a link)\nafter"),
        ("#tag and a lone # and ***bold italic***", "#tag and a lone # and bold italic"),
        ("[unclosed and [a](b", "[unclosed and [a](b"),
    ],
)
def test_markdown_becomes_the_text_a_reader_sees(markdown: str, plain: str) -> None:
    assert plain_text(markdown) == plain


@pytest.mark.parametrize(
    "shape",
    [*SHAPES, "<< repeated", "[[ repeated", "emphasis runs"],
)
def test_four_times_the_input_is_about_four_times_the_work(shape: str) -> None:
    extra = {
        "<< repeated": lambda n: "<a" * (n // 2) + "://>",
        "[[ repeated": lambda n: "[[a|" * (n // 4) + "]]",
        "emphasis runs": lambda n: "*_~a" * (n // 4),
    }
    make = extra.get(shape) or SHAPES[shape]
    small, large = make(1_000), make(4_000)
    if shape in SHAPES:
        small, large = document(shape, 1_000), document(shape, 4_000)
    once = calls_and_chars(lambda: plain_text(small))
    four_times = calls_and_chars(lambda: plain_text(large))
    assert four_times <= 4.5 * once, f"{four_times / once:.1f}x the work at 4x the input"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="[]()<>!|#*_~`\\:/ ax\n-", max_size=200))
def test_any_text_gives_text_without_error(markdown: str) -> None:
    plain = plain_text(markdown)
    assert isinstance(plain, str)
    assert len(plain) <= len(markdown) + markdown.count("|") * 2
