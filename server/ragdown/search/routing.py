"""Identifier routing (docs/search.md#identifier-routing): a query that names something is fused by score, not
by rank.

Every rule is one small predicate over a token, so the routed / not-routed tables pin each one.
"""

from __future__ import annotations

import re

_LEADING = "([\"'<{"
_TRAILING = ")]}>\"',;:!?."

_SNAKE = re.compile(r"^[A-Za-z0-9]+(_[A-Za-z0-9]+)+$")
_DOTTED = re.compile(r"^[A-Za-z0-9_~-]+(\.[A-Za-z0-9_-]+)+/?$")
_FLAG = re.compile(r"^--?[A-Za-z][A-Za-z0-9-]*(=\S+)?$")
_CAMEL = re.compile(r"^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$|^[A-Z][a-z0-9]+([A-Z][a-z0-9]*)+$")
_ALNUM = re.compile(r"^[A-Za-z0-9]+$")
_NOT_MIXED = re.compile(r"^\d+(st|nd|rd|th)$|^\d+(am|pm)$|^\d{4}s$")
_PATH_PREFIXES = ("/", "./", "../", "~/")
_BACKTICK_SPAN = re.compile(r"`([^`]+)`")
_QUOTE_SPAN = re.compile(r'"([^"]+)"')


def strip_token(token: str) -> str:
    """Drop wrapping punctuation; a leading `.` stays so `./x` and `.env` survive."""
    return token.lstrip(_LEADING).rstrip(_TRAILING)


def tokens(text: str) -> list[str]:
    return [t for t in (strip_token(raw) for raw in text.split()) if t]


def is_snake_case(token: str) -> bool:
    return bool(_SNAKE.match(token))


def is_dotted_path(token: str) -> bool:
    if not _DOTTED.match(token):
        return False
    segments = token.rstrip("/").split(".")
    return any(len(s) >= 2 and any(c.isalpha() for c in s) for s in segments)


def is_slashed_path(token: str) -> bool:
    prefixed = token.startswith(_PATH_PREFIXES)
    if prefixed and not any(c.isalnum() for c in token):
        return False  # a lone `/` or `../` in prose names nothing
    if not prefixed:
        segments = token.split("/")
        if len(segments) < 2 or not all(segments):
            return False
    return prefixed or token.count("/") >= 2 or any(c in token for c in "._0123456789")


def is_flag(token: str) -> bool:
    return bool(_FLAG.match(token))


def is_camel_case(token: str) -> bool:
    return bool(_CAMEL.match(token))


def is_letters_and_digits(token: str) -> bool:
    return (
        bool(_ALNUM.match(token))
        and any(c.isalpha() for c in token)
        and any(c.isdigit() for c in token)
        and not _NOT_MIXED.match(token.lower())
    )


TOKEN_RULES = (
    is_snake_case,
    is_dotted_path,
    is_slashed_path,
    is_flag,
    is_camel_case,
    is_letters_and_digits,
)


def is_identifier(token: str) -> bool:
    """Rules 2–7 for one already-stripped token."""
    return any(rule(token) for rule in TOKEN_RULES)


def strong_names(query: str) -> list[str]:
    """Rule 1: the trimmed content of each qualifying quote span, in order of appearance.

    A backtick span qualifies with two or more words (a command); a backtick or double-quote span
    also qualifies when it holds an identifier. A lone plain word in backticks does not.
    """
    spans: list[tuple[int, str, bool]] = [
        (m.start(), m.group(1), True) for m in _BACKTICK_SPAN.finditer(query)
    ]
    spans += [(m.start(), m.group(1), False) for m in _QUOTE_SPAN.finditer(query)]
    names: list[str] = []
    for _, content, backtick in sorted(spans):
        name = content.strip()
        if not name or name in names:
            continue
        if (backtick and len(name.split()) >= 2) or any(is_identifier(t) for t in tokens(name)):
            names.append(name)
    return names


def is_routed(query: str) -> bool:
    """True when the query names something (a command, path, flag or code identifier)."""
    return bool(strong_names(query)) or any(is_identifier(t) for t in tokens(query))
