"""Hypothesis strategies for Markdown as people and agents write it, edge cases weighted up.

Random unicode alone almost never makes a heading, a fence or front matter, so documents are built
from lines drawn from the constructs the chunker, the tag scanner and link finding have rules for.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ragdown.documents.text_edits import Edit, to_lf

# Words that mean something to one rule or another, among plain and non-ASCII ones.
_WORDS = st.sampled_from(
    [
        "alpha",
        "Beta",
        "ünïcode",
        "日本語",
        "İstanbul",
        "🙂",
        "x",
        "#tag",
        "#Ops/DB/",
        "#2024",
        "#nested/child/.",
        "a#b",
        "https://x.test/#anchor",
        "`#code`",
        "``a`b``",
        "`",
        "[[Plan#Goals|the plan]]",
        "![[diagram.png]]",
        "[[a|b]]",
        "[[]]",
        "[kafka](../notes/Kafka.md#Setup)",
        '[img](<my file.png> "t")',
        "[web](https://x.test)",
        "[top](#top)",
        "$&",
        "$1",
        "\\1",
        "---",
        "...",
        "#",
        "##",
        "```",
        "~~~",
        "\u00a0",
        "\u3000",
        "\x85",
        "\u2028",
        "\ufeff",
        "\x0b",
        "\t",
    ]
)
# Short, so that one text often holds a passage several times (ambiguous edits, replace_all).
_SHORT = st.text(alphabet="ab s\n\r\t#`~-[]|.", max_size=6)

inline_text = st.lists(st.one_of(_WORDS, st.text(max_size=8)), max_size=8).map(" ".join)
_indent = st.sampled_from(["", "", " ", "  ", "   ", "    ", "\t"])

headings = st.builds(
    lambda indent, hashes, gap, name, closing: f"{indent}{'#' * hashes}{gap}{name}{closing}",
    _indent,
    st.integers(1, 7),
    st.sampled_from([" ", " ", "\t", "", "   "]),
    inline_text,
    st.sampled_from(["", "", " #", " ##", "#", "  "]),
)
fences = st.builds(
    lambda indent, marker, info: f"{indent}{marker}{info}",
    _indent,
    st.sampled_from(["```", "```", "~~~", "````", "~~~~", "``", "`````"]),
    st.sampled_from(["", "", "python", " js", "```", "~~~"]),
)
blank_lines = st.sampled_from(["", "", "", " ", "   ", "\t", "\u3000"])
front_matter_markers = st.sampled_from(["---", "---", "--- ", "...", " ---", "----", "---x"])
front_matter_lines = st.sampled_from(
    [
        "title: Runbook",
        "title: 'Quoted'",
        'title: ""',
        "title:",
        "tags: [Ops, '#infra/db']",
        "tags: one, two three",
        "tags: [unclosed",
        "tags:",
        "  - Nested/Tag/",
        "- '#b'",
        '- ""',
        "aliases: Big, Old Name",
        "aliases:",
        "description: >",
        "description: |-",
        "  folded text",
        "description: one line",
        "created_by: ragdown_write",
        "created_by:",
        "session: ''",
        'session: "s9"',
        "supersedes: old.md, ../ops/old.md, ../../escape.md, /etc/passwd",
        "supersedes: [a\\\\b.md, '']",
    ]
)
# Long enough to be cut into slices at the real chunk sizes (500 and 1500), not only at small ones.
long_lines = st.builds(
    lambda unit, times: unit * times, st.text(min_size=1, max_size=4), st.integers(30, 800)
)
# Long lines of words and sentences: cut at sentence ends (one sentence repeated) or at spaces.
sentence_lines = st.lists(
    st.sampled_from(["Word", "word.", "two", "end!", "ask?", "x", "tab.\tnext", "a" * 30]),
    min_size=10,
    max_size=600,
).map(" ".join)
_line = st.one_of(
    headings,
    fences,
    blank_lines,
    front_matter_markers,
    front_matter_lines,
    inline_text,
    inline_text.map(lambda s: "    " + s),
    st.text(max_size=30),
    long_lines,
)
newlines = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])


@st.composite
def markdown_documents(draw: st.DrawFn, max_lines: int = 40) -> str:
    """Lines joined by mixed line breaks (LF, CRLF, lone CR), with or without a final one."""
    lines = draw(st.lists(_line, max_size=max_lines))
    if draw(st.booleans()):
        # Open with front matter often, so the body-start rules are exercised, closed or not.
        lines = ["---", *draw(st.lists(front_matter_lines, max_size=5)), *lines]
    out = ""
    for number, line in enumerate(lines):
        out += line
        if number < len(lines) - 1 or draw(st.booleans()):
            out += draw(newlines)
    return out


# Markdown-shaped three times in four (one_of picks its branches evenly), else any text at all.
documents = st.one_of(markdown_documents(), markdown_documents(), markdown_documents(), st.text(max_size=200))


@st.composite
def passages(draw: st.DrawFn, text: str) -> str:
    """Text an edit might name: mostly a slice of `text` (often found, sometimes more than once),
    sometimes unrelated text or none; with CRLF line breaks now and then, as Windows clients send."""
    choice = draw(st.integers(0, 19))
    if text and choice >= 5:
        start = draw(st.integers(0, len(text) - 1))
        passage = text[start : draw(st.integers(start + 1, min(len(text), start + 80)))]
    elif choice == 0:
        passage = ""
    else:
        passage = draw(st.one_of(_SHORT.filter(bool), _WORDS, st.text(min_size=1, max_size=10)))
    if draw(st.integers(0, 4)) == 0:
        passage = passage.replace("\n", "\r\n")
    return passage


@st.composite
def edits_for(draw: st.DrawFn, text: str) -> list[Edit]:
    """Up to four edits, their old texts mostly taken from the text as the edits before left it.

    The text is followed roughly (every occurrence replaced), enough to aim later edits at it.
    """
    out: list[Edit] = []
    current = to_lf(text)
    for _ in range(draw(st.sampled_from([1, 1, 2, 2, 3, 4, 0]))):
        old_text = draw(passages(current))
        if draw(st.integers(0, 19)) == 0:
            new_text = old_text  # refused: it would change nothing
        else:
            others = st.one_of(_SHORT, _WORDS, st.text(max_size=12), passages(current))
            new_text = draw(others.filter(old_text.__ne__))
        out.append(Edit(old_text, new_text, draw(st.booleans())))
        old, new = to_lf(old_text), to_lf(new_text)
        if old and old != new:
            current = current.replace(old, new)
    return out


# A fenced block that stays fenced: closed only by its closing line, and holding lines that look
# like closers but are not (the other character, or the same one too short). Everything the
# scanners must ignore inside it says `secret`.
_FENCE_BODY = st.sampled_from(
    [
        "#include <stdio.h>",
        "#secret-tag and #secret/nested",
        "  #secret-indented",
        "[[secret-wiki]] and [x](secret.md)",
        "# secret heading",
        "",
        "   ",
        "``",
        "x ``` not a fence line",
    ]
)


@st.composite
def fenced_blocks(draw: st.DrawFn, closed: bool = True) -> list[str]:
    char = draw(st.sampled_from("`~"))
    length = draw(st.integers(3, 5))
    other = "~" if char == "`" else "`"
    # Lines a fence of this marker ignores: the other character, or the same one shorter.
    not_closers = [other * 3, other * (length + 1)] + ([char * (length - 1)] if length > 3 else [])
    body = draw(st.lists(st.one_of(_FENCE_BODY, st.sampled_from(not_closers)), max_size=6))
    opener = draw(_indent.filter(lambda s: len(s) <= 3 and "\t" not in s)) + char * length
    opener += draw(st.sampled_from(["", "python", " title"]))
    closer = [char * draw(st.integers(length, length + 2)) + draw(st.sampled_from(["", " ", " ignored"]))]
    return [opener, *body, *(closer if closed else [])]


# Prose lines with no fence line and no `secret` outside code: what they say is visible.
_PROSE = st.one_of(
    inline_text.filter(lambda s: "secret" not in s and "```" not in s and "~~~" not in s),
    st.sampled_from(
        [
            "See #visible and [[Visible Note|shown]].",
            "Code `#secret-inline` and `[[secret-inline]]` is code.",
            "``#secret-double``",
            "    #secret-indented-code",
            "\t#secret-tab-code",
        ]
    ),
)


@st.composite
def fence_documents(draw: st.DrawFn) -> str:
    """Prose and fenced blocks, the last block possibly unclosed (fenced to the end of the file)."""
    blocks = draw(st.lists(st.one_of(_PROSE.map(lambda s: [s]), fenced_blocks()), max_size=10))
    if draw(st.booleans()):
        blocks.append(draw(fenced_blocks(closed=False)))
    lines = ["start", *(line for block in blocks for line in block)]
    return "\n".join(lines)


# --- adversarial lines: what made the old regexes backtrack (docs/documents.md#bounded-parsing) ---------

# Pieces that open a construct and may never close it, repeated many times over one line.
_ADVERSARIAL_PIECES = st.sampled_from(
    [
        "[",
        "]",
        "[a](",
        "](",
        "[[",
        "]]",
        "![[",
        "[[a",
        "(",
        ")",
        "<",
        ">",
        '"',
        "`",
        "``",
        "```",
        "{",
        "}",
        "{:",
        "{#id",
        " ",
        "    ",
        "\t",
        "#",
        "#a",
        "#a/",
        "/",
        "-",
        ":",
        "a",
        "x.md",
        "title: ",
        "tags: [",
    ]
)
_ADVERSARIAL_PREFIXES = st.sampled_from(
    ["", "", "# ", "## x {", "- ", "title: a", "tags: [a", "[ref]: ", "> "]
)


@st.composite
def adversarial_lines(draw: st.DrawFn, max_repeat: int = 400) -> str:
    """One line: a prefix, then a few pieces each repeated up to `max_repeat` times, then a tail.
    Long runs of one piece are what quadratic rules choke on; the mix keeps them honest elsewhere."""
    parts = [draw(_ADVERSARIAL_PREFIXES)]
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(_ADVERSARIAL_PIECES) * draw(st.integers(1, max_repeat)))
    parts.append(draw(st.sampled_from(["", "y", ")", "]", "}", "`", '")', "]]"])))
    return "".join(parts)


@st.composite
def adversarial_documents(draw: st.DrawFn) -> str:
    """A few adversarial lines, maybe inside front matter (its values are parsed too)."""
    lines = draw(st.lists(adversarial_lines(), min_size=1, max_size=4))
    if draw(st.booleans()):
        return "---\n" + "\n".join(lines) + "\n---\n\n" + "\n".join(lines) + "\n"
    return "\n".join(lines) + "\n"
