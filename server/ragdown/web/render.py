"""A document rendered to sanitized HTML for the web UI, by the rules of docs/web.md#rendering.

One MarkdownIt instance, built at import, renders every document; what differs per document (its
folder and the two look-ups that resolve links) travels in markdown-it's `env`, so nothing is rebuilt
per call. This module holds the parser's rules; the HTML of ragdown's own tokens is in `markup.py`.
Whatever the parser emits then goes through one nh3 allow-list (`sanitize.py`): the sanitizer, not
the renderer, is the security boundary.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import OptionsDict
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from ragdown.documents.frontmatter import read_front_matter
from ragdown.documents.headings import split_attributes
from ragdown.documents.lines import split_lines
from ragdown.documents.link_finder import WIKILINK_RE
from ragdown.documents.links import parse_wikilink
from ragdown.documents.tags import normalise_tag
from ragdown.web.markup import (
    ENV_KEY,
    LINK_NOT_SHOWN,
    MISSING_FILE,
    REMOTE_RE,
    Attachment,
    Context,
    Heading,
    Resolver,
    context_of,
    doc_href,
    is_image,
    is_markdown,
    is_relative,
    plain_text,
    render_fence,
    render_image,
    render_tag,
    render_wikilink,
    slugify,
)
from ragdown.web.sanitize import sanitize

__all__ = ["Heading", "Rendered", "Slugs", "render_markdown"]


@dataclass(frozen=True)
class Rendered:
    html: str  # sanitized HTML of the body; front matter is not shown
    headings: list[Heading]


# The project's tag characters (documents/tags.py); normalise_tag decides what is a tag.
_TAG_RUN_RE = re.compile(r"#([\w\-/]+)")

# Inline markup is parsed while a document's blocks stay within INLINE_BUDGET units of work, a
# character being one and a `[` BRACKET_WORK more; blocks past that show their text as it is.
# markdown-it is linear, but a bracket costs it ~20 times a letter (50,000 `[` take about a second)
# and a document may be megabytes (docs/documents.md#bounded-parsing).
INLINE_BUDGET = 1_000_000
BRACKET_WORK = 20
PLAIN = "ragdown_plain"


# --- inline rules: wikilinks, embeds and tags (parse time, so code spans and blocks never see them) ------


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """`[[Target]]`, `[[Target|label]]`, `[[Target#Heading]]`, `[[#Heading]]` and `![[embed]]`."""
    if state.src[state.pos] not in "![" or state.linkLevel > 0:
        return False  # a link inside a link's text would nest <a> in <a>
    match = WIKILINK_RE.match(state.src, state.pos)
    if match is None or match.end() > state.posMax:
        return False
    inner = match.group(1)
    written, bar, alias = inner.partition("|")
    written = written.strip()
    if not written:
        return False
    if not silent:
        token = state.push("ragdown_wikilink", "", 0)
        token.content = alias.strip() if bar and alias.strip() else written
        embed = match.group(0).startswith("!")
        token.meta = _resolve_wikilink(context_of(state.env), written, inner, embed)
    state.pos = match.end()
    return True


def _resolve_wikilink(context: Context, written: str, inner: str, embed: bool) -> dict[str, str]:
    """What the link becomes: {"kind": doc|file|image|missing, "path": …, "anchor": …, "embed": …}."""
    meta = {"embed": "1"} if embed else {}
    if embed:
        # The attachment look-up takes the target the project's parser reads (before `#` and `|`).
        target = parse_wikilink(inner).target
        path = context.attachment(target) if target else None
        if path and is_image(path):
            return {**meta, "kind": "image", "path": path, "alt": written}
    else:
        path = None
    resolved = context.resolve(written)
    if resolved is not None and is_markdown(resolved[0]):
        return {**meta, "kind": "doc", "path": resolved[0], "anchor": resolved[1] or ""}
    found = path or (resolved[0] if resolved else None)
    if found:
        return {**meta, "kind": "file", "path": found}
    return {**meta, "kind": "missing"}


def _tag_rule(state: StateInline, silent: bool) -> bool:
    """`#tag` at the start of the text or after whitespace, as documents/tags.py finds inline tags."""
    pos = state.pos
    if state.src[pos] != "#" or state.linkLevel > 0 or (pos > 0 and not state.src[pos - 1].isspace()):
        return False
    match = _TAG_RUN_RE.match(state.src, pos)
    if match is None or match.end() > state.posMax:
        return False
    tag = normalise_tag(match.group(1))
    if tag is None:
        return False  # `#2024`, `#/`: not tags, left as text
    if not silent:
        token = state.push("ragdown_tag", "", 0)
        token.content = match.group(0)
        token.meta = {"tag": tag}
    state.pos = match.end()
    return True


# --- core rules: heading attributes, ids and lines, links and images --------------------------------------


def _heading_attributes(state: StateCore) -> None:
    """Drop a trailing `{ #id }` attribute block from headings before inline parsing, so it is neither
    shown nor read as a tag; its id becomes the heading's."""
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        inline = tokens[index + 1]
        text, words = split_attributes(inline.content)
        if not words:
            continue  # `# Use {braces}` is text
        inline.content = text
        ids = [word[1:] for word in words if word.startswith("#")]
        if ids:
            token.meta["custom_id"] = ids[-1]


def _inline_budget(state: StateCore) -> None:
    """Blocks past the document's INLINE_BUDGET of work keep their text, unparsed: a `ragdown_plain` token
    holding one text child (for a heading's plain text), rendered escaped."""
    left = INLINE_BUDGET
    for token in state.tokens:
        if token.type != "inline":
            continue
        cost = len(token.content) + BRACKET_WORK * token.content.count("[")
        if cost <= left:
            left -= cost
            continue
        left = 0
        token.type = PLAIN
        token.hidden = True  # as an inline token, no line break after the tag that opens it
        text = Token("text", "", 0)
        text.content = token.content
        token.children = [text]


def _render_plain(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: MutableMapping[str, Any]
) -> str:
    return escapeHtml(tokens[idx].content)


def _finish(state: StateCore) -> None:
    """Heading ids and the headings list, `data-line` on top-level blocks, links and images resolved."""
    context = context_of(state.env)
    slugs = Slugs()
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.level == 0 and token.map is not None and token.nesting >= 0 and token.type != "inline":
            token.attrSet("data-line", str(token.map[0] + 1))
        if token.type == "heading_open" and token.map is not None:
            text = plain_text(tokens[index + 1].children)
            slug = slugs.unique(slugify(token.meta.get("custom_id") or text) or "section")
            token.attrSet("id", slug)
            token.attrSet("data-line", str(token.map[0] + 1))
            context.headings.append(Heading(int(token.tag[1]), text, slug, token.map[0] + 1))
        elif token.type == "inline" and token.children:
            _rewrite_inline(token.children, context)


class Slugs:
    """GitHub's rule for repeats: `a`, `a-1`, `a-2`, skipping any already taken. Each slug's search
    resumes where its last one stopped (what it passed stays taken), so a document of N equal
    headings costs N steps, not N²/2. `tried` counts the candidates looked at."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.next: dict[str, int] = {}
        self.tried = 0

    def unique(self, slug: str) -> str:
        count = self.next.get(slug, 0)
        candidate = f"{slug}-{count}" if count else slug
        while candidate in self.taken:
            self.tried += 1
            count += 1
            candidate = f"{slug}-{count}"
        self.tried += 1
        self.next[slug] = count + 1
        self.taken.add(candidate)
        return candidate


def _rewrite_inline(children: list[Token], context: Context) -> None:
    opened: list[Token] = []
    for token in children:
        if token.type == "link_open":
            _rewrite_link(token, context)
            opened.append(token)
        elif token.type == "link_close" and opened:
            token.tag = opened.pop().tag  # an `<a>` turned into `<span>` closes as one
        elif token.type == "image":
            token.meta = {**token.meta, **_resolve_image(token, context, inside_link=bool(opened))}


def _rewrite_link(token: Token, context: Context) -> None:
    """A Markdown link or autolink: external, in-page, into the folder, or shown as text."""
    href = str(token.attrGet("href") or "")
    title = token.attrGet("title")
    kept = {"title": str(title)} if title else {}
    if REMOTE_RE.match(href):
        token.attrs = {"href": href, "target": "_blank", **kept}
    elif href[:7].lower() == "mailto:" or href.startswith("#"):
        token.attrs = {"href": href, **kept}
    elif is_relative(href):
        path, _, anchor = href.partition("#")
        found = context.attachment(unquote(path))
        if found and is_markdown(found):
            token.attrs = {"href": doc_href(found, unquote(anchor) or None), **kept}
        elif found:
            token.attrs = {"class": "attachment", "data-file": found, **kept}
        else:
            token.tag, token.attrs = "span", {"class": "missing", "title": MISSING_FILE}
    else:
        # Any other scheme, `/…` and `//host/…`: the text stays, the url goes (javascript:, data:, file:).
        token.tag, token.attrs = "span", {"class": "missing", "title": LINK_NOT_SHOWN}


def _resolve_image(token: Token, context: Context, inside_link: bool) -> dict[str, str]:
    src = str(token.attrGet("src") or "")
    if REMOTE_RE.match(src):
        # Never loaded: the UI works offline and a remote image would tell its host who reads what.
        return {"kind": "text" if inside_link else "remote", "path": src}
    if is_relative(src):
        found = context.attachment(unquote(src.partition("#")[0]))
        if found and is_image(found):
            return {"kind": "image", "path": found}
        if found and not inside_link:
            return {"kind": "file", "path": found}
    return {"kind": "missing"}


# --- the parser, built once -----------------------------------------------------------------------------


class _Markdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        """Every url passes: markdown-it's own check leaves a refused `[x](javascript:…)` in the text, url
        and all, while `_rewrite_link` and `_resolve_image` keep only the text of what they refuse."""
        return True


def _build() -> MarkdownIt:
    # html off: raw HTML in a document is shown as text, never parsed as HTML.
    md = _Markdown("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.use(tasklists_plugin).use(footnote_plugin).use(deflist_plugin)
    md.inline.ruler.before("link", "ragdown_wikilink", _wikilink_rule)
    md.inline.ruler.before("link", "ragdown_tag", _tag_rule)
    md.core.ruler.before("inline", "ragdown_heading_attributes", _heading_attributes)
    md.core.ruler.before("inline", "ragdown_inline_budget", _inline_budget)
    md.core.ruler.push("ragdown_finish", _finish)
    md.add_render_rule("ragdown_wikilink", render_wikilink)
    md.add_render_rule("ragdown_tag", render_tag)
    md.add_render_rule(PLAIN, _render_plain)
    md.add_render_rule("image", render_image)
    md.add_render_rule("fence", render_fence)
    md.add_render_rule("code_block", render_fence)
    return md


_MD = _build()


# --- the entry point ------------------------------------------------------------------------------------


def _body_only(text: str) -> str:
    """The text with its front matter (by docs/documents.md#front-matter's rule) blanked line for line,
    so markdown-it's line numbers are the file's."""
    lines = split_lines(text)
    front = read_front_matter(lines)
    lines[: front.body_start] = [""] * front.body_start
    return "\n".join(lines)


def render_markdown(text: str, *, folder: str, resolve: Resolver, attachment: Attachment) -> Rendered:
    """`text` (a whole document, front matter included) as sanitized HTML and its headings.

    `folder` is the folder's name for tag links; `resolve` and `attachment` look links up in it.
    """
    context = Context(folder, resolve, attachment)
    html = _MD.render(_body_only(text), {ENV_KEY: context})
    return Rendered(sanitize(html), context.headings)
