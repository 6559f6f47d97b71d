"""The one allow-list every rendered document goes through (docs/web.md#rendering lists it): the
sanitizer, not the renderer, is the security boundary."""

from __future__ import annotations

import nh3

_BLOCK = {"data-line"}
ALLOWED_TAGS = frozenset(
    {"h1", "h2", "h3", "h4", "h5", "h6", "p", "a", "img", "code", "pre", "blockquote", "hr", "br"}
    | {"em", "strong", "del", "s", "sup", "span", "section", "ul", "ol", "li", "input", "dl", "dt", "dd"}
    | {"table", "thead", "tbody", "tr", "th", "td"}
)
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    **{f"h{level}": {"id", "data-line"} for level in range(1, 7)},
    **{tag: set(_BLOCK) for tag in ("p", "ul", "pre", "table", "blockquote", "hr", "dl")},
    "ol": {"data-line", "start"},
    "li": {"id"},  # footnote items, the targets of the footnote references
    "a": {"href", "title", "id", "data-file"},
    "img": {"alt", "title", "data-src"},
    "code": {"class"},  # language-xxx, open-ended
    "th": {"style"},
    "td": {"style"},
    "span": {"title"},
}
# Every other class is dropped; `code`'s language class is the one open-ended value.
ALLOWED_CLASSES: dict[str, set[str]] = {
    "a": {"wikilink", "missing", "embed-note", "embed-file", "attachment", "tag", "footnote-backref"},
    "img": {"embed"},
    "span": {"missing"},
    "ul": {"contains-task-list"},
    "li": {"task-list-item", "footnote-item"},
    "input": {"task-list-item-checkbox"},
    "sup": {"footnote-ref"},
    "section": {"footnotes"},
    "ol": {"footnotes-list"},
    "hr": {"footnotes-sep"},
}
ALLOWED_VALUES: dict[str, dict[str, set[str]]] = {
    "a": {"target": {"_blank"}},
    "input": {"type": {"checkbox"}, "checked": {"checked", ""}, "disabled": {"disabled", ""}},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})


def _relative_url(url: str) -> str | None:
    """A relative URL survives only as a fragment: `#fn1`, `#/doc/…`, `#/search/…`."""
    return url if url.startswith("#") else None


# Every id the document carries, and every in-page link to one, starts with this, so a heading
# `## Dialog` or a footnote can never take an id of the page around it (docs/web.md#rendering).
ID_PREFIX = "user-content-"


def _prefixed(tag: str, attribute: str, value: str) -> str:
    """The sanitizer's last word on each kept attribute: ids and in-page fragments get the prefix."""
    if attribute == "id":
        return ID_PREFIX + value
    if attribute == "href" and value.startswith("#") and not value.startswith("#/"):
        return "#" + ID_PREFIX + value[1:]
    return value


_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags={"script", "style"},
    attributes=ALLOWED_ATTRIBUTES,
    link_rel="noopener noreferrer",
    tag_attribute_values=ALLOWED_VALUES,
    set_tag_attribute_values={"input": {"disabled": "disabled"}},  # a checkbox is never editable here
    url_schemes=set(URL_SCHEMES),
    allowed_classes=ALLOWED_CLASSES,
    filter_style_properties={"text-align"},  # table column alignment only
    url_relative=_relative_url,
    attribute_filter=_prefixed,
)


def sanitize(html: str) -> str:
    """`html` with only what the allow-list keeps."""
    return str(_CLEANER.clean(html))
