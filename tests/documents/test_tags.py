"""docs/documents.md#tags tags: normaliseTag, front-matter tags and inline tags outside code."""

from __future__ import annotations

import pytest

from ragdown.documents.metadata import read_document_meta
from ragdown.documents.tags import normalise_tag


def body_tags(body: str) -> list[str]:
    return read_document_meta(body).tags


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ops", "ops"),
        ("Ops", "ops"),
        ("  #Ops  ", "ops"),
        ("#infra/db", "infra/db"),
        ("###Infra/DB", "infra/db"),
        ("a/b/", "a/b"),
        ("a/b///", "a/b"),
        ("#nested/child/", "nested/child"),
        ("tag-with_under", "tag-with_under"),
        ("v2", "v2"),
        ("2024a", "2024a"),
        ("2024-01", "2024-01"),
        ("_", "_"),
        ("-", "-"),
        ("/lead", "/lead"),
        ("Café", "café"),
        ("ÆSIR", "æsir"),
        ("日本語", "日本語"),
        # A CJK numeral is a letter (Lo), not a number: not "only digits".
        ("一", "一"),
        ("三/二", "三/二"),
        # Rejected: empty, only digits and slashes, or any other character.
        ("", None),
        ("   ", None),
        ("#", None),
        ("##", None),
        ("/", None),
        ("#/", None),
        ("2024", None),
        ("#2024", None),
        ("2024/01", None),
        ("2024/01/", None),
        ("/2024", None),
        ("٢٠٢٤", None),  # Arabic-Indic digits are digits
        ("²", None),  # a superscript is a number too
        ("Ⅻ", None),  # so is a Roman numeral letter-number
        ("a#b", None),
        ("a.b", None),
        ("nested/child/.", None),
        ("two words", None),
        ("a,b", None),
        ("é\u0301", None),  # a combining mark is not a letter
    ],
)
def test_normalise_tag(raw: str, expected: str | None) -> None:
    assert normalise_tag(raw) == expected


def test_acceptance_example() -> None:
    source = "\n".join(
        [
            "---",
            "tags: [Ops, '#infra/db']",
            "aliases:",
            "  - Elephant",
            '  - "The DB"',
            "---",
            "# Postgres #heading-tag",
            "",
            "Vacuum nightly #maintenance and #2024 but not a#b or `#code`.",
            "",
            "```",
            "#include <stdio.h>",
            "```",
            "See https://example.com/#anchor and #nested/child/.",
        ]
    )
    meta = read_document_meta(source)
    assert meta.tags == ["heading-tag", "infra/db", "maintenance", "nested/child", "ops"]
    assert meta.aliases == ["Elephant", "The DB"]


def test_tag_string_split_on_commas_and_spaces() -> None:
    assert read_document_meta("---\ntags: one, two three\n---\nx").tags == ["one", "three", "two"]


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        (["tags: [B, a, '#C/', 2024]"], ["a", "b", "c"]),
        (["tags: '#x #y'"], ["x", "y"]),
        (["tags:", "  - Alpha", "  - '#beta/'", "  - two words"], ["alpha", "beta"]),
        (["tags: a", "tags: [b]", "tags:", "  - c"], ["a", "b", "c"]),
        (["tags: [a, A, '#a']"], ["a"]),
        (["  tags: [indented]"], []),
    ],
)
def test_front_matter_tags(front: list[str], expected: list[str]) -> None:
    assert read_document_meta("\n".join(["---", *front, "---", "body"])).tags == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("#start of line", ["start"]),
        ("text #tag", ["tag"]),
        ("text\t#tab", ["tab"]),
        ("#a #b #a", ["a", "b"]),
        ("#Upper", ["upper"]),
        ("#tag, then #other.", ["other", "tag"]),
        ("#one/two/ end", ["one/two"]),
        ("#nested/child/.", ["nested/child"]),
        ("#über", ["über"]),
        ("#2024 #v2", ["v2"]),
        # Not preceded by the start of the line or whitespace.
        ("a#b", []),
        ("(#paren) [#bracket]", []),
        ("https://x/#anchor", []),
        ("#a#b", ["a"]),
        # A `#` with nothing taggable after it.
        ("# ", []),
        ("#.", []),
        ("issue #", []),
        # A heading line is scanned too, but its `#` marker is not a tag.
        ("# Postgres #heading-tag", ["heading-tag"]),
        ("## Title ##", []),
        # Inline code spans are blanked out.
        ("`#code` and #real", ["real"]),
        ("``#double`` and ``a ` #inner`` #after", ["after"]),
        ("text `x` #between `y`", ["between"]),
        ("unclosed ` #tick", ["tick"]),
        # Link reference definitions (mdBook's `[summary]: #summary`): their destination is no tag,
        # as Obsidian, which hides them, does not show one.
        ("[summary]: #summary", []),
        ("   [motivation]: #motivation", []),
        ('[a]: https://x/#frag "title #not"', []),
        ("    [code]: #indented-code", []),
        ("text [summary]: #summary", ["summary"]),  # not a definition: it does not start the line
        ("[summary] #summary", ["summary"]),  # no colon: a bracket and a tag
        # A heading's trailing attribute block is no tag; the heading's own tags are.
        ("## Summary { #summary }", []),
        ("## Summary {#summary .wide}", []),
        ("## Setup #ops {: #setup }", ["ops"]),
        ("## Use {braces} #real", ["real"]),
        ("Paragraph { #not-a-heading }", ["not-a-heading"]),
        # Indented code: four spaces or a tab.
        ("    #indented", []),
        ("\t#tabbed", []),
        ("   #three-spaces", ["three-spaces"]),
        ("  \t#not-at-start", ["not-at-start"]),
    ],
)
def test_inline_tags(body: str, expected: list[str]) -> None:
    assert body_tags(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("```\n#inside\n```\n#after", ["after"]),
        ("```sh #info\n#inside\n```", []),
        ("~~~\n#inside\n~~~\n#after", ["after"]),
        # A backtick line does not close a tilde fence.
        ("~~~\n```\n#inside\n~~~\n#after", ["after"]),
        # A shorter closer does not close; a longer one does.
        ("````\n```\n#inside\n`````\n#after", ["after"]),
        # The closer may carry text after its marker.
        ("```\n#inside\n```ignored\n#after", ["after"]),
        # An unclosed fence runs to the end of the file.
        ("#before\n```\n#inside\n\n#still-inside", ["before"]),
        # Four spaces of indent is not a fence (and is indented code itself).
        ("    ```\n#outside", ["outside"]),
    ],
)
def test_inline_tags_skip_fences(body: str, expected: list[str]) -> None:
    assert body_tags(body) == expected


def test_inline_tags_are_scanned_from_the_body_start_only() -> None:
    source = "---\nnote: #not-a-tag\ntags: [front]\n---\n#body"
    assert read_document_meta(source).tags == ["body", "front"]


def test_unclosed_front_matter_is_scanned_as_body() -> None:
    assert read_document_meta("---\nnote: #scanned\ntags: [ignored]\n").tags == ["scanned"]


def test_tags_are_the_sorted_union_of_front_matter_and_inline() -> None:
    source = "---\ntags: [zeta, Alpha]\n---\n#alpha #mid"
    assert read_document_meta(source).tags == ["alpha", "mid", "zeta"]
