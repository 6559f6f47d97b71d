"""Heading sections packed into chunks, with original line numbers; the text each chunk embeds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from ragdown.documents import work
from ragdown.documents.frontmatter import read_front_matter, read_title
from ragdown.documents.lines import FenceTracker, match_heading, split_lines

# Bump whenever chunk boundaries or the embedded text change: a bump forces a rebuild.
CHUNKER_VERSION = 3
BREADCRUMB_SEPARATOR = " › "
# A heading or title longer than this is cut (its last character `…`) where it names a chunk: every
# chunk below a heading carries its name, and every chunk its title, so one 50,000-character H1
# over 8,000 short sections made 400 MB of breadcrumbs (docs/documents.md#bounded-parsing).
NAME_MAX = 500


@dataclass(frozen=True)
class Chunk:
    """One heading-scoped piece of a document. Lines are 1-based, inclusive, in the original file."""

    index: int
    title: str
    heading: str
    text: str
    line_start: int
    line_end: int


@dataclass(frozen=True)
class _Piece:
    text: str
    line_start: int
    line_end: int


@dataclass
class _Section:
    heading: str
    lines: list[str]
    line_start: int


def file_stem(path: str) -> str:
    """The file name without its extension: the title of a document with no other."""
    return PurePosixPath(path.replace("\\", "/")).stem


def clip_name(name: str) -> str:
    """A heading or title as chunks carry it: at most NAME_MAX characters."""
    return name if len(name) <= NAME_MAX else name[: NAME_MAX - 1] + "…"


def chunk_markdown(source: str, path: str, max_chars: int) -> list[Chunk]:
    """Split a document into heading-scoped chunks of at most `max_chars` characters each."""
    return chunk_lines(split_lines(source), path, max_chars)


def chunk_lines(lines: list[str], path: str, max_chars: int) -> list[Chunk]:
    front = read_front_matter(lines)
    sections: list[_Section] = []
    stack: list[str] = []
    current = _Section("", [], front.body_start + 1)
    fence = FenceTracker()
    first_h1: str | None = None
    for i in range(front.body_start, len(lines)):
        line = lines[i]
        fence.feed(line)
        heading = None if fence.open else match_heading(line)
        if heading is None:
            current.lines.append(line)
            continue
        sections.append(current)
        level, name = heading.level, clip_name(heading.name)
        if level == 1 and first_h1 is None:
            first_h1 = name
        del stack[level - 1 :]
        stack.extend([""] * (level - 1 - len(stack)))
        stack.append(name)
        current = _Section(BREADCRUMB_SEPARATOR.join(s for s in stack if s), [], i + 2)
    sections.append(current)

    # A front-matter title wins even when it unquotes to "" (`title: ''`), as in the reference.
    front_title = read_title(front.front)
    title = clip_name(front_title) if front_title is not None else first_h1 or file_stem(path)
    chunks: list[Chunk] = []
    for section in sections:
        for piece in _pack_section(section, max_chars):
            chunks.append(
                Chunk(len(chunks), title, section.heading, piece.text, piece.line_start, piece.line_end)
            )
    if not chunks:
        # Headings only, or empty: still one chunk, so the file is known to the index and findable.
        body = "\n".join(lines[front.body_start :]).strip()
        first = front.body_start + 1
        chunks.append(Chunk(0, title, "", body or title, first, max(first, len(lines))))
    return chunks


def _paragraphs(section: _Section) -> list[_Piece]:
    """Runs of lines between blank lines; a fenced block is one paragraph, blank lines and all."""
    out: list[_Piece] = []
    buffer: list[str] = []
    buffer_start = 0
    fence = FenceTracker()

    def flush(end: int) -> None:
        if any(line.strip() for line in buffer):
            out.append(
                _Piece("\n".join(buffer), section.line_start + buffer_start, section.line_start + end - 1)
            )
        buffer.clear()

    for i, line in enumerate(section.lines):
        fence.feed(line)
        if not line.strip() and not fence.open:
            flush(i)
            buffer_start = i + 1
            continue
        if not buffer:
            buffer_start = i
        buffer.append(line)
    flush(len(section.lines))
    return out


# Where a line too long for one chunk is cut (docs/documents.md#packing): after the last sentence end
# in the room, else at its last space, else at the room's end. A cut keeps at least half the room in
# the piece; after a sentence end the next piece starts again at that piece's last sentence when the
# sentence starts past a quarter of the room. So every cut moves on by a quarter of the room or more
# and each look back reads at most the room: linear in the line.
_SENTENCE_ENDS = (". ", "? ", "! ", ".\t", "?\t", "!\t")


def _last_sentence_end(text: str, low: int, high: int) -> int:
    """The index of the last `.`, `?` or `!` followed by a space or tab within text[low:high]; -1."""
    work.read(len(_SENTENCE_ENDS) * max(0, high - low))
    return max(text.rfind(end, low, high) for end in _SENTENCE_ENDS)


def _cut_at(line: str, pos: int, room: int) -> tuple[int, int]:
    """Where to cut `line` from `pos` on (more than `room` characters are left): where the piece
    ends, and where the rest starts (indices into `line`)."""
    half, end = pos + room // 2, pos + room
    sentence = _last_sentence_end(line, half, end + 1)  # its space may lie just past the room
    if sentence >= half:
        # The piece's last sentence starts the next piece again (an overlap of one sentence), so a
        # question whose words straddle the cut finds them together in one of the two.
        overlap = _last_sentence_end(line, pos + room // 4, sentence)
        return sentence + 1, (overlap + 2 if overlap >= 0 else sentence + 2)
    space = max(line.rfind(" ", half, end + 1), line.rfind("\t", half, end + 1))
    work.read(2 * (end + 1 - half))
    if space > pos:
        return space, space + 1
    return end, end


def _hard_split(paragraph: _Piece, max_chars: int) -> list[_Piece]:
    """Cut a paragraph longer than `max_chars` at line boundaries, and a single huge line at a sentence
    end (one sentence repeated in the next piece) or a space in the second half of the room, else by
    length."""
    if len(paragraph.text) <= max_chars:
        return [paragraph]
    out: list[_Piece] = []
    text = ""
    start = paragraph.line_start
    for offset, line in enumerate(paragraph.text.split("\n")):
        line_no = paragraph.line_start + offset
        if text and len(text) + 1 + len(line) > max_chars:
            out.append(_Piece(text, start, line_no - 1))
            text = ""
        if not text:
            start = line_no
        pos = 0  # where the rest of the line starts: no copy of the rest per cut
        while len(text) + len(line) - pos > max_chars:
            cut, pos_next = _cut_at(line, pos, max_chars - len(text))
            out.append(_Piece(text + line[pos:cut], start, line_no))
            text, start, pos = "", line_no, pos_next
        rest = line[pos:]
        text = f"{text}\n{rest}" if text else rest
    if text:
        out.append(_Piece(text, start, paragraph.line_end))
    return out


def _pack_section(section: _Section, max_chars: int) -> list[_Piece]:
    """Greedily join pieces with a blank line while the chunk stays within `max_chars`. Two pieces of
    one paragraph are never joined: no blank line stands between them (a piece cut at a sentence end
    or a space can be short enough to fit beside the one before it)."""
    packed: list[_Piece] = []
    open_piece: _Piece | None = None
    for paragraph in _paragraphs(section):
        for number, piece in enumerate(_hard_split(paragraph, max_chars)):
            fits = open_piece is not None and len(open_piece.text) + 2 + len(piece.text) <= max_chars
            if open_piece is not None and fits and number == 0:
                joined = f"{open_piece.text}\n\n{piece.text}"
                open_piece = _Piece(joined, open_piece.line_start, piece.line_end)
            else:
                if open_piece is not None:
                    packed.append(open_piece)
                open_piece = piece
    if open_piece is not None:
        packed.append(open_piece)
    return packed


def breadcrumb(title: str, heading: str) -> str:
    """Title and heading path as one line, without repeating a heading path that starts with the title."""
    if not heading or heading == title:
        return title
    prefix = title + BREADCRUMB_SEPARATOR
    return heading if heading.startswith(prefix) else prefix + heading


def embedding_text(title: str, heading: str, text: str) -> str:
    """The only text the embedder sees: the breadcrumb, a blank line, the chunk."""
    return f"{breadcrumb(title, heading)}\n\n{text}"


def search_text(chunk: Chunk, aliases: list[str]) -> str:
    """What BM25 indexes: the embedded text, plus the aliases on chunk 0 only."""
    text = embedding_text(chunk.title, chunk.heading, chunk.text)
    if chunk.index == 0 and aliases:
        text += "\n\n" + "\n".join(aliases)
    return text
