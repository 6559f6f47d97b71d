"""The path rule (docs/security.md): what a path from outside may name, checked before any file opens.

`check_path` is the lexical half, and the only way a caller's path becomes parts to open: relative,
inside the scope after normalisation, no dot-part (nor a look-alike of one), no `node_modules`, UTF-8,
no control character, each name at most 255 bytes and the whole at most 1,024. The physical half —
no symlink at any level, folders that are real folders — is `documents/files.py`, which opens every
part one directory at a time. Together they are the one rule for every read and write.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import dataclass

from ragdown.errors import BadRequestError, ConfigError, Refusal

MARKDOWN_RE = re.compile(r"\.(md|markdown|mdx)$", re.IGNORECASE)
DRIVE_RE = re.compile(r"^[a-z]:", re.IGNORECASE)

# Linux's NAME_MAX, and bounds well under PATH_MAX that no real folder of notes comes near. The
# depth bound also keeps every walk of the tree shallow enough to finish (files.walk_files).
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 1024
MAX_DEPTH = 64
# How much of a refused path a message repeats: enough to recognise it, never a wall of text.
SHOWN_CHARS = 120

RELATIVE_ONLY = "path must be relative to the docs folder"
OUTSIDE = "path is outside the docs folder"
SKIPPED = "path names a folder or file the index skips"
MARKDOWN_ONLY = "only Markdown files (.md, .markdown, .mdx) can be written"
NOT_A_FOLDER = "a folder on the path is a file or a symlink"
CONTROL = "path contains a control character"
NOT_UTF8 = "path is not UTF-8"
LOOK_ALIKE = "path names a look-alike of a dot or a slash"
TOO_LONG = "path is too long"
TOO_DEEP = "path is too deep"

# Characters that reorder or break what a person reads: a name holding one could forge a line of a
# listing or hide its real extension.
# Controls, line and paragraph separators, and lone surrogates (no text at all, and no name a disk
# can hold).
_CONTROL_CATEGORIES = ("Cc", "Zl", "Zp", "Cs")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def is_skipped_entry(name: str) -> bool:
    """A directory entry the indexer passes over."""
    return name.startswith(".") or name == "node_modules"


def is_indexed_name(name: str) -> bool:
    """One path segment the indexer walks into: not skipped, and no separator or NUL in it."""
    return not is_skipped_entry(name) and not any(c in name for c in "/\\\0")


def is_utf8(text: str) -> bool:
    """`text` holds no lone surrogate. A name read from disk holds one for each byte that is not UTF-8
    (Python's surrogateescape): such a name can be opened, but never stored in the index, sent as
    JSON nor named by a client (docs/security.md#tenants)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_markdown(name: str) -> bool:
    return MARKDOWN_RE.search(name) is not None


def is_inside(parent: str, child: str) -> bool:
    """`child` is `parent` or below it; both absolute and normalised."""
    return child == parent or child.startswith(parent if parent.endswith("/") else parent + "/")


def _is_control(char: str) -> bool:
    return char in _BIDI or unicodedata.category(char) in _CONTROL_CATEGORIES


def control_character(text: str) -> str | None:
    """The first character of `text` that is a control, line or paragraph separator, bidi mark or
    lone surrogate."""
    return next((char for char in text if _is_control(char)), None)


def _escaped(char: str) -> str:
    if "\udc80" <= char <= "\udcff":
        return f"\\x{ord(char) - 0xDC00:02x}"  # a byte of a name that is not UTF-8, as the byte
    if char in _BIDI or unicodedata.category(char) in _CONTROL_CATEGORIES:
        return f"\\u{ord(char):04x}"
    return char


def escaped(path: str) -> str:
    """`path` with control characters escaped (a byte of a name that is not UTF-8 as `\\xff`): always
    UTF-8 text, on one line."""
    return "".join(_escaped(c) for c in path)


def shown(path: str) -> str:
    """`path` as a message may repeat it: `escaped`, at most SHOWN_CHARS kept."""
    escaped_path = escaped(path)
    if len(escaped_path) <= SHOWN_CHARS:
        return escaped_path
    return f"{escaped_path[:SHOWN_CHARS]}… ({len(path):,} characters)"


def _looks_like_dot_or_slash(name: str) -> bool:
    """A name that compatibility normalisation turns into a dot-part or a separator (`．．`, `／`):
    harmless on this disk, but not on every tool that later handles the name."""
    folded = unicodedata.normalize("NFKC", name)
    return folded != name and (folded.startswith(".") or "/" in folded or "\\" in folded)


@dataclass(frozen=True)
class DocPath:
    """A path that passed the lexical rule: normalised parts, and them joined with `/`."""

    parts: tuple[str, ...]

    @property
    def relative(self) -> str:
        return "/".join(self.parts)

    @property
    def name(self) -> str:
        return self.parts[-1]


def check_path(relative: str, *, markdown_only: bool) -> DocPath:
    """The lexical rule for a scope-relative path from outside; a refusal is 400 `<reason>: <path>`."""

    def invalid(reason: str, detail: str = "") -> Refusal:
        return BadRequestError(f"{reason}{detail}: {shown(relative)}")

    if not isinstance(relative, str):
        raise BadRequestError("path must be a string")
    size = len(relative.encode("utf-8", "surrogatepass"))
    if size > MAX_PATH_BYTES:
        raise invalid(TOO_LONG, f" ({size:,} bytes; at most {MAX_PATH_BYTES:,})")
    if not is_utf8(relative):  # a lone surrogate: read from a disk name, or sent as a JSON `\udcff`
        raise invalid(NOT_UTF8, "; rename the file to a UTF-8 name")
    char = control_character(relative)
    if char == "\0":
        raise invalid(SKIPPED)  # the spec's wording for a NUL (docs/documents.md#the-path-rule)
    if char is not None:
        raise invalid(CONTROL, f" (U+{ord(char):04X}); names are plain text")
    posix = relative.replace("\\", "/")
    if not posix or posix.startswith("/") or DRIVE_RE.match(posix):
        raise invalid(RELATIVE_ONLY)
    parts = tuple(s for s in posixpath.normpath(posix).split("/") if s and s != ".")
    if not parts or ".." in parts:
        raise invalid(OUTSIDE)
    if not all(is_indexed_name(s) for s in parts):
        raise invalid(SKIPPED)
    if any(_looks_like_dot_or_slash(s) for s in parts):
        raise invalid(LOOK_ALIKE)
    if len(parts) > MAX_DEPTH:
        raise invalid(TOO_DEEP, f" ({len(parts)} names; at most {MAX_DEPTH})")
    longest = max(len(s.encode("utf-8", "surrogatepass")) for s in parts)
    if longest > MAX_NAME_BYTES:
        raise invalid(TOO_LONG, f" (a name of {longest:,} bytes; at most {MAX_NAME_BYTES})")
    if markdown_only and not is_markdown(parts[-1]):
        raise invalid(MARKDOWN_ONLY)
    return DocPath(parts)


def notes_dir(value: str) -> str:
    """RAGDOWN_NOTES_DIR normalised (docs/design.md#configuration): `/`-separated, "" for the folder root.

    Raises ConfigError for a path that leaves the folder or names a folder the index skips: a note
    written there would never be found.
    """
    normalised = posixpath.normpath(value.replace("\\", "/"))
    if normalised.startswith("/") or normalised == ".." or normalised.startswith("../"):
        raise ConfigError(f"RAGDOWN_NOTES_DIR must be a path inside the folder: {normalised}")
    if normalised == ".":
        return ""
    if not all(is_indexed_name(segment) for segment in normalised.split("/")):
        raise ConfigError(f"RAGDOWN_NOTES_DIR names a folder the index skips: {normalised}")
    if control_character(normalised) is not None:
        raise ConfigError(f"RAGDOWN_NOTES_DIR contains a control character: {shown(normalised)}")
    return normalised
