"""docs/documents.md#finding-links finding links, docs/documents.md#wikilink-resolution parsing and resolving
them, docs/documents.md#backlinks backlinks."""

from __future__ import annotations

import pytest

from ragdown.documents import links as links_module
from ragdown.documents.link_finder import Link, find_links
from ragdown.documents.links import (
    Backlink,
    BacklinkLine,
    LinkIndex,
    Resolved,
    WikiTarget,
    backlinks,
    clip,
    normalise_target,
    parse_wikilink,
    resolve_link,
    resolve_markdown_link,
    resolve_wikilink,
)

DOCUMENTS = [
    "Home.md",
    "projects/alpha/Plan.md",
    "projects/beta/Plan.md",
    "archive/old/projects/alpha/Plan.md",
    "notes/Kafka.md",
]
ALIASES = {"projects/alpha/Plan.md": ["Alpha plan"], "notes/Kafka.md": ["Streams"]}
ATTACHMENTS = ["assets/diagram.png", "projects/alpha/diagram.png", "file with space.pdf"]
INDEX = LinkIndex(DOCUMENTS, ALIASES, ATTACHMENTS)


def summary(found: list[Link]) -> list[tuple[str, str, str, int]]:
    return [(link.kind, link.raw, link.target, link.line) for link in found]


def assert_offsets(text: str, found: list[Link]) -> None:
    for link in found:
        assert text[link.start : link.end] == link.target


# --- docs/documents.md#finding-links finding links ----------------------------------------------------------


def test_spec_example_gives_three_links() -> None:
    text = (
        "See [[Plan#Goals|the plan]] and ![[diagram.png]]. Also [kafka](../notes/Kafka.md#Setup), "
        "[web](https://x.test) and [top](#top)."
    )
    found = find_links(text)
    assert summary(found) == [
        ("wiki", "Plan#Goals|the plan", "Plan", 1),
        ("wiki", "diagram.png", "diagram.png", 1),
        ("markdown", "../notes/Kafka.md#Setup", "../notes/Kafka.md", 1),
    ]
    assert_offsets(text, found)


def test_links_in_inline_code_and_fences_are_ignored() -> None:
    text = "\n".join(
        [
            "`[[Not a link]]` and ``[[nor]] [x](y.md)`` but [[Yes]]",
            "```",
            "[[Nor this]] [a](b.md)",
            "```",
            "~~~python",
            "[[Hidden]]",
            "```",
            "[[Still hidden: a backtick fence does not close a tilde one]]",
            "~~~~",
            "[[After]]",
        ]
    )
    found = find_links(text)
    assert summary(found) == [("wiki", "Yes", "Yes", 1), ("wiki", "After", "After", 10)]
    assert_offsets(text, found)


def test_a_fence_line_itself_holds_no_links_and_an_unclosed_fence_hides_the_rest() -> None:
    assert find_links("``` [[info]]\n[[inside]]\n") == []
    assert find_links("[[before]]\n````\n[[a]]\n```\n[[b]]") == [Link("wiki", "before", "before", 2, 8, 1)]


def test_offsets_and_line_numbers_follow_the_original_text_across_crlf_and_lone_cr() -> None:
    text = "---\r\ntitle: x\r\n---\r\n`[[code]]` [[One]]\rtwo [a](x/B.md)\n\n[[Three|t]]"
    found = find_links(text)
    assert summary(found) == [
        ("wiki", "One", "One", 4),
        ("markdown", "x/B.md", "x/B.md", 5),
        ("wiki", "Three|t", "Three", 7),
    ]
    assert_offsets(text, found)


def test_wikilink_target_stops_at_the_first_bar_or_hash() -> None:
    text = "[[Plan|shown#x]] [[Plan#A|b]] [[#Heading]] [[ spaced ]]"
    found = find_links(text)
    assert [(link.raw, link.target) for link in found] == [
        ("Plan|shown#x", "Plan"),
        ("Plan#A|b", "Plan"),
        ("#Heading", ""),
        (" spaced ", " spaced "),
    ]
    assert_offsets(text, found)
    assert found[2].start == found[2].end == text.index("#Heading")


@pytest.mark.parametrize("text", ["[[]]", "[[a\nb]]", "[[a[b]]", "[ [a] ]", "[[a]"])
def test_not_wikilinks(text: str) -> None:
    assert [link for link in find_links(text) if link.kind == "wiki"] == []


def test_images_angle_brackets_and_titles() -> None:
    text = '![chart](img/chart.png) [a](<notes/My.md>) [t](notes/x.md "A title") [e]()'
    found = find_links(text)
    assert summary(found) == [
        ("markdown", "img/chart.png", "img/chart.png", 1),
        ("markdown", "notes/My.md", "notes/My.md", 1),
        ("markdown", "notes/x.md", "notes/x.md", 1),
    ]
    assert_offsets(text, found)


@pytest.mark.parametrize(
    "url",
    [
        "https://x.test/a.md",
        "HTTP://X.TEST",
        "mailto:a@b.c",
        "tel:+123",
        "obsidian://open",
        "#top",
        "/abs.md",
    ],
)
def test_urls_with_a_scheme_a_hash_or_a_slash_are_skipped(url: str) -> None:
    assert find_links(f"[x]({url})") == []


def test_markdown_target_is_the_url_before_the_hash() -> None:
    found = find_links("[k](Kafka.md#Setup#Deep) [q](a.md?x=1)")
    assert [(link.raw, link.target) for link in found] == [
        ("Kafka.md#Setup#Deep", "Kafka.md"),
        ("a.md?x=1", "a.md?x=1"),
    ]


def test_links_come_in_text_order_and_wiki_only_drops_markdown_links() -> None:
    text = "[m](a.md) [[w]]\n[[v]] ![i](b.png)"
    assert [link.raw for link in find_links(text)] == ["a.md", "w", "v", "b.png"]
    assert [link.raw for link in find_links(text, wiki_only=True)] == ["w", "v"]


# --- docs/documents.md#wikilink-resolution parsing ----------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("![[Note#Heading|shown]]", WikiTarget("Note", "Heading")),
        ("[[Note]]", WikiTarget("Note")),
        ("Note#^block", WikiTarget("Note")),
        ("#Only heading", WikiTarget("", "Only heading")),
        ("#^block", WikiTarget("")),
        ("Note#", WikiTarget("Note")),
        ("Note#   ", WikiTarget("Note")),
        ("Note#A#B", WikiTarget("Note", "A#B")),
        ("Note| shown #not-an-anchor", WikiTarget("Note")),
        ("[[ Plan # Goals ]]", WikiTarget("Plan", "Goals")),
        ("./a%20b.md", WikiTarget("a b.md")),
        ("projects\\beta\\Plan", WikiTarget("projects/beta/Plan")),
        ("/abs/Note", WikiTarget("abs/Note")),
        ("a/./b/../c", WikiTarget("a/c")),
        (".", WikiTarget("")),
        ("./", WikiTarget("")),
        ("../outside", WikiTarget("../outside")),
    ],
)
def test_parse_wikilink(raw: str, expected: WikiTarget) -> None:
    assert parse_wikilink(raw) == expected


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("caf%C3%A9", "café"),
        ("a%2Fb", "a/b"),
        ("a+b", "a+b"),
        ("100%", "100%"),  # a stray % is part of the name
        ("50%%20off", "50%%20off"),  # one malformed escape leaves every escape as written
        ("%zz%20x", "%zz%20x"),
        ("%E9t%E9", "%E9t%E9"),  # escapes that are not UTF-8 are left as written too
        ("%2e%2e/x", "../x"),
        (".//x", "x"),
        ("//x", "x"),
        ("notes/", "notes/"),
    ],
)
def test_normalise_target_decodes_only_well_formed_escapes(target: str, expected: str) -> None:
    assert normalise_target(target) == expected


# --- docs/documents.md#wikilink-resolution resolution -------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "from_path", "expected"),
    [
        ("Plan", "Home.md", Resolved("projects/beta/Plan.md")),
        ("plan", "projects/alpha/x.md", Resolved("projects/alpha/Plan.md")),
        ("alpha/Plan", "Home.md", Resolved("projects/alpha/Plan.md")),
        ("alpha/Plan", None, Resolved("projects/alpha/Plan.md")),
        ("home.md", None, Resolved("Home.md")),
        ("streams#Retention", None, Resolved("notes/Kafka.md", "Retention")),
        ("#Top", "Home.md", Resolved("Home.md", "Top")),
        ("file%20with%20space.pdf", None, Resolved("file with space.pdf")),
        ("Missing", None, None),
        ("../outside", None, None),
    ],
)
def test_spec_resolution_vectors(raw: str, from_path: str | None, expected: Resolved | None) -> None:
    assert resolve_wikilink(INDEX, raw, from_path) == expected


@pytest.mark.parametrize(
    ("raw", "from_path", "expected"),
    [
        ("projects/beta/Plan", None, "projects/beta/Plan.md"),
        ("projects/beta/Plan.md", None, "projects/beta/Plan.md"),
        ("PROJECTS/BETA/PLAN", None, "projects/beta/Plan.md"),
        ("projects\\beta\\Plan", None, "projects/beta/Plan.md"),
        ("Plan", "projects/beta/Other.md", "projects/beta/Plan.md"),
        ("../beta/Plan", "projects/alpha/x.md", "projects/beta/Plan.md"),
        ("![[Plan#Goals|the plan]]", "projects/alpha/x.md", "projects/alpha/Plan.md"),
        ("Alpha plan", None, "projects/alpha/Plan.md"),
        ("ALPHA PLAN", "notes/x.md", "projects/alpha/Plan.md"),
        ("Kafka.md", "Home.md", "notes/Kafka.md"),
        ("notes/kafka.MD", None, "notes/Kafka.md"),
        ("diagram.png", "projects/alpha/Plan.md", "projects/alpha/diagram.png"),
        ("diagram.png", "Home.md", "assets/diagram.png"),
        ("alpha/diagram.png", None, "projects/alpha/diagram.png"),
    ],
)
def test_exact_paths_names_and_aliases(raw: str, from_path: str | None, expected: str) -> None:
    resolved = resolve_wikilink(INDEX, raw, from_path)
    assert resolved is not None
    assert resolved.path == expected


@pytest.mark.parametrize(
    ("raw", "from_path"),
    [
        ("#Top", None),
        ("#Top", ""),
        ("lan", None),  # a name matches whole segments only
        ("ha/Plan", None),
        ("diagram", None),  # an attachment's extension is part of its name
        ("Kafka.markdown", None),
        ("../../../Home", "projects/alpha/x.md"),  # climbs out of the folder even though Home.md exists
        ("../Home", None),
        ("notes/", None),
    ],
)
def test_unresolved(raw: str, from_path: str | None) -> None:
    assert resolve_wikilink(INDEX, raw, from_path) is None


def test_attachments_resolve_only_when_given() -> None:
    without = LinkIndex(DOCUMENTS, ALIASES)
    assert resolve_wikilink(without, "file%20with%20space.pdf") is None
    assert resolve_wikilink(without, "diagram.png") is None


def test_block_reference_anchors_are_dropped() -> None:
    assert resolve_wikilink(INDEX, "Kafka#^p1", None) == Resolved("notes/Kafka.md")
    assert resolve_wikilink(INDEX, "#^p1", "Home.md") == Resolved("Home.md")


def test_case_sensitive_pass_runs_over_every_candidate_before_the_case_insensitive_one() -> None:
    index = LinkIndex(["guide.md", "sub/Guide.md"])
    assert resolve_wikilink(index, "Guide", "sub/x.md") == Resolved("sub/Guide.md")
    assert resolve_wikilink(index, "Guide", None) == Resolved("guide.md")


def test_the_target_as_written_is_tried_before_the_one_beside_the_linking_document() -> None:
    index = LinkIndex(["Kafka.md", "notes/Kafka.md"])
    assert resolve_wikilink(index, "Kafka", "notes/x.md") == Resolved("Kafka.md")


def test_an_exact_path_beats_a_name_and_a_name_beats_an_alias() -> None:
    index = LinkIndex(
        ["x/Plan.md", "q/x/Plan.md", "x/Streams.md", "notes/Kafka.md"], {"notes/Kafka.md": ["Streams"]}
    )
    # By name, q/x/Plan.md would win: it is beside the linking document.
    assert resolve_wikilink(index, "x/Plan", "q/x/z.md") == Resolved("x/Plan.md")
    assert resolve_wikilink(index, "Streams") == Resolved("x/Streams.md")


def test_name_ties_go_to_the_same_directory_then_the_shorter_then_the_alphabetically_first() -> None:
    index = LinkIndex(["x/c/Plan.md", "a/b/c/Plan.md", "b/Note.md", "a/Note.md", "B/Todo.md", "a/Todo.md"])
    assert resolve_wikilink(index, "c/Plan", "a/b/c/x.md") == Resolved("a/b/c/Plan.md")
    assert resolve_wikilink(index, "c/Plan", "Home.md") == Resolved("x/c/Plan.md")
    assert resolve_wikilink(index, "Note") == Resolved("a/Note.md")
    # Alphabetical ignores case first, so `a` comes before `B`.
    assert resolve_wikilink(index, "Todo") == Resolved("a/Todo.md")


def test_without_a_linking_document_the_folder_root_counts_as_its_directory() -> None:
    index = LinkIndex(["sub/Plan.md", "deeper/Plan.markdown", "x/y/Plan.md"])
    assert resolve_wikilink(index, "Plan") == Resolved("sub/Plan.md")
    index = LinkIndex(["Plan.markdown", "x/Plan.md"])
    assert resolve_wikilink(index, "plan") == Resolved("Plan.markdown")


def test_case_only_twins_resolve_deterministically() -> None:
    index = LinkIndex(["plan.md", "Plan.md"])
    assert resolve_wikilink(index, "PLAN") == Resolved("Plan.md")
    assert resolve_wikilink(index, "plan") == Resolved("plan.md")


def test_alias_ties_and_aliases_of_unknown_paths() -> None:
    index = LinkIndex(
        ["ops/runbooks/DR.md", "ops/dr-notes.md", "x.md"],
        {"ops/runbooks/DR.md": ["Recovery"], "ops/dr-notes.md": ["recovery"], "gone.md": ["Gone"]},
    )
    assert resolve_wikilink(index, "recovery", "ops/runbooks/a.md") == Resolved("ops/runbooks/DR.md")
    assert resolve_wikilink(index, "RECOVERY", "x.md") == Resolved("ops/dr-notes.md")
    assert resolve_wikilink(index, "Gone") is None


# --- Markdown links ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "from_path", "expected"),
    [
        ("../notes/Kafka.md", "projects/x.md", "notes/Kafka.md"),
        ("Kafka.md#Setup", "notes/a.md", "notes/Kafka.md"),
        ("./Home.md", "Home.md", "Home.md"),
        ("alpha/../beta/Plan.md", "projects/x.md", "projects/beta/Plan.md"),
        ("file%20with%20space.pdf", "Home.md", "file with space.pdf"),
        ("../../assets/diagram.png", "projects/alpha/Plan.md", "assets/diagram.png"),
        ("Kafka.md", "projects/x.md", None),  # relative only, never by name
        ("../notes/kafka.md", "projects/x.md", None),  # and case-sensitively
        ("../notes/Kafka", "projects/x.md", None),  # and with no extension added
        ("../Home.md", "Home.md", None),
        ("../../Home.md", "projects/x.md", None),
        ("..", "Home.md", None),
        ("./", "Home.md", None),
        ("https://x.test/Home.md", "Home.md", None),
        ("#top", "Home.md", None),
        ("/Home.md", "Home.md", None),
    ],
)
def test_markdown_links_resolve_only_relative_to_their_document(
    url: str, from_path: str, expected: str | None
) -> None:
    assert resolve_markdown_link(INDEX, url, from_path) == expected


def test_resolve_link_by_kind() -> None:
    [markdown] = find_links('[k](<../notes/Kafka.md> "Kafka")')
    assert resolve_link(INDEX, markdown, "projects/x.md") == "notes/Kafka.md"
    [by_name] = find_links("[k](Kafka.md)")
    assert resolve_link(INDEX, by_name, "projects/x.md") is None
    [wiki] = find_links("[[Streams]]")
    assert resolve_link(INDEX, wiki, "Home.md") == "notes/Kafka.md"
    [missing] = find_links("[[Nothing]]")
    assert resolve_link(INDEX, missing, "Home.md") is None


# --- docs/documents.md#backlinks backlinks ------------------------------------------------------------------

DR_INDEX = LinkIndex(
    ["index.md", "ops/dr.md", "ops/near.md", "ops/quiet.md", "b.md", "z.md"],
    {"ops/dr.md": ["DR"]},
)


def test_backlinks_count_aliases_and_relative_links_but_not_code_or_self_links() -> None:
    sources = {
        "z.md": "   [[ops/dr|trimmed]]   \n",
        "ops/dr.md": "[[#Steps]] and [[dr]] and [self](dr.md)",
        "index.md": "\n".join(
            [
                "# Index",
                "See [[DR|disaster recovery]] and [[dr]].",
                "`[[DR]]` in code",
                "```",
                "[[DR]]",
                "```",
                "Also [plan](ops/dr.md#Steps)",
            ]
        ),
        "ops/quiet.md": "no links here",
        "b.md": "[x](dr.md) [[Missing]]",
        "ops/near.md": "[x](dr.md)",
    }
    assert backlinks("ops/dr.md", sources, DR_INDEX) == [
        Backlink(
            "index.md",
            (
                BacklinkLine(2, "See [[DR|disaster recovery]] and [[dr]]."),
                BacklinkLine(7, "Also [plan](ops/dr.md#Steps)"),
            ),
        ),
        Backlink("ops/near.md", (BacklinkLine(1, "[x](dr.md)"),)),
        Backlink("z.md", (BacklinkLine(1, "[[ops/dr|trimmed]]"),)),
    ]


def test_backlink_lines_are_distinct_ascending_and_counted_like_split_lines() -> None:
    text = "[[DR]]\r\n\r[[DR]] [[DR]]\n[x](ops/dr.md)\r\n[[DR]]"
    [found] = backlinks("ops/dr.md", {"index.md": text}, DR_INDEX)
    assert [line.line for line in found.lines] == [1, 3, 4, 5]
    assert [line.text for line in found.lines] == ["[[DR]]", "[[DR]] [[DR]]", "[x](ops/dr.md)", "[[DR]]"]


def test_backlink_text_is_clipped_to_240_characters() -> None:
    long_line = "[[DR]] " + "x" * 300
    exact = "[[DR]] " + "y" * 233
    [found] = backlinks("ops/dr.md", {"index.md": f"{long_line}\n{exact}"}, DR_INDEX)
    clipped, kept = found.lines
    assert len(clipped.text) == 240
    assert clipped.text == long_line[:239] + "…"
    assert kept.text == exact
    assert len(exact) == 240


def test_clip() -> None:
    assert clip("abcdef", 6) == "abcdef"
    assert clip("abcdefg", 6) == "abcde…"


def test_sources_with_neither_marker_are_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = links_module.find_links

    def spy(text: str, *, wiki_only: bool = False) -> list[Link]:
        parsed.append(text)
        return real(text, wiki_only=wiki_only)

    monkeypatch.setattr(links_module, "find_links", spy)
    sources = {"a.md": "plain [text] (here)", "b.md": "[[DR]]", "c.md": "[x](ops/dr.md)"}
    assert [found.path for found in backlinks("ops/dr.md", sources, DR_INDEX)] == ["b.md", "c.md"]
    assert parsed == ["[[DR]]", "[x](ops/dr.md)"]


def test_no_backlinks() -> None:
    assert backlinks("ops/dr.md", {}, DR_INDEX) == []
    assert backlinks("ops/dr.md", {"index.md": "[[Elsewhere]] [a](b.md)"}, DR_INDEX) == []
