"""docs/documents.md#wikilink-resolution resolving links within one folder, docs/documents.md#backlinks
backlinks over given texts. Finding them in a text is `link_finder.py`'s.

Paths here are relative to the folder links resolve in, with `/` separators. Nothing reads files:
the caller hands over the folder's document paths, aliases, attachments and texts.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from ragdown.documents.lines import split_lines
from ragdown.documents.link_finder import Link, is_external_url

# Exported: backlinks looks it up here, so a test may count its calls.
from ragdown.documents.link_finder import find_links as find_links
from ragdown.documents.paths import MARKDOWN_RE

BACKLINK_TEXT_MAX = 240

_MALFORMED_ESCAPE_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_LEADING_SELF_RE = re.compile(r"^(?:\./|/)+")


@dataclass(frozen=True)
class WikiTarget:
    """A parsed wikilink: the normalised target ("" for the linking document) and its heading."""

    target: str
    anchor: str | None = None


@dataclass(frozen=True)
class Resolved:
    """Where a wikilink points: a document or attachment path, and the heading it names."""

    path: str
    anchor: str | None = None


@dataclass(frozen=True)
class BacklinkLine:
    line: int
    text: str


@dataclass(frozen=True)
class Backlink:
    """A document linking to the target: the lines its links are on, ascending and distinct."""

    path: str
    lines: tuple[BacklinkLine, ...]


# --- parsing and normalising (docs/documents.md#wikilink-resolution) ----------------------------------------


def parse_wikilink(raw: str) -> WikiTarget:
    """The target and heading of `[[Note]]`, `![[Note#Heading|shown]]` or a bare `Note#Heading`."""
    text = raw.strip().removeprefix("!")
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    target, _, anchor = text.split("|", 1)[0].partition("#")
    anchor = anchor.strip()
    # A block reference (`#^id`) names no heading, so the link reads the whole document.
    kept = anchor if anchor and not anchor.startswith("^") else None
    return WikiTarget(normalise_target(target.strip()), kept)


def normalise_target(target: str) -> str:
    """`/`-separated, URL-decoded when well-formed, normalised, without a leading `./` or `/`."""
    text = _posix_normalise(_url_decode(target.replace("\\", "/")))
    text = _LEADING_SELF_RE.sub("", text)
    return "" if text == "." else text


def _url_decode(text: str) -> str:
    """All escapes decoded, or none: a stray `%` (or invalid UTF-8) means a `%` in a name."""
    if "%" not in text or _MALFORMED_ESCAPE_RE.search(text):
        return text
    try:
        return unquote_to_bytes(text).decode("utf-8")
    except UnicodeError:
        return text


def _posix_normalise(path: str) -> str:
    """posixpath.normpath, keeping a trailing `/`: `notes/` names a directory, not `notes.md`."""
    normal = posixpath.normpath(path)
    if path.endswith("/") and not normal.endswith("/"):
        normal += "/"
    return normal


def _dirname(path: str) -> str:
    return posixpath.dirname(path) or "."


# --- resolution (docs/documents.md#wikilink-resolution) -----------------------------------------------------


class LinkIndex:
    """One folder's documents (with their aliases) and, when enabled, its attachments, indexed so
    each link resolves without scanning every path.
    """

    __slots__ = ("_by_alias", "_by_lower", "_by_name", "_files", "attachments", "documents")

    def __init__(
        self,
        documents: Iterable[str],
        aliases: Mapping[str, Iterable[str]] | None = None,
        attachments: Iterable[str] = (),
    ) -> None:
        self.documents: tuple[str, ...] = tuple(dict.fromkeys(documents))
        self.attachments: tuple[str, ...] = tuple(dict.fromkeys(attachments))
        self._files = frozenset(self.documents) | frozenset(self.attachments)
        self._by_lower = _table((path.lower(), path) for path in self._files)
        # A document answers to its name with or without the extension; an attachment only with it.
        self._by_name = _table(
            [
                *((name, path) for path in self.documents for name in _document_names(path)),
                *((name, path) for path in self.attachments for name in _trailing_runs(path)),
            ]
        )
        known = frozenset(self.documents)
        self._by_alias = _table(
            (alias.lower(), path)
            for path, names in (aliases or {}).items()
            if path in known
            for alias in names
        )

    @classmethod
    def of_folder(cls, aliases: Mapping[str, Iterable[str]], prefix: str) -> LinkIndex:
        """The documents under `prefix` (a folder's path ending in `/`, or "" for all of them) with
        their aliases, by paths relative to it: links resolve within their folder."""
        inside = {path[len(prefix) :]: names for path, names in aliases.items() if path.startswith(prefix)}
        return cls(inside, inside)

    def lookup(self, target: str, from_path: str | None = None) -> str | None:
        """The path a normalised, non-empty wikilink target names: exact path, then name, then alias."""
        from_dir = _dirname(from_path) if from_path else "."
        return (
            self._exact(target, from_dir)
            or _pick(self._by_name.get(target.lower(), ()), from_dir)
            or _pick(self._by_alias.get(target.lower(), ()), from_dir)
        )

    def has(self, path: str) -> bool:
        """Whether `path` is, case-sensitively, a document or attachment of the index."""
        return path in self._files

    def _exact(self, target: str, from_dir: str) -> str | None:
        wanted = [target]
        if from_dir != ".":
            wanted.append(_posix_normalise(f"{from_dir}/{target}"))
        candidates = [path for want in wanted for path in _with_markdown(want)]
        for candidate in candidates:
            if candidate in self._files:
                return candidate
        for candidate in candidates:
            # Two files differing only in case is possible on a case-sensitive disk.
            found = _pick(self._by_lower.get(candidate.lower(), ()), from_dir)
            if found:
                return found
        return None


def _table(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for key, path in pairs:
        table.setdefault(key, []).append(path)
    return table


def _document_names(path: str) -> set[str]:
    return {*_trailing_runs(MARKDOWN_RE.sub("", path)), *_trailing_runs(path)}


def _trailing_runs(path: str) -> list[str]:
    """Lowercased `c`, `b/c`, `a/b/c` for `a/b/c`: what a target equals or ends with after a `/`."""
    segments = path.lower().split("/")
    return ["/".join(segments[i:]) for i in range(len(segments))]


def _with_markdown(path: str) -> tuple[str, ...]:
    return (path,) if MARKDOWN_RE.search(path) else (path, f"{path}.md")


def _pick(paths: Sequence[str], from_dir: str) -> str | None:
    """Beside the linking document first, then the shortest, then the first alphabetically."""
    if not paths:
        return None
    return min(set(paths), key=lambda path: (_dirname(path) != from_dir, len(path), path.lower(), path))


def resolve_wikilink(index: LinkIndex, raw: str, from_path: str | None = None) -> Resolved | None:
    """Where a wikilink (`[[…]]`, `![[…]]` or its inside) points from `from_path`, or None."""
    parsed = parse_wikilink(raw)
    if not parsed.target:
        return Resolved(from_path, parsed.anchor) if from_path else None
    path = index.lookup(parsed.target, from_path)
    return Resolved(path, parsed.anchor) if path else None


def resolve_markdown_link(index: LinkIndex, url: str, from_path: str) -> str | None:
    """The existing document or attachment a Markdown link's url names relative to `from_path`.

    Never by name, and never outside the folder.
    """
    if is_external_url(url):
        return None
    target = normalise_target(url.split("#", 1)[0])
    joined = _posix_normalise(posixpath.join(_dirname(from_path), target))
    path = _LEADING_SELF_RE.sub("", joined)
    if path in ("", ".", "..") or path.startswith("../"):
        return None
    return path if index.has(path) else None


def resolve_link(index: LinkIndex, link: Link, from_path: str) -> str | None:
    """Where a link found in the document `from_path` points: the path only."""
    if link.kind == "wiki":
        resolved = resolve_wikilink(index, link.raw, from_path)
        return resolved.path if resolved else None
    return resolve_markdown_link(index, link.raw, from_path)


# --- backlinks (docs/documents.md#backlinks) ----------------------------------------------------------------


def backlinks(target_path: str, sources: Mapping[str, str], index: LinkIndex) -> list[Backlink]:
    """The sources linking to `target_path` (by wikilink, alias or relative Markdown link), by path.

    `sources` maps each candidate document to its text; the caller checks that the target is an
    indexed document and limits the sources to the scope. The target's links to itself never count.
    """
    found: list[Backlink] = []
    for path in sorted(sources):
        text = sources[path]
        # Most documents link to nothing at all: skip them before parsing.
        if path == target_path or ("[[" not in text and "](" not in text):
            continue
        numbers = sorted(
            {link.line for link in find_links(text) if resolve_link(index, link, path) == target_path}
        )
        if numbers:
            lines = split_lines(text)
            quoted = tuple(BacklinkLine(n, clip(lines[n - 1].strip(), BACKLINK_TEXT_MAX)) for n in numbers)
            found.append(Backlink(path, quoted))
    return found


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the last of them `…` when anything was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
