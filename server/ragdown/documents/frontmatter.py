"""Front matter as line rules, deliberately not a YAML parser: keys match at column 0 only."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from ragdown.documents import work
from ragdown.documents.lines import BOM

_CLOSE_RE = re.compile(r"^(---|\.\.\.)\s*$")
_BLOCK_SCALAR_RE = re.compile(r"^[>|][+-]?$")
_UNQUOTE_RE = re.compile(r"^([\"'])(.*)\1$", re.DOTALL)


@dataclass(frozen=True)
class FrontMatter:
    """The lines between the markers, and where the body starts (0-based index into the lines)."""

    front: list[str] = field(default_factory=list)
    body_start: int = 0


def unquote(value: str) -> str:
    """Remove one pair of matching surrounding quotes, if there is one."""
    match = _UNQUOTE_RE.match(value)
    return match.group(2) if match else value


def _trimmed(rest: str) -> str | None:
    """What `\\s*(.+?)\\s*$` takes of `rest`: the text without surrounding whitespace, or the last
    whitespace character when there is nothing else; None for "". Worked out with strip: as a
    regex, the lazy group retries `\\s*$` from every character, quadratic in a run of spaces."""
    work.read(len(rest))
    return rest.strip() or rest[-1:] or None


def _value(line: str, key: str) -> str | None:
    """`key: value` at column 0 (the rule `^key:\\s*(.+?)\\s*$`): the value, trimmed."""
    return _trimmed(line[len(key) + 1 :]) if line.startswith(f"{key}:") else None


def _block_item(line: str) -> str | None:
    """`  - value` (the rule `^\\s*-\\s*(.+?)\\s*$`): the value, trimmed."""
    item = line.lstrip()
    return _trimmed(item[1:]) if item.startswith("-") else None


def read_front_matter(lines: list[str]) -> FrontMatter:
    # The BOM check is for callers that split the text themselves (writes): split_lines drops it.
    if not lines or lines[0].removeprefix(BOM).strip() != "---":
        return FrontMatter()
    for i in range(1, len(lines)):
        if _CLOSE_RE.match(lines[i]):
            return FrontMatter(front=lines[1:i], body_start=i + 1)
    return FrontMatter()


def read_title(front: list[str]) -> str | None:
    """The last `title:` line wins."""
    title: str | None = None
    for line in front:
        value = _value(line, "title")
        if value is not None:
            title = unquote(value)
    return title


@cache
def _key_re(key: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(key)}:\s*(.*)$")


def read_list(front: list[str], key: str, split: re.Pattern[str] | None = None) -> list[str]:
    """`key: [a, "b"]`, a block of `- a` lines, or a scalar (one item unless `split` cuts it)."""
    out: list[str] = []
    pattern = _key_re(key)
    i = 0
    while i < len(front):
        work.read(len(front[i]))
        match = pattern.match(front[i])
        if match:
            inline = match.group(1).strip()
            if inline.startswith("["):
                body = re.sub(r"]\s*$", "", inline[1:])
                out.extend(v for v in (unquote(item.strip()) for item in body.split(",")) if v)
            elif inline:
                value = unquote(inline)
                if split is None:
                    out.append(value)
                else:
                    out.extend(v for v in (unquote(p.strip()) for p in split.split(value)) if v)
            else:
                j = i + 1
                while j < len(front):
                    item = _block_item(front[j])
                    if item is None:
                        break
                    out.append(unquote(item))
                    i = j
                    j += 1
        i += 1
    return out


def read_scalar(front: list[str], key: str) -> str:
    """The first `key:` value, unquoted; a block scalar (`>` or `|`) joined into one line; "" if absent."""
    for i, line in enumerate(front):
        value = _value(line, key)
        if value is None:
            continue
        if not _BLOCK_SCALAR_RE.match(value):
            return unquote(value)
        block: list[str] = []
        for following in front[i + 1 :]:
            if following.strip() and not following[:1].isspace():
                break
            block.append(following.strip())
        return " ".join(part for part in block if part)
    return ""
