"""Every parser of document text does work linear in its input (docs/documents.md#bounded-parsing), so
one folder's pathological document cannot stall the others (docs/security.md#tenants).

Work is counted, never timed: `ragdown.documents.work` counts the characters each scan reads, and
for the web renderer (markdown-it is pure Python) the function calls are counted as well. At 4x an
input, linear work is about 4x; the quadratic regexes these replace did 16x.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdown.documents import frontmatter
from ragdown.documents.chunks import NAME_MAX
from ragdown.documents.headings import heading_range, split_attributes
from ragdown.documents.lines import inline_code_spans
from ragdown.documents.link_finder import find_links, markdown_link_urls
from ragdown.documents.links import LinkIndex, backlinks
from ragdown.documents.metadata import parse_document, read_document_meta
from ragdown.documents.tags import normalise_tag
from ragdown.documents.text_edits import _spaced, nearest_passage
from ragdown.documents.work import metered
from ragdown.web.render import Slugs, render_markdown
from tests.documents.strategies import adversarial_documents, adversarial_lines

# The three shapes of issue 26, and the other runs the old rules backtracked over.
SHAPES: dict[str, Callable[[int], str]] = {
    "heading brace then spaces": lambda n: "# x {" + " " * n + "y",
    "[a]( repeated": lambda n: "[a](" * (n // 4),
    "[ repeated": lambda n: "[" * n,
    "backticks": lambda n: "a " + "`" * n,
    "tag of slashes": lambda n: "#a" + "/" * n + "x",
    "attribute block never closed": lambda n: "## Title {: #id" + " " * n + ".cls",
    "link text never closed": lambda n: "[" + "a](b" * (n // 4),
    "title then spaces": lambda n: "---\ntitle: a" + " " * n + "b\n---",
    "list item then spaces": lambda n: "---\naliases:\n  - a" + " " * n + "b\n---",
    # One line cut into chunks at sentence ends (each next chunk repeating a sentence) or spaces.
    "one line of sentences": lambda n: "Ab cd. " * (n // 7),
    "one line of long sentences": lambda n: ("w " * 124 + ". ") * (n // 250),
    "one line of words": lambda n: "ab " * (n // 3),
    # Many lines: what grows with the number of sections, fences, links and front matter items.
    "many sections": lambda n: "## a\n\nx [[b]]\n" * (n // 14),
    "many fences": lambda n: "```\n[a](b.md)\n" * (n // 14),
    "many aliases": lambda n: "---\naliases:\n" + "  - a\n" * (n // 6) + "---",
}


def document(shape: str, size: int) -> str:
    """The shape in a document that also links to b.md, so backlinks parse it too."""
    body = SHAPES[shape](size)
    if body.startswith("---"):
        return f"{body}\n\n# Doc\n\nSee [b](b.md).\n"
    return f"# Doc\n\nSee [b](b.md).\n\n{body}\n"


PARSERS: dict[str, Callable[[str], object]] = {
    "index (chunks, front matter, tags)": lambda text: parse_document(text, "doc.md", 1000),
    "find_links": find_links,
    "backlinks": lambda text: backlinks("b.md", {"a.md": text}, LinkIndex(["a.md", "b.md"])),
    "heading range": lambda text: heading_range(text, "Doc"),
}


def chars_read(parse: Callable[[str], object], text: str) -> int:
    with metered() as meter:
        parse(text)
    return meter.chars


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("shape", SHAPES)
def test_four_times_the_input_is_about_four_times_the_work(shape: str, parser: str) -> None:
    small, large = document(shape, 5_000), document(shape, 20_000)
    once, four_times = chars_read(PARSERS[parser], small), chars_read(PARSERS[parser], large)
    assert once >= len(small), "the text was parsed without the scans counting what they read"
    assert four_times <= 4.5 * once, f"{four_times / once:.1f}x the work at 4x the input"


def calls_and_chars(parse: Callable[[], object]) -> int:
    """Function calls (Python and C) plus characters the scans read, while `parse` runs."""
    calls = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    previous = sys.getprofile()
    with metered() as meter:
        sys.setprofile(count)
        try:
            parse()
        finally:
            sys.setprofile(previous)
    return calls + meter.chars


def render(text: str) -> str:
    return render_markdown(text, folder="a", resolve=lambda _: None, attachment=lambda _: None).html


@pytest.mark.parametrize("shape", ["heading brace then spaces", "[a]( repeated", "[ repeated", "backticks"])
def test_rendering_does_linear_work(shape: str) -> None:
    small, large = document(shape, 1_000), document(shape, 4_000)
    with metered() as meter:
        render(small)
    assert meter.chars >= len(SHAPES[shape](1_000)), "the heading's attribute scan counted nothing"
    once, four_times = calls_and_chars(lambda: render(small)), calls_and_chars(lambda: render(large))
    assert four_times <= 4.5 * once, f"{four_times / once:.1f}x the work at 4x the input"


def test_the_shapes_parse_as_before() -> None:
    """Linear, and the same results: the heading keeps its brace as text, no link is made of runs
    that never close, and the one real link is still found."""
    heading = document("heading brace then spaces", 1_000)
    assert heading_range(heading, "x {" + " " * 1_000 + "y") == (5, 6)
    assert [
        h.text
        for h in render_markdown(
            heading, folder="a", resolve=lambda _: None, attachment=lambda _: None
        ).headings
    ] == [
        "Doc",
        "x { y",  # markdown-it folds the run of spaces, as before
    ]
    for shape in ("[a]( repeated", "[ repeated", "link text never closed"):
        assert [link.raw for link in find_links(document(shape, 1_000))] == ["b.md"]
    assert read_document_meta(document("list item then spaces", 100)).aliases == ["a" + " " * 100 + "b"]


# --- every parser on adversarial lines: bounded work, and the old rules' results --------------------------

# Characters read per character of input, at most, over every parser at once; generous (the parsers
# read a line a handful of times each), while a quadratic rule on a 400-piece run reads hundreds.
WORK_PER_CHAR = 60


@settings(max_examples=150, deadline=None)
@given(adversarial_documents())
def test_every_parser_reads_an_adversarial_document_a_bounded_number_of_times(text: str) -> None:
    total = sum(chars_read(parse, text) for parse in PARSERS.values())
    total += chars_read(lambda t: [split_attributes(line) for line in t.split("\n")], text)
    total += chars_read(render, text)
    # An edit's hint, asked with old_text made of the document's own words and one that is not there.
    total += chars_read(lambda t: nearest_passage(t, " ".join([*t.split()[:50], "zz"])), text)
    assert total <= WORK_PER_CHAR * len(text) + 1_000
    # Sane results: links in order, inside the text, on lines it has.
    links = find_links(text)
    assert [link.start for link in links] == sorted(link.start for link in links)
    for link in links:
        assert 0 <= link.start <= link.end <= len(text)
        assert 1 <= link.line <= text.count("\n") + 1


# The rules as regexes (the spec in docs/documents.md); fine on short lines, quadratic on long ones.
OLD_INLINE_CODE = re.compile(r"(`+)[^`]*?\1")
OLD_MARKDOWN_LINK = re.compile(r"\[[^\]\n]*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
OLD_ATTRIBUTES = re.compile(r"\{:?\s*([^{}]*)\}\s*")
OLD_ATTRIBUTE_WORD = re.compile(r"[#.][\w\-:.]+|[\w\-]+=[^\s{}]+")
OLD_TITLE = re.compile(r"^title:\s*(.+?)\s*$")
OLD_BLOCK_ITEM = re.compile(r"^\s*-\s*(.+?)\s*$")


def old_split_attributes(heading: str) -> tuple[str, list[str]]:
    start = heading.rfind("{")
    match = OLD_ATTRIBUTES.fullmatch(heading, start) if start >= 0 else None
    words = match.group(1).split() if match else []
    if not words or not all(OLD_ATTRIBUTE_WORD.fullmatch(word) for word in words):
        return heading, []
    return heading[:start].rstrip(), words


def old_normalise_tag(raw: str) -> str | None:
    tag = re.sub(r"/+$", "", re.sub(r"^#+", "", raw.strip())).lower()
    if not tag or not re.match(r"^[\w\-/]+$", tag) or all(c == "/" or c.isdigit() for c in tag):
        return None
    return tag


@settings(max_examples=400, deadline=None)
@given(adversarial_lines(max_repeat=12) | st.text(alphabet='[]()<>"` {}:#/-\ta.', max_size=40))
def test_the_scans_find_what_the_regexes_found(line: str) -> None:
    assert list(inline_code_spans(line)) == [(m.start(), m.end()) for m in OLD_INLINE_CODE.finditer(line)]
    assert list(markdown_link_urls(line)) == [
        (m.start(1), m.group(1)) for m in OLD_MARKDOWN_LINK.finditer(line)
    ]
    assert split_attributes(line) == old_split_attributes(line)
    title = OLD_TITLE.match(line)
    assert frontmatter._value(line, "title") == (title.group(1) if title else None)
    item = OLD_BLOCK_ITEM.match(line)
    assert frontmatter._block_item(line) == (item.group(1) if item else None)
    assert normalise_tag(line) == old_normalise_tag(line)


# --- an edit's nearest passage: the document times old_text's words, before ---------------------------------


def test_the_nearest_passage_search_does_work_linear_in_the_document() -> None:
    """`a a … a b` against a document of `a`s: the regex `a\\s+a\\s+…b` retried from every word and
    read hundreds of words each time (3.4 s for 20,000 words); the token pass reads each once."""
    old_text = " ".join(["a"] * 300 + ["b"])
    once = chars_read(lambda text: nearest_passage(text, old_text), "a " * 5_000)
    four_times = chars_read(lambda text: nearest_passage(text, old_text), "a " * 20_000)
    assert once >= 10_000
    assert four_times <= 4.5 * once


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="aAbB \n\tßİx", max_size=30),
    st.lists(st.text(alphabet="aAbBßİx", min_size=1, max_size=3), min_size=1, max_size=4),
)
def test_the_spaced_search_finds_what_the_regex_found(text: str, words: list[str]) -> None:
    pattern = r"\s+".join(map(re.escape, words))
    for flags, ignore_case in ((0, False), (re.IGNORECASE, True)):
        match = re.search(pattern, text, flags)
        assert _spaced(text, words, ignore_case=ignore_case) == (match.span() if match else None)


# --- what grows with the number of headings: breadcrumbs and heading ids ------------------------------------


def test_breadcrumbs_and_titles_are_bounded_whatever_the_headings() -> None:
    """A 50,000-character H1 over thousands of short sections: each chunk carries the title and the
    breadcrumb, so unbounded names cost the H1's length once per section (400 MB at 8,000)."""
    text = "# " + "h" * 50_000 + "\n" + "## a\n\nx\n" * 1_000
    chunks = parse_document(text, "doc.md", 1_000).chunks
    assert len(chunks) == 1_000
    assert all(len(chunk.title) == NAME_MAX and chunk.title.endswith("…") for chunk in chunks)
    assert all(chunk.heading == chunk.title + " › a" for chunk in chunks)
    front = "---\ntitle: " + "t" * 10_000 + "\n---\n# Short\n\nx\n"
    assert parse_document(front, "doc.md", 1_000).chunks[0].title == "t" * (NAME_MAX - 1) + "…"
    # Names up to the bound are kept whole, as before.
    assert (
        parse_document("# " + "h" * NAME_MAX + "\n\nx\n", "doc.md", 1_000).chunks[0].title == "h" * NAME_MAX
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "a-1", "a-2", "a-1-1", "b", "section", "b-1"]), max_size=12))
def test_heading_ids_follow_githubs_rule(slugs: list[str]) -> None:
    taken: set[str] = set()
    expected = []
    for slug in slugs:  # the rule, tried the long way
        candidate, count = slug, 0
        while candidate in taken:
            count += 1
            candidate = f"{slug}-{count}"
        taken.add(candidate)
        expected.append(candidate)
    given_out = Slugs()  # linear work: tests/web/test_render.py
    assert [given_out.unique(slug) for slug in slugs] == expected
