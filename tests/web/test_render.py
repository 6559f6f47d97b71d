"""docs/web.md#rendering: a document as sanitized HTML for the web UI.

Real markdown-it, real nh3. The look-ups a route would pass are built here on the project's own
LinkIndex over a small folder `ops`, seen from the document `sub/current.md`.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it.rules_inline import StateInline

from ragdown.documents.links import LinkIndex, resolve_markdown_link, resolve_wikilink
from ragdown.web import render as render_module
from ragdown.web.render import Heading, Rendered, Slugs, render_markdown

FOLDER = "ops"
CURRENT = "sub/current.md"
INDEX = LinkIndex(
    ["sub/current.md", "sub/sibling.md", "note.md", "runbooks/restore.md"],
    {"runbooks/restore.md": ["Restore guide"]},
    ["img/a.png", "diagram.svg", "files/report.pdf", "sub/pic.jpg"],
)


def resolve(written: str) -> tuple[str, str | None] | None:
    found = resolve_wikilink(INDEX, written, CURRENT)
    return (f"{FOLDER}/{found.path}", found.anchor) if found else None


def attachment(written: str) -> str | None:
    # Relative to the document, as a Markdown link resolves; a bare name also by name, as embeds do.
    found = resolve_markdown_link(INDEX, written, CURRENT)
    if found is None and "/" not in written:
        found = INDEX.lookup(written, CURRENT)
    return f"{FOLDER}/{found}" if found else None


def render(text: str) -> Rendered:
    return render_markdown(text, folder=FOLDER, resolve=resolve, attachment=attachment)


def html(text: str) -> str:
    return render(text).html


def body(text: str) -> str:
    """The HTML of a one-paragraph document, without its `<p data-line="1">` wrapper."""
    out = html(text).strip()
    match = re.fullmatch(r'<p data-line="1">(.*)</p>', out, re.DOTALL)
    assert match, out
    return match.group(1)


class Elements(HTMLParser):
    """Every start tag of a piece of HTML with its attributes, as a browser's tokenizer reads them."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str]]] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {name: value or "" for name, value in attrs}))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)


# --- wikilinks ------------------------------------------------------------------------------------------


def test_a_wikilink_to_a_document_is_a_hash_route_labelled_as_written() -> None:
    assert (
        body("[[note]]") == '<a class="wikilink" href="#/doc/ops/note.md" rel="noopener noreferrer">note</a>'
    )


def test_a_wikilink_alias_is_the_label() -> None:
    assert body("[[note|the note]]") == (
        '<a class="wikilink" href="#/doc/ops/note.md" rel="noopener noreferrer">the note</a>'
    )


def test_a_wikilink_heading_is_appended_as_its_slug_and_resolve_gets_the_target_as_written() -> None:
    seen: list[str] = []

    def recording(written: str) -> tuple[str, str | None] | None:
        seen.append(written)
        return resolve(written)

    out = render_markdown(
        "[[runbooks/restore#Restore Steps|how]]", folder=FOLDER, resolve=recording, attachment=attachment
    )
    assert 'href="#/doc/ops/runbooks/restore.md#restore-steps"' in out.html
    assert ">how</a>" in out.html
    assert seen == ["runbooks/restore#Restore Steps"]


def test_a_wikilink_to_a_heading_of_the_same_document() -> None:
    assert body("[[#Intro Part]]") == (
        '<a class="wikilink" href="#/doc/ops/sub/current.md#intro-part" rel="noopener noreferrer">'
        "#Intro Part</a>"
    )


def test_a_wikilink_by_alias() -> None:
    assert 'href="#/doc/ops/runbooks/restore.md"' in html("[[Restore guide]]")


def test_an_unresolved_wikilink_is_marked_missing_and_has_no_href() -> None:
    assert body("[[Nowhere|gone]]") == (
        '<a class="wikilink missing" title="no document by that name" rel="noopener noreferrer">gone</a>'
    )


def test_a_wikilink_to_another_file_is_an_attachment_the_ui_downloads() -> None:
    assert body("[[report.pdf]]") == (
        '<a class="wikilink attachment" data-file="ops/files/report.pdf" rel="noopener noreferrer">'
        "report.pdf</a>"
    )


def test_a_path_is_percent_encoded_in_the_route() -> None:
    out = render_markdown(
        "[[odd]]", folder=FOLDER, resolve=lambda _: ("ops/a #1?.md", "Q & A"), attachment=lambda _: None
    )
    assert 'href="#/doc/ops/a%20%231%3F.md#q--a"' in out.html


@pytest.mark.parametrize(
    "text",
    [
        "`[[note]]` and `![[diagram.svg]]`",
        "```\n[[note]] ![[diagram.svg]]\n```",
        "~~~md\n[[note]]\n~~~",
        "    [[note]] indented code",
    ],
)
def test_wikilinks_in_code_stay_literal(text: str) -> None:
    out = html(text)
    assert "[[note]]" in out
    assert "wikilink" not in out
    assert "<img" not in out


def test_a_wikilink_in_a_link_text_leaves_the_outer_link_as_text_never_a_link_in_a_link() -> None:
    # As CommonMark treats `[see [inner](x)](y)`: the inner link wins.
    assert body("[see [[note]]](https://example.org)") == (
        '[see <a class="wikilink" href="#/doc/ops/note.md" rel="noopener noreferrer">note</a>](https://example.org)'
    )


# --- embeds ---------------------------------------------------------------------------------------------


def test_an_image_embed_has_data_src_and_never_src() -> None:
    assert body("![[diagram.svg]]") == '<img class="embed" data-src="ops/diagram.svg" alt="diagram.svg">'
    assert body("![[a.png|300]]") == '<img class="embed" data-src="ops/img/a.png" alt="a.png">'


def test_a_note_embed_is_a_link_not_the_note_inlined() -> None:
    assert (
        body("![[note]]")
        == '<a class="embed-note" href="#/doc/ops/note.md" rel="noopener noreferrer">↪ note</a>'
    )


def test_an_embed_of_another_file_is_an_attachment_link() -> None:
    assert body("![[report.pdf]]") == (
        '<a class="embed-file attachment" data-file="ops/files/report.pdf" rel="noopener noreferrer">'
        "report.pdf</a>"
    )


def test_a_missing_embed_is_a_missing_span() -> None:
    assert body("![[gone.png]]") == '<span class="missing" title="no such file in the folder">gone.png</span>'


# --- Markdown images and links --------------------------------------------------------------------------


def test_a_relative_image_goes_through_the_attachment_look_up() -> None:
    assert body("![A chart](../img/a.png)") == '<img data-src="ops/img/a.png" alt="A chart">'
    assert body('![pic](pic.jpg "Title")') == '<img data-src="ops/sub/pic.jpg" alt="pic" title="Title">'


def test_an_unresolvable_image_is_its_alt_text_marked_missing() -> None:
    assert body("![gone *away*](nope.png)") == (
        '<span class="missing" title="no such file in the folder">gone away</span>'
    )


def test_a_remote_image_is_a_link_and_never_loaded() -> None:
    assert body("![logo](https://example.org/logo.png)") == (
        '<a href="https://example.org/logo.png" target="_blank" rel="noopener noreferrer">logo</a>'
    )


def test_a_remote_image_inside_a_link_is_its_alt_text() -> None:
    out = body("[![logo](https://example.org/logo.png)](https://example.org)")
    assert out == '<a href="https://example.org" target="_blank" rel="noopener noreferrer">logo</a>'


def test_a_relative_link_to_a_document_is_a_hash_route() -> None:
    assert body("[s](sibling.md)") == '<a href="#/doc/ops/sub/sibling.md" rel="noopener noreferrer">s</a>'
    assert body("[r](../runbooks/restore.md#Restore%20Steps)") == (
        '<a href="#/doc/ops/runbooks/restore.md#restore-steps" rel="noopener noreferrer">r</a>'
    )


def test_a_relative_link_to_another_file_is_an_attachment() -> None:
    assert body("[the report](../files/report.pdf)") == (
        '<a class="attachment" data-file="ops/files/report.pdf" rel="noopener noreferrer">the report</a>'
    )


def test_a_relative_link_to_nothing_keeps_its_text_marked_missing() -> None:
    assert body("[m](missing.md)") == '<span class="missing" title="no such file in the folder">m</span>'
    assert (
        body("[up](../../outside.md)") == '<span class="missing" title="no such file in the folder">up</span>'
    )


def test_external_links_open_in_a_new_tab_mailto_and_fragments_stay() -> None:
    assert body("[w](https://example.org/a?b=1)") == (
        '<a href="https://example.org/a?b=1" target="_blank" rel="noopener noreferrer">w</a>'
    )
    assert body("<https://example.org>") == (
        '<a href="https://example.org" target="_blank" rel="noopener noreferrer">https://example.org</a>'
    )
    assert (
        body("[m](mailto:a@example.org)") == '<a href="mailto:a@example.org" rel="noopener noreferrer">m</a>'
    )
    # An in-page fragment points at the prefixed id its heading carries.
    assert body("[f](#setup)") == '<a href="#user-content-setup" rel="noopener noreferrer">f</a>'


@pytest.mark.parametrize(
    "url", ["ftp://example.org/x", "/etc/passwd", "//evil.example/x", "file:///etc/passwd"]
)
def test_other_links_lose_their_url(url: str) -> None:
    shown = "link not shown: only http, https, mailto and in-folder links are"
    assert body(f"[x]({url})") == f'<span class="missing" title="{shown}">x</span>'


# --- tags -----------------------------------------------------------------------------------------------


def test_inline_tags_link_to_a_search_in_the_folder() -> None:
    assert body("Filed under #ops and #Infra/DB/") == (
        'Filed under <a class="tag" href="#/search/ops?tag=ops" rel="noopener noreferrer">#ops</a> and '
        '<a class="tag" href="#/search/ops?tag=infra/db" rel="noopener noreferrer">#Infra/DB/</a>'
    )


def test_a_tag_starts_a_list_item_and_a_quote() -> None:
    out = html("- #todo item\n\n> #quoted")
    assert '<a class="tag" href="#/search/ops?tag=todo"' in out
    assert '<a class="tag" href="#/search/ops?tag=quoted"' in out


@pytest.mark.parametrize(
    "text",
    [
        "a#b",
        "#2024 is a year",
        "see https://example.org/#anchor",
        "`#code`",
        "```\n#fenced\n```",
        "    #indented",
        "[#in-link-text](https://example.org)",
        "\\#escaped",
    ],
)
def test_not_tags(text: str) -> None:
    assert 'class="tag"' not in html(text)


def test_a_heading_attribute_block_is_no_tag_and_sets_the_id() -> None:
    out = render("## Setup { #setup-steps }\n\n### Other {: #x .wide}")
    assert 'class="tag"' not in out.html
    assert "{" not in out.html
    assert [(h.text, h.id) for h in out.headings] == [("Setup", "setup-steps"), ("Other", "x")]


def test_braces_that_are_no_attribute_block_stay_in_the_heading() -> None:
    out = render("# Use {braces}")
    assert out.headings == [Heading(1, "Use {braces}", "use-braces", 1)]


def test_a_link_reference_definition_is_no_tag() -> None:
    out = html("See [summary].\n\n[summary]: #summary\n[other]: #other 'Other'")
    assert 'class="tag"' not in out
    assert '<a href="#user-content-summary" rel="noopener noreferrer">summary</a>' in out


def test_the_folder_and_tag_are_encoded_in_the_route() -> None:
    out = render_markdown("#Über/Sub", folder="my notes", resolve=resolve, attachment=attachment)
    assert 'href="#/search/my%20notes?tag=%C3%BCber/sub"' in out.html
    assert ">#Über/Sub</a>" in out.html


# --- headings and lines ---------------------------------------------------------------------------------

FRONT_MATTER_DOC = """---
title: Runbook
tags: [ops]
---

# Intro

Some *text*
over two lines.

## Intro

- one
- two

## Intro *again*

```python
x = 1
```

| a | b |
|---|---|
| 1 | 2 |

Setext `code` [[note]]
----------------------

> quoted

    indented
"""


def test_headings_have_unique_slugs_and_the_file_lines() -> None:
    out = render(FRONT_MATTER_DOC)
    assert out.headings == [
        Heading(1, "Intro", "intro", 6),
        Heading(2, "Intro", "intro-1", 11),
        Heading(2, "Intro again", "intro-again", 16),
        Heading(2, "Setext code note", "setext-code-note", 26),
    ]
    assert '<h1 data-line="6" id="user-content-intro">Intro</h1>' in out.html
    assert '<h2 data-line="11" id="user-content-intro-1">Intro</h2>' in out.html


def test_repeated_slugs_skip_ids_already_taken() -> None:
    out = render("# a\n\n# a-1\n\n# a\n\n# !!!")
    assert [h.id for h in out.headings] == ["a", "a-1", "a-2", "section"]


# The web UI's own ids (server/ragdown/web/static/index.html and its modules): a document must take none.
UI_IDS = (
    "dialog",
    "dialog-form",
    "toast",
    "main",
    "side",
    "search-form",
    "search-input",
    "sign-out",
    "token",
)


def test_every_id_the_document_carries_is_prefixed_and_so_are_in_page_links() -> None:
    """`## Dialog` once became `id="dialog"`, taking the page's own dialog (issue 26, item 9)."""
    text = "\n\n".join(f"## {name.replace('-', ' ').title()}" for name in UI_IDS)
    text += "\n\n## Toast\n\nSee [the dialog](#dialog) and a note[^main].\n\n[^main]: The note."
    out = render(text)
    ids = re.findall(r'\bid="([^"]*)"', out.html)
    assert ids
    assert all(i.startswith("user-content-") for i in ids), ids
    assert not set(ids) & set(UI_IDS)
    assert 'href="#user-content-dialog"' in out.html
    assert 'href="#user-content-fn1"' in out.html
    # Headings list the bare slug: what `[[#Dialog]]` and `#/doc/…#dialog` links name.
    assert [h.id for h in out.headings][:3] == ["dialog", "dialog-form", "toast"]
    assert "toast-1" in [h.id for h in out.headings]
    # Routes and external links are not in-page fragments: untouched.
    routed = html("[[#Dialog]] [x](https://example.org/#dialog)")
    assert 'href="#/doc/ops/' in routed
    assert 'href="https://example.org/#dialog"' in routed


def test_repeated_headings_cost_work_in_proportion_to_their_number() -> None:
    """A 4 MiB document of `## Section` headings took minutes: each repeat searched `section-1`,
    `section-2`, … from the start. Work done at 4× the headings must be about 4×, not 16×."""

    def work(n: int) -> int:
        slugs = Slugs()
        names = [slugs.unique(slug) for slug in ["section"] * n + ["section-3", "section"] + ["a-1", "a"] * n]
        assert len(set(names)) == len(names)
        return slugs.tried

    assert work(4000) <= 4 * work(1000) + 8
    first = Slugs()
    assert [first.unique(s) for s in ("a", "a-1", "a", "a", "a-3", "a")] == [
        "a",
        "a-1",
        "a-2",
        "a-3",
        "a-3-1",
        "a-4",
    ]


def test_top_level_blocks_carry_their_first_line() -> None:
    out = html(FRONT_MATTER_DOC)
    for start in (
        '<p data-line="8">',
        '<ul data-line="13">',
        '<pre data-line="18"><code class="language-python">',
        '<table data-line="22">',
        '<blockquote data-line="29">',
        '<pre data-line="31"><code>',
    ):
        assert start in out
    # Nested blocks carry none: only where a block starts at the top.
    assert "<li data-line" not in out


def test_front_matter_is_not_shown_and_a_bom_and_crlf_do_not_shift_lines() -> None:
    out = render("\ufeff---\r\ntitle: x\r\n...\r\n# Title\r\n")
    assert "title: x" not in out.html
    assert out.headings == [Heading(1, "Title", "title", 4)]


def test_an_unclosed_front_matter_is_body() -> None:
    out = render("---\ntitle: x\n")
    assert "title: x" in out.html


# --- tasklists, tables, footnotes, definition lists, code ------------------------------------------------


def test_task_lists_are_disabled_checkboxes() -> None:
    out = html("- [ ] open\n- [x] done")
    assert '<ul class="contains-task-list" data-line="1">' in out
    assert '<input class="task-list-item-checkbox" disabled="disabled" type="checkbox"> open' in out
    assert 'checked="checked" disabled="disabled" type="checkbox"> done' in out


def test_tables_keep_their_alignment_and_nothing_else_of_style() -> None:
    out = html("| a | b |\n|:-|-:|\n| 1 | [[note\\|n]] |")
    assert '<th style="text-align:left">a</th>' in out
    assert '<td style="text-align:right"><a class="wikilink" href="#/doc/ops/note.md"' in out


def test_footnotes() -> None:
    out = html("Text[^1].\n\n[^1]: The note, with [[note]].")
    assert (
        '<sup class="footnote-ref"><a href="#user-content-fn1" id="user-content-fnref1" '
        'rel="noopener noreferrer">[1]</a></sup>' in out
    )
    assert '<section class="footnotes">' in out
    assert '<li id="user-content-fn1" class="footnote-item">' in out
    assert 'href="#user-content-fnref1" class="footnote-backref"' in out
    assert 'with <a class="wikilink" href="#/doc/ops/note.md"' in out


def test_definition_lists_and_strikethrough() -> None:
    out = html("Term\n: Definition ~~old~~")
    assert "<dt>Term</dt>" in out
    assert "<dd>Definition <s>old</s></dd>" in out


def test_a_code_fence_keeps_only_its_language_word() -> None:
    assert html("```rust ignore\nfn x() {}\n```") == (
        '<pre data-line="1"><code class="language-rust">fn x() {}\n</code></pre>\n'
    )


def test_each_render_has_its_own_folder_and_look_ups() -> None:
    first = render_markdown(
        "#a [[x]]", folder="one", resolve=lambda _: ("one/x.md", None), attachment=lambda _: None
    )
    second = render_markdown("#a [[x]]", folder="two", resolve=lambda _: None, attachment=lambda _: None)
    assert "#/search/one?tag=a" in first.html
    assert "#/doc/one/x.md" in first.html
    assert "#/search/two?tag=a" in second.html
    assert "missing" in second.html


# --- hostile input --------------------------------------------------------------------------------------

ALLOWED_TAGS = {
    *("h1", "h2", "h3", "h4", "h5", "h6", "p", "a", "img", "code", "pre", "blockquote", "hr", "br"),
    *("em", "strong", "del", "s", "sup", "span", "section", "ul", "ol", "li", "input", "dl", "dt", "dd"),
    *("table", "thead", "tbody", "tr", "th", "td"),
}
SAFE_HREF = re.compile(r"^(https?://|mailto:|#)", re.IGNORECASE)
BAD_URL = re.compile(r"^\s*(javascript|vbscript|data|file):", re.IGNORECASE)

HOSTILE = [
    # raw HTML
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<iframe src="javascript:alert(1)"></iframe>',
    "<svg onload=alert(1)><circle/></svg>",
    '<a href="javascript:alert(1)">x</a>',
    '<div onclick="alert(1)">\n\nblock\n\n</div>',
    "<!-- <script>alert(1)</script> -->",
    "<style>*{x:expression(alert(1))}</style>",
    # link hrefs
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](java&#x09;script:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    '[x](https://example.org/"onmouseover="alert(1))',
    '[x](https://example.org "t\\" onmouseover=\\"alert(1)")',
    "<javascript:alert(1)>",
    "[x]\n\n[x]: javascript:alert(1)",
    # image srcs
    "![x](javascript:alert(1))",
    "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "![x](data:image/png;base64,iVBORw0KGgo=)",
    '![x" onerror="alert(1)](../img/a.png)',
    '![x](https://example.org/a.png"onerror="alert(1))',
    '![x](../img/a.png "t\\" onerror=\\"alert(1)")',
    # wikilink targets and labels
    '[["><script>alert(1)</script>]]',
    '[[note|"><img src=x onerror=alert(1)>]]',
    '[[note#"><script>alert(1)</script>]]',
    "[[javascript:alert(1)]]",
    # embed targets
    '![["><script>alert(1)</script>.png]]',
    "![[javascript:alert(1)]]",
    '![[x.svg" onload="alert(1)]]',
    "![[data:image/svg+xml,<svg onload=alert(1)>]]",
    # tag names
    '#"><script>alert(1)</script>',
    '#tag"onmouseover="alert(1)',
    "#<img/src=x/onerror=alert(1)>",
    # code info strings, headings, footnotes, tasks, tables
    '```"><script>alert(1)</script>\nx\n```',
    "```js onload=alert(1)\nx\n```",
    '# x {#"><script>alert(1)</script>}',
    "# <script>alert(1)</script>",
    '[^"><script>]\n\n[^"><script>]: x',
    "- [x] <input onfocus=alert(1) autofocus>",
    "| <script>alert(1)</script> |\n|-|\n| x |",
]


def echo_resolve(written: str) -> tuple[str, str | None]:
    """A folder where every name exists, so hostile names reach every attribute a path goes into."""
    target, _, anchor = written.partition("#")
    return f"ops/{target}.md", anchor or None


def echo_attachment(written: str) -> str:
    return f"ops/{written}"


def assert_safe(markup: str) -> None:
    """No `<script`, no tag outside the allow-list, and in the tags no `on…=` handler, no `src=`, no
    `javascript:`/`data:` url. Tags and attributes are read as a browser's tokenizer reads them: a
    payload's `onerror=` shown as escaped text, or inside a quoted `alt`, is harmless and not a hit."""
    assert "<script" not in markup.lower()
    for tag, attrs in Elements(markup).found:
        assert tag in ALLOWED_TAGS, (tag, markup)
        assert "src" not in attrs, markup
        for name, value in attrs.items():
            assert not name.startswith("on"), markup
            assert not BAD_URL.match(value), markup
        if "href" in attrs:
            assert SAFE_HREF.match(attrs["href"]), markup


@pytest.mark.parametrize("payload", HOSTILE)
@pytest.mark.parametrize("world", ["nothing-exists", "everything-exists"])
def test_hostile_input_never_survives(payload: str, world: str) -> None:
    look_ups = (
        (echo_resolve, echo_attachment) if world == "everything-exists" else (lambda _: None, lambda _: None)
    )
    resolve_, attachment_ = look_ups
    for text in (payload, f"---\ntitle: x\n---\n{payload}", f"- {payload}", f"> {payload}"):
        out = render_markdown(text, folder='"><script>', resolve=resolve_, attachment=attachment_)
        assert_safe(out.html)


@pytest.mark.parametrize(
    "payload",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "![x](javascript:alert(1))",
        "[x]\n\n[x]: javascript:alert(1)",
    ],
)
def test_a_refused_url_is_gone_not_shown_as_text(payload: str) -> None:
    assert "javascript" not in html(payload).lower()


MARKDOWN_BITS = st.sampled_from(
    [
        "[", "]", "(", ")", "!", "#", "<", ">", '"', "'", "`", "```", "*", "_", "|", ":", "/", " ", "\n",
        "\n\n", "- ", "> ", "[[", "]]", "![[", "![", "](", "javascript:", "data:", "src=", "onerror=",
        "<script>", "<img ", "<svg ", "{#", "}", "[^1]", "---\n", "&#106;", "%3C", "a.png", "note",
    ]
)  # fmt: skip


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.one_of(st.text(max_size=200), st.lists(MARKDOWN_BITS | st.text(max_size=3), max_size=40).map("".join))
)
def test_no_text_yields_a_script_or_a_src(text: str) -> None:
    for resolve_, attachment_ in ((echo_resolve, echo_attachment), (lambda _: None, lambda _: None)):
        out = render_markdown(text, folder=FOLDER, resolve=resolve_, attachment=attachment_).html
        assert "<script" not in out.lower()
        assert all("src" not in attrs for _, attrs in Elements(out).found), out


def test_raw_html_is_shown_as_text() -> None:
    assert body("<b>bold</b> <em>x</em>") == "&lt;b&gt;bold&lt;/b&gt; &lt;em&gt;x&lt;/em&gt;"


# --- the inline budget (docs/documents.md#bounded-parsing) ------------------------------------------------


def test_blocks_past_the_inline_budget_show_their_text_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_module, "INLINE_BUDGET", 100 + 2 * render_module.BRACKET_WORK)
    text = (
        "# Title [[note]]\n\nSee [[note]] <b>.\n\n"
        + "x" * 80
        + " [[note]] and **bold** <i>\n\n## Late [[note]]\n"
    )
    out = render(text)
    assert out.html.count('class="wikilink"') == 2  # the title's and the first paragraph's
    assert "x" * 80 + " [[note]] and **bold** &lt;i&gt;</p>" in out.html  # as written, escaped
    assert '<h2 data-line="7" id="user-content-late-note">Late [[note]]</h2>' in out.html
    assert [h.text for h in out.headings] == ["Title note", "Late [[note]]"]


def test_rendering_past_the_budget_costs_no_inline_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the budget, a line of `[` costs the same whatever its length: it is not parsed."""
    monkeypatch.setattr(render_module, "INLINE_BUDGET", 600 * (1 + render_module.BRACKET_WORK))
    calls = {"link": 0}
    real = render_module._wikilink_rule

    def counted(state: StateInline, silent: bool) -> bool:
        calls["link"] += 1
        return real(state, silent)

    monkeypatch.setattr(render_module, "_wikilink_rule", counted)
    render_module._MD.inline.ruler.at("ragdown_wikilink", counted)
    try:
        render("[" * 500 + "\n\n" + "[" * 40_000 + "\n")
    finally:
        render_module._MD.inline.ruler.at("ragdown_wikilink", real)
    assert 0 < calls["link"] <= 1_000  # the first block's brackets only
