"""What rendering a document shares between parsing and writing HTML (docs/web.md#rendering): the
per-document context carried in markdown-it's `env`, the small rules about links, and the HTML each
of ragdown's own tokens (wikilinks, tags, images, fences) becomes. `render.py` puts them together."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from markdown_it.common.utils import escapeHtml, unescapeAll
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import OptionsDict

from ragdown.documents.paths import MARKDOWN_RE


@dataclass(frozen=True)
class Heading:
    level: int  # 1-6
    text: str  # plain text, markup dropped
    id: str  # slug, unique within the document; the element's id is ID_PREFIX + slug
    line: int  # 1-based line in the original text, front matter counted


# A wikilink target as written ("Note#Heading", "sub/Note", "#Heading") -> (document path including
# the folder, heading or None), or None when it names nothing.
Resolver = Callable[[str], tuple[str, str | None] | None]
# A relative path or embed target as written -> the attachment's path including the folder, or None
# when it is no file of the folder.
Attachment = Callable[[str], str | None]

IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "webp", "svg", "avif", "bmp"})

ENV_KEY = "ragdown"
REMOTE_RE = re.compile(r"^https?://", re.IGNORECASE)
_SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
# GitHub's slugs: lowercase, punctuation dropped (letters, digits, `_`, `-` and spaces stay).
_SLUG_DROP_RE = re.compile(r"[^\w\- ]")
_WHITESPACE_RE = re.compile(r"\s+")

MISSING_DOCUMENT = "no document by that name"
MISSING_FILE = "no such file in the folder"
LINK_NOT_SHOWN = "link not shown: only http, https, mailto and in-folder links are"


# --- the per-document context ---------------------------------------------------------------------------


@dataclass
class Context:
    folder: str
    resolve: Resolver
    attachment: Attachment
    headings: list[Heading] = field(default_factory=list)


def context_of(env: MutableMapping[str, Any]) -> Context:
    context = env[ENV_KEY]
    assert isinstance(context, Context)
    return context


# --- small rules ----------------------------------------------------------------------------------------


def slugify(text: str) -> str:
    """GitHub's heading slug: `Backup & Restore!` -> `backup--restore`."""
    return _SLUG_DROP_RE.sub("", text.strip().lower()).replace(" ", "-")


def is_markdown(path: str) -> bool:
    return MARKDOWN_RE.search(path) is not None


def is_image(path: str) -> bool:
    return posixpath.splitext(path)[1][1:].lower() in IMAGE_EXTENSIONS


def is_relative(url: str) -> bool:
    """A path into the folder: no scheme, no `#…`, no `/…` (nor `//host`)."""
    return bool(url) and not _SCHEME_RE.match(url) and not url.startswith(("#", "/", "\\"))


def doc_href(path: str, anchor: str | None) -> str:
    """The UI's hash route to a document, `#/doc/ops/a.md#restore`; encoded, since a name may hold `#`."""
    href = "#/doc/" + quote(path, safe="/")
    slug = slugify(anchor) if anchor else ""
    return href + "#" + quote(slug) if slug else href


def tag_href(folder: str, tag: str) -> str:
    return f"#/search/{quote(folder, safe='')}?tag={quote(tag, safe='/')}"


def plain_text(tokens: Sequence[Token] | None) -> str:
    """Inline tokens as the reader sees them, markup dropped: a heading's text, an image's alt."""
    out: list[str] = []
    for token in tokens or ():
        if token.type in ("text", "text_special", "code_inline", "ragdown_wikilink", "ragdown_tag"):
            out.append(token.content)
        elif token.type == "image":
            out.append(plain_text(token.children))
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return _WHITESPACE_RE.sub(" ", "".join(out)).strip()


def html_attrs(pairs: dict[str, str]) -> str:
    return "".join(f' {name}="{escapeHtml(value)}"' for name, value in pairs.items())


# --- render rules ---------------------------------------------------------------------------------------


def render_wikilink(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: MutableMapping[str, Any]
) -> str:
    token = tokens[idx]
    meta, label = token.meta, escapeHtml(token.content)
    kind, embed = meta["kind"], bool(meta.get("embed"))
    if kind == "image":
        # data-src, never src: the UI fetches the file through the authenticated API.
        return f"<img{html_attrs({'class': 'embed', 'data-src': meta['path'], 'alt': meta['alt']})}>"
    if kind == "doc":
        href = doc_href(meta["path"], meta["anchor"] or None)
        if embed:
            return f"<a{html_attrs({'class': 'embed-note', 'href': href})}>↪ {label}</a>"
        return f"<a{html_attrs({'class': 'wikilink', 'href': href})}>{label}</a>"
    if kind == "file":
        css = "embed-file attachment" if embed else "wikilink attachment"
        return f"<a{html_attrs({'class': css, 'data-file': meta['path']})}>{label}</a>"
    if embed:
        return f"<span{html_attrs({'class': 'missing', 'title': MISSING_FILE})}>{label}</span>"
    return f"<a{html_attrs({'class': 'wikilink missing', 'title': MISSING_DOCUMENT})}>{label}</a>"


def render_tag(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: MutableMapping[str, Any]
) -> str:
    token = tokens[idx]
    href = tag_href(context_of(env).folder, token.meta["tag"])
    return f"<a{html_attrs({'class': 'tag', 'href': href})}>{escapeHtml(token.content)}</a>"


def render_image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: MutableMapping[str, Any]
) -> str:
    token = tokens[idx]
    alt = plain_text(token.children)
    title = token.attrGet("title")
    kept = {"title": str(title)} if title else {}
    kind = token.meta.get("kind", "missing")
    if kind == "image":
        return f"<img{html_attrs({'data-src': token.meta['path'], 'alt': alt, **kept})}>"
    if kind == "remote":
        link = {"href": token.meta["path"], "target": "_blank", **kept}
        return f"<a{html_attrs(link)}>{escapeHtml(alt or token.meta['path'])}</a>"
    if kind == "file":
        return (
            f"<a{html_attrs({'class': 'attachment', 'data-file': token.meta['path']})}>{escapeHtml(alt)}</a>"
        )
    if kind == "text":
        return escapeHtml(alt)
    return f"<span{html_attrs({'class': 'missing', 'title': MISSING_FILE})}>{escapeHtml(alt)}</span>"


def render_fence(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: MutableMapping[str, Any]
) -> str:
    """`<pre data-line><code class="language-xxx">`: the line on the block, the language on the code."""
    token = tokens[idx]
    info = unescapeAll(token.info).strip()
    language = info.split(maxsplit=1)[0] if info else ""
    pre = html_attrs({"data-line": str(token.attrGet("data-line"))}) if token.attrGet("data-line") else ""
    code = html_attrs({"class": "language-" + language}) if language else ""
    return f"<pre{pre}><code{code}>{escapeHtml(token.content)}</code></pre>\n"
