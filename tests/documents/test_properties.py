"""Property tests of the Markdown layer: docs/documents.md chunking and metadata,
docs/documents.md#finding-links links, docs/documents.md#heading-ranges heading ranges,
docs/documents.md#edit edits.

Each property is checked against a small model written here from the spec, not from the code.
Runs are derandomised and keep no example database, so CI sees the same examples every run.
"""

from __future__ import annotations

import posixpath
import re
import tempfile
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import cast

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ragdown.documents.chunks import BREADCRUMB_SEPARATOR, clip_name
from ragdown.documents.frontmatter import read_front_matter, read_list, read_scalar, read_title
from ragdown.documents.headings import heading_range, heading_range_in_lines
from ragdown.documents.lines import match_heading, split_lines
from ragdown.documents.link_finder import find_links
from ragdown.documents.metadata import parse_document, read_document_meta
from ragdown.documents.tags import FRONT_MATTER_SPLIT, normalise_tag
from ragdown.documents.text_edits import (
    WORD_RE,
    Edit,
    EditOutcome,
    apply_edits,
    nearest_passage,
    normal_word,
    to_lf,
)
from ragdown.engine import Engine
from ragdown.errors import Refusal
from ragdown.folders.scope import Scope
from ragdown.scoped_changes import Place, edit
from tests.documents.strategies import (
    documents,
    edits_for,
    fence_documents,
    headings,
    passages,
    sentence_lines,
)

# Hundreds of generated documents per property: the example tests beside this module keep the quick
# loop covering these rules, and the full run sweeps them.
pytestmark = pytest.mark.slow


def examples(count: int) -> settings:
    return settings(
        max_examples=count,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- the spec's rules, restated as the model the properties check against ---------------------

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")  # docs/documents.md#sections-and-breadcrumbs
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")  # docs/documents.md#sections-and-breadcrumbs
_CLOSING = re.compile(r"^(---|\.\.\.)\s*$")  # docs/documents.md#front-matter
_TITLE = re.compile(r"^title:\s*(.+?)\s*$")  # docs/documents.md#front-matter
BOM = "\ufeff"


def lines_of(text: str) -> list[str]:
    """docs/documents.md#lines-fences-and-headings: CRLF and lone CR are line breaks; a trailing one makes an
    empty last line. A leading
    byte-order mark is no part of line 1 (see the last tests)."""
    return text.removeprefix(BOM).replace("\r\n", "\n").replace("\r", "\n").split("\n")


def body_start_of(lines: list[str]) -> int:
    """docs/documents.md#front-matter: the 0-based index of the first body line."""
    if lines[0].strip() != "---":
        return 0
    return next((i + 1 for i in range(1, len(lines)) if _CLOSING.match(lines[i])), 0)


def unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value


@dataclass(frozen=True)
class Outline:
    """What docs/documents.md#sections-and-breadcrumbs says about a document's lines: which are fenced, which
    are headings and where."""

    fenced: frozenset[int]  # 0-based: fence lines and the lines inside a fence
    headings: dict[int, tuple[int, str]]  # 0-based line -> (level, name), outside fences


def outline_of(lines: list[str], start: int = 0) -> Outline:
    marker: str | None = None
    fenced: set[int] = set()
    headings: dict[int, tuple[int, str]] = {}
    for i in range(start, len(lines)):
        fence = _FENCE.match(lines[i])
        if fence:
            fenced.add(i)
            if marker is None:
                marker = fence.group(1)
            elif fence.group(1)[0] == marker[0] and len(fence.group(1)) >= len(marker):
                marker = None
        elif marker is not None:
            fenced.add(i)
        elif heading := _HEADING.match(lines[i]):
            headings[i] = (len(heading.group(1)), heading.group(2))
    return Outline(frozenset(fenced), headings)


def no_whitespace(text: str) -> str:
    return "".join(text.split())


def expected_chunk_text(
    lines: list[str], start: int, end: int, outline: Outline, max_chars: int, got: list[str]
) -> list[str]:
    """The lines a chunk spanning file lines start..end (1-based) must have, by docs/documents.md#packing.

    Paragraphs are joined by one blank line, so each run of blank lines outside a fence reads as
    one empty line; blank lines inside a fence are code and stay. A line longer than max_chars is
    cut into the pieces `pieces` gives: a chunk's first line may be one of its first line's pieces,
    and its last line one of its last line's (`got`, the chunk's own lines, says which ones).
    """
    want: list[str] = []
    for i in range(start - 1, end):
        blank_break = not lines[i].strip() and i not in outline.fenced
        if not (blank_break and want and want[-1] == ""):
            want.append("" if blank_break else lines[i])
    if len(lines[start - 1]) > max_chars:
        assert got[0] in pieces(lines[start - 1], max_chars), got[0]
        want[0] = got[0]
    if end != start and len(lines[end - 1]) > max_chars:
        assert got[-1] in pieces(lines[end - 1], max_chars), got[-1]
        want[-1] = got[-1]
    return want


def _sentence_end(line: str, i: int) -> bool:
    return line[i] in ".?!" and i + 1 < len(line) and line[i + 1] in " \t"


@lru_cache(maxsize=16)
def pieces(line: str, max_chars: int) -> tuple[str, ...]:
    """A long line's pieces by docs/documents.md#packing, worked out position by position (made once: at
    max_chars 1 one line can make thousands of chunks): from `pos`, with `room` = max_chars, after the
    last sentence end at or past pos + room // 2 whose piece fits (the next piece starting at the piece's
    last sentence when that starts past pos + room // 4), else at the last space or tab past pos in the
    second half (left out), else after max_chars characters."""
    out: list[str] = []
    pos, room = 0, max_chars
    while len(line) - pos > room:
        half, end = pos + room // 2, pos + room
        ends = [i for i in range(half, end) if _sentence_end(line, i)]
        spaces = [k for k in range(max(half, pos + 1), min(end, len(line) - 1) + 1) if line[k] in " \t"]
        if ends:
            cut = ends[-1] + 1
            earlier = [j for j in range(pos + room // 4, ends[-1] - 1) if _sentence_end(line, j)]
            resume = earlier[-1] + 2 if earlier else cut + 1
        elif spaces:
            cut, resume = spaces[-1], spaces[-1] + 1
        else:
            cut = resume = end
        out.append(line[pos:cut])
        pos = resume
    out.append(line[pos:])
    return tuple(out)


# --- docs/documents.md chunking -----------------------------------------------------------------------------

# The indexer's sizes (1500, and 500 for MiniLM) and small ones that make every rule of
# docs/documents.md#packing fire.
chunk_sizes = st.sampled_from([1500, 500, 1, 2, 7, 40, 120])


# Documents with paragraphs written as one long line of sentences, around a short one.
sentence_documents = st.tuples(sentence_lines, sentence_lines, st.text(max_size=30)).map(
    lambda parts: f"# T\n\n{parts[0]}\n{parts[2]}\n{parts[1]}\n\nafter"
)


@examples(400)
@given(source=documents | sentence_documents, max_chars=chunk_sizes)
def test_chunks_come_from_their_lines_and_cover_the_body(source: str, max_chars: int) -> None:
    """What the indexer calls (`parse_document`) never raises, and each chunk is made of its lines.

    Precisely: body start <= line_start <= line_end <= the file's line count; the chunk's text is
    its lines as `expected_chunk_text` gives them (exact, except that blank lines between
    paragraphs read as one, and a line too long for a chunk as its pieces); no heading line is
    inside a chunk; chunks follow each other in the file, sharing a line only when that line was
    cut; and, whitespace aside, the chunks together are exactly the body's non-heading lines,
    each once, a cut line as its pieces (docs/documents.md#sections-and-breadcrumbs,
    docs/documents.md#packing: only heading lines and blank lines are left out of chunks).
    """
    doc = parse_document(source, "notes/doc.md", max_chars)
    lines = lines_of(source)
    start = body_start_of(lines)
    outline = outline_of(lines, start)
    body = [lines[i] for i in range(start, len(lines)) if i not in outline.headings]
    chunks = doc.chunks

    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert {c.title for c in chunks} == {doc.title}
    if not no_whitespace("".join(body)):
        # docs/documents.md#packing: headings only, or nothing: one chunk, whose line_start may be one past
        # the last
        # line when the front matter closes on it, as the spec's formula gives.
        assert len(chunks) == 1
        (only,) = chunks
        assert only.heading == ""
        assert only.text == ("\n".join(lines[start:]).strip() or doc.title)
        assert (only.line_start, only.line_end) == (start + 1, max(start + 1, len(lines)))
        return

    for chunk in chunks:
        assert start + 1 <= chunk.line_start <= chunk.line_end <= len(lines), chunk
        assert len(chunk.text) <= max_chars, chunk
        got = chunk.text.split("\n")
        assert got == expected_chunk_text(lines, chunk.line_start, chunk.line_end, outline, max_chars, got)
        assert not outline.headings.keys() & set(range(chunk.line_start - 1, chunk.line_end)), chunk
    for before, after in pairwise(chunks):
        assert after.line_start >= before.line_end
        if after.line_start == before.line_end:
            assert len(lines[before.line_end - 1]) > max_chars
    # A long line reads as its pieces, in order (a repeated sentence twice).
    cut = ["".join(pieces(line, max_chars)) if len(line) > max_chars else line for line in body]
    assert "".join(no_whitespace(c.text) for c in chunks) == no_whitespace("".join(cut))


@examples(300)
@given(source=documents)
def test_titles_and_breadcrumbs_follow_the_heading_stack(source: str) -> None:
    """docs/documents.md#sections-and-breadcrumbs: each chunk's heading is the stack of headings above its
    first line; docs/documents.md#sections-and-breadcrumbs title rule."""
    lines = lines_of(source)
    start = body_start_of(lines)
    outline = outline_of(lines, start)
    chunks = parse_document(source, "notes/Doc Name.md", 120).chunks

    front = lines[1 : start - 1] if start else []
    front_titles = [m.group(1) for line in front if (m := _TITLE.match(line))]
    first_h1 = next((name for level, name in outline.headings.values() if level == 1), None)
    expected_title = unquote(front_titles[-1]) if front_titles else first_h1 or "Doc Name"
    assert chunks[0].title == expected_title

    body = [lines[i] for i in range(start, len(lines)) if i not in outline.headings]
    if not no_whitespace("".join(body)):
        assert [c.heading for c in chunks] == [""]  # docs/documents.md#packing
        return
    for chunk in chunks:
        # On a heading of level L the stack keeps levels above L, and L gets the name.
        stack: dict[int, str] = {}
        for line, (level, name) in sorted(outline.headings.items()):
            if line >= chunk.line_start - 1:
                break
            stack = {lv: n for lv, n in stack.items() if lv < level} | {level: name}
        assert chunk.heading == BREADCRUMB_SEPARATOR.join(stack[lv] for lv in sorted(stack)), chunk


# --- docs/documents.md#edit edits ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Refused:
    status: int
    number: int  # which edit, from 1


def model_edits(text: str, edits: list[Edit]) -> tuple[str, int] | Refused:
    """docs/documents.md#edit restated: CRLF read as LF everywhere, then each edit on the result of the one
    before.

    An empty old_text is in no document: it is refused as not found (the reference counted the
    gaps between characters instead, which no caller means).
    """
    current = text.replace("\r\n", "\n")
    replaced = 0
    for number, one in enumerate(edits, start=1):
        old_text = one.old_text.replace("\r\n", "\n")
        new_text = one.new_text.replace("\r\n", "\n")
        if old_text == new_text:
            return Refused(400, number)
        parts = current.split(old_text) if old_text else [current]
        if len(parts) == 1:
            return Refused(404, number)
        if len(parts) > 2 and not one.replace_all:
            return Refused(409, number)
        current = new_text.join(parts)
        replaced += len(parts) - 1
    return current, replaced


@st.composite
def edit_cases(draw: st.DrawFn) -> tuple[str, list[Edit]]:
    text = draw(documents)
    return text, draw(edits_for(text))


@examples(500)
@given(case=edit_cases())
def test_edits_apply_exactly_or_refuse(case: tuple[str, list[Edit]]) -> None:
    """Either the text the model gives and the count of passages replaced, or a refusal naming the
    edit that failed with the model's status; the edits given are not changed either way."""
    text, edits = case
    given_edits = list(edits)
    expected = model_edits(text, edits)
    if isinstance(expected, Refused):
        with pytest.raises(Refusal) as refused:
            apply_edits(text, edits)
        assert refused.value.status == expected.status
        assert refused.value.message.startswith(f"edit {expected.number} of {len(edits)}: ")
        assert "so nothing was written" in refused.value.message
    else:
        assert apply_edits(text, edits) == EditOutcome(*expected)
    assert edits == given_edits


@examples(300)
@given(data=st.data(), text=documents)
def test_the_nearest_passage_is_in_the_text(data: st.DataObject, text: str) -> None:
    """A 404 quotes the passage the edit most likely meant: it is on the lines it names, and it is
    the same words differently spaced, or starts with the line old_text starts with, or its
    normalised words are most of old_text's (docs/documents.md#edit, try 5)."""
    text = to_lf(text)
    old_text = data.draw(passages(text).map(lambda p: p.replace("\n", "  \n ").replace(" ", "\t", 1)))
    passage = nearest_passage(text, old_text)
    if passage is None:
        return
    lines = text.split("\n")
    assert 1 <= passage.start <= passage.end <= len(lines)
    assert passage.text in "\n".join(lines[passage.start - 1 : passage.end])
    same_words = passage.text.split() == old_text.split()
    same_first_line = passage.text.split("\n")[0].strip() == old_text.strip().split("\n")[0].strip()
    old_words, passage_words = (
        [normal_word(m.group()) for m in WORD_RE.finditer(t)] for t in (old_text, passage.text)
    )
    alike = SequenceMatcher(None, old_words, passage_words).ratio() >= 0.6
    assert same_words or same_first_line or alike


class _Engine:
    """The part of an Engine `scoped_changes.edit` uses: its docs folder, and sync, counted here."""

    folders_mode = False

    def __init__(self, docs_dir: Path) -> None:
        self.docs_dir = docs_dir
        self.syncs = 0

    def sync_changed(self, paths: list[str] | None) -> None:
        self.syncs += 1


@st.composite
def file_edit_cases(draw: st.DrawFn) -> tuple[bytes, list[Edit]]:
    """A file's bytes, now and then with bytes that are not UTF-8, and edits of its text."""
    data = draw(documents).encode()
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x80\x80"])) + data[at:]
    return data, draw(edits_for(data.decode("utf-8", "surrogateescape")))


@examples(150)
@given(case=file_edit_cases())
def test_an_edit_writes_the_whole_result_or_leaves_the_file_alone(case: tuple[bytes, list[Edit]]) -> None:
    """Through `ragdown_edit`'s code and a real file: a refused edit leaves the bytes as they were
    and does not sync; an edit that applies writes the model's text, CRLF again if the file had
    any CRLF (docs/documents.md#write, docs/documents.md#edit), undecodable bytes as they were."""
    data, edits = case
    expected = model_edits(data.decode("utf-8", "surrogateescape"), edits)
    with tempfile.TemporaryDirectory() as folder:
        docs = Path(folder)
        (docs / "ops").mkdir()
        (docs / "ops" / "doc.md").write_bytes(data)
        engine = _Engine(docs)
        place = Place(cast(Engine, engine), Scope())
        if isinstance(expected, Refused):
            with pytest.raises(Refusal):
                edit(place, "ops/doc.md", edits, base_hash=None)
            assert (docs / "ops" / "doc.md").read_bytes() == data
            assert engine.syncs == 0
        else:
            answer = edit(place, "ops/doc.md", edits, base_hash=None)
            text, replaced = expected
            if b"\r\n" in data:
                text = re.sub(r"\r?\n", "\r\n", text)
            assert (docs / "ops" / "doc.md").read_bytes() == text.encode("utf-8", "surrogateescape")
            assert f"(replaced {replaced}, " in answer
            assert engine.syncs == 1
        assert sorted(p.name for p in docs.rglob("*")) == ["doc.md", "ops"]  # no temporary file left


# --- lines, front matter, tags (docs/documents.md#lines-fences-and-headings, #front-matter, #tags) ---


@examples(300)
@given(text=st.one_of(documents, st.text(alphabet="a\r\n\ufeff", max_size=12)))
def test_split_lines_round_trips(text: str) -> None:
    """One line per line break (CRLF, lone CR or LF) plus one; joined with LF they give the text
    back with LF breaks (less a leading byte-order mark), and an LF-only text exactly."""
    lines = split_lines(text)
    breaks = len(re.findall(r"\r\n|\r|\n", text))
    assert len(lines) == breaks + 1
    assert not any("\r" in line or "\n" in line for line in lines)
    assert "\n".join(lines) == re.sub(r"\r\n|\r", "\n", text.removeprefix(BOM))
    if "\r" not in text and not text.startswith(BOM):
        assert "\n".join(lines) == text


@examples(300)
@given(source=documents, key=st.sampled_from(["tags", "aliases", "supersedes", "description", "x"]))
def test_front_matter_is_the_lines_between_the_markers(source: str, key: str) -> None:
    """docs/documents.md#front-matter: front matter only from line 1 `---` to the first closing line after it;
    its readers
    never raise, and read keys only at column 0."""
    lines = split_lines(source)
    front = read_front_matter(lines)
    start = body_start_of(lines)
    assert front.body_start == start
    assert front.front == (lines[1 : start - 1] if start else [])

    at_column_0 = [line for line in front.front if line.startswith(f"{key}:")]
    values = read_list(front.front, key, FRONT_MATTER_SPLIT) + read_list(front.front, key)
    scalar = read_scalar(front.front, key)
    if not at_column_0:
        assert values == []
        assert scalar == ""
    title = read_title(front.front)
    assert (title is None) == (not any(_TITLE.match(line) for line in front.front))


@examples(300)
@given(source=documents, path=st.sampled_from(["doc.md", "notes/doc.md", "a/b/c.md", "notes\\win.md"]))
def test_document_metadata_is_well_formed(source: str, path: str) -> None:
    """docs/documents.md#front-matter, docs/documents.md#tags: tags sorted, distinct and already normal;
    aliases distinct and non-empty;
    supersedes normalised, root-relative paths that do not climb out."""
    meta = read_document_meta(source, path)
    assert meta.tags == sorted(set(meta.tags))
    assert all(normalise_tag(tag) == tag for tag in meta.tags)
    assert len(meta.aliases) == len(set(meta.aliases))
    assert all(meta.aliases)
    for entry in meta.supersedes:
        assert not entry.startswith(("/", "../"))
        assert entry != ".."
        assert posixpath.normpath(entry) == entry


@examples(300)
@given(source=fence_documents())
def test_nothing_in_code_is_a_tag_or_a_link(source: str) -> None:
    """docs/documents.md#tags, docs/documents.md#finding-links: fenced blocks (closed, or open to the end),
    inline code and, for tags, indented
    code hide tags and links; prose does not. Only code says `secret` in these documents."""
    tags = read_document_meta(source).tags
    assert not [tag for tag in tags if "secret" in tag]
    assert ("visible" in tags) == ("See #visible" in source)
    targets = [link.target for link in find_links(source)]
    assert not [target for target in targets if "secret" in target]
    assert ("Visible Note" in targets) == ("[[Visible Note|shown]]" in source)


# --- docs/documents.md#finding-links links, docs/documents.md#heading-ranges heading ranges -----------------


@examples(300)
@given(source=documents)
def test_link_offsets_point_at_their_targets(source: str) -> None:
    """A move replaces `text[start:end]` with the new target: it must be the target, on its line."""
    links = find_links(source)
    assert [link.start for link in links] == sorted(link.start for link in links)
    for link in links:
        assert source[link.start : link.end] == link.target
        assert len(lines_of(source[: link.start])) == link.line
        assert link.target in lines_of(source)[link.line - 1]
        assert link.kind == "wiki" or link.target


# Lines (no LF: docs/documents.md#lines-fences-and-headings splits there) made of what the heading rule looks
# at: `#`s, whitespace of
# several kinds, other text.
heading_like_lines = st.one_of(
    headings,
    st.text(alphabet="#  \t\u00a0\u3000\x0b\x1cab\r", max_size=16),
    st.builds(
        lambda pad, tail: f"# a{pad}{tail}", st.text(alphabet=" \t#", max_size=40), st.text(max_size=3)
    ),
).filter(lambda line: "\n" not in line)


@examples(1000)
@given(line=heading_like_lines)
def test_the_heading_rule_is_the_spec_regex(line: str) -> None:
    """`match_heading` gives exactly what docs/documents.md#sections-and-breadcrumbs's regex gives (it
    replaces the regex for speed)."""
    spec = _HEADING.match(line)
    assert match_heading(line) == (None if spec is None else (len(spec.group(1)), spec.group(2)))


def test_a_heading_with_a_long_run_of_spaces_is_read_at_once() -> None:
    # The spec regex backtracks cubically over the spaces: 85 s of CPU at 4,000 of them, and it would
    # take days at this size; this test finishes only if nothing backtracks like that any more.
    line = "# a" + " " * 100_000 + "b #"
    assert match_heading(line) == (1, line[2:-2])
    doc = parse_document(f"{line}\n\nbody", "notes/doc.md", 1500)
    # What every chunk repeats is cut at NAME_MAX (docs/documents.md#bounded-parsing).
    assert [(c.heading, c.text) for c in doc.chunks] == [(clip_name(line[2:-2]), "body")]
    assert heading_range(f"x\n{line}\nbody", "a" + " " * 100_000 + "b") == (2, 3)


@st.composite
def heading_cases(draw: st.DrawFn) -> tuple[str, str]:
    """A document and an anchor: mostly one of its headings, cased and spaced otherwise, after a
    note name and other `#` parts; sometimes anything."""
    source = draw(documents)
    names = [name for _, name in outline_of(lines_of(source)).headings.values()]
    aimed = draw(st.integers(0, 3)) > 0
    if names and aimed:
        name = draw(st.sampled_from(names))
        name = draw(st.sampled_from([name, name.upper(), f"  {name.lower()} "]))
        return source, draw(st.sampled_from(["", "Note#", "Note#Top#", "#"])) + name
    return source, draw(st.text(max_size=6))


@examples(300)
@given(case=heading_cases())
def test_a_heading_range_runs_to_the_next_heading_of_its_level(case: tuple[str, str]) -> None:
    """docs/documents.md#heading-ranges: from the first heading (outside fences) named like the anchor's last
    part, trimmed and
    lowercased, to the line before the next heading of its level or above, or the last line."""
    source, anchor = case
    lines = lines_of(source)
    headings = sorted(outline_of(lines).headings.items())
    wanted = anchor.rsplit("#", 1)[-1].strip().lower()
    found = next(
        ((i, level) for i, (level, name) in headings if wanted and name.strip().lower() == wanted), None
    )
    if found is None:
        assert heading_range(source, anchor) is None
        return
    start, level = found
    end = next((i for i, (other, _) in headings if i > start and other <= level), len(lines))
    assert heading_range(source, anchor) == (start + 1, end)


# --- a byte-order mark -------------------------------------------------------------------------


@examples(200)
@given(case=heading_cases())
def test_a_byte_order_mark_changes_nothing(case: tuple[str, str]) -> None:
    """Windows editors may start a UTF-8 file with U+FEFF, and the indexer reads it as text. The
    reference's rules trim it away as whitespace (JavaScript's trim and \\s include it), so front
    matter, a heading or a fence on line 1 means the same with it as without it."""
    source, anchor = case
    assume(not source.startswith(BOM))
    marked = BOM + source
    assert parse_document(marked, "notes/doc.md", 120) == parse_document(source, "notes/doc.md", 120)
    assert heading_range(marked, anchor) == heading_range(source, anchor)
    # Links keep their offsets in the text as given: one more, for the mark.
    assert [
        (link.kind, link.raw, link.start - 1, link.end - 1, link.line) for link in find_links(marked)
    ] == [(link.kind, link.raw, link.start, link.end, link.line) for link in find_links(source)]
    # Writes and reads split lines their own way (a lone CR stays in its line) before these rules.
    own_split = re.compile(r"\r?\n").split
    assert read_front_matter(own_split(marked)) == read_front_matter(own_split(source))
    assert heading_range_in_lines(own_split(marked), anchor) == heading_range_in_lines(
        own_split(source), anchor
    )


def test_front_matter_a_heading_and_a_fence_count_behind_a_byte_order_mark() -> None:
    doc = parse_document(f"{BOM}---\ntitle: Runbook\ntags: [ops]\n---\nBody text.", "notes/doc.md", 1500)
    assert (doc.title, doc.meta.tags) == ("Runbook", ["ops"])
    assert [(c.text, c.line_start, c.line_end) for c in doc.chunks] == [("Body text.", 5, 5)]

    doc = parse_document(f"{BOM}# Backups\n\nNightly.", "notes/doc.md", 1500)
    assert [(c.title, c.heading, c.text) for c in doc.chunks] == [("Backups", "Backups", "Nightly.")]
    assert heading_range_in_lines([f"{BOM}# Backups", "", "Nightly."], "backups") == (1, 3)
    assert read_front_matter([f"{BOM}---", "created_by: me", "---", "x"]).front == ["created_by: me"]

    fenced = f"{BOM}```\n[[In Code]] #in-code\n```\n[[Note]]"
    assert [(link.target, link.start, link.line) for link in find_links(fenced)] == [
        ("Note", fenced.index("Note"), 4)
    ]
    assert read_document_meta(fenced).tags == []
