"""docs/documents.md#edit exact-passage edits: a pure function from a text and its edits to the new text.

Nothing here reads or writes files; the caller checks the base hash, and writes the result back
(through docs/documents.md#how-a-change-is-written, after `with_line_endings_of` has restored a CRLF file's
line endings).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from ragdown.documents import work
from ragdown.errors import BadRequestError, ConflictError, NotFoundError

_NOT_FOUND_FALLBACK = (
    "It must match character for character, whitespace included: "
    "read the document again and copy the passage from it"
)


@dataclass(frozen=True)
class Edit:
    """Replace the exact passage `old_text` (once, unless `replace_all`) with `new_text`."""

    old_text: str
    new_text: str
    replace_all: bool = False


@dataclass(frozen=True)
class EditOutcome:
    """The edited text, with LF line endings, and how many passages were replaced in all."""

    text: str
    replaced: int


@dataclass(frozen=True)
class Passage:
    """Part of a text and the 1-based, inclusive lines it is on."""

    start: int
    end: int
    text: str


def apply_edits(text: str, edits: Sequence[Edit]) -> EditOutcome:
    """`text` with each edit applied in order, each to the result of the one before.

    CRLF is compared as LF in the text and in every edit, and the result has LF.
    Raises `Refusal` (400 same text, 404 not found, 409 ambiguous) at the first edit that fails.
    """
    current = to_lf(text)
    replaced = 0
    count = len(edits)
    for number, edit in enumerate(edits, start=1):
        which = f"edit {number} of {count}"
        old_text = to_lf(edit.old_text)
        new_text = to_lf(edit.new_text)
        if old_text == new_text:
            raise BadRequestError(f"{which}: old_text and new_text are the same, so nothing was written")
        # An empty old_text is found nowhere (str.count("") would count every gap between characters).
        occurrences = current.count(old_text) if old_text else 0
        if occurrences == 0:
            raise NotFoundError(
                f"{which}: old_text is not in the document, so nothing was written. "
                + _fix(current, old_text, first=number == 1),
            )
        if occurrences > 1 and not edit.replace_all:
            raise ConflictError(
                f"{which}: old_text is in the document {occurrences} times, so nothing was written. "
                "Add the text around the one you mean until it matches once, or pass replace_all: true",
            )
        # str.replace is literal: `$&`, `$1` and backslashes in new_text stay as they are.
        current = current.replace(old_text, new_text)
        replaced += occurrences
    return EditOutcome(current, replaced)


def _fix(text: str, old_text: str, *, first: bool) -> str:
    nearest = nearest_passage(text, old_text)
    if nearest is None:
        return _NOT_FOUND_FALLBACK
    # Line numbers are the file's only until an earlier edit has shifted them.
    span = f"line {nearest.start}" if nearest.start == nearest.end else f"lines {nearest.start}-{nearest.end}"
    lines = f" ({span})" if first else ""
    return f"The nearest passage{lines} follows; copy old_text from it exactly:\n{nearest.text}"


def nearest_passage(text: str, old_text: str) -> Passage | None:
    """The passage an `old_text` that matched nothing most likely meant, in five tries:

    1. the same words, spaced differently;
    2. the same words ignoring case, spaced differently;
    3. the run of words most like `old_text`'s (a word changed, added or dropped; case ignored),
       when at least 60 % of them agree;
    4. as many lines as `old_text` has, from the first line equal (trimmed) to its trimmed first line;
    5. try 3 again on normalised words: split at punctuation and hyphens as well as spaces, case
       ignored, a plural's ending dropped (`pg dump credential` finds `pg-dump credentials`).
    """
    words = old_text.split()
    if not words:
        return None
    spaced = _spaced(text, words, ignore_case=False) or _spaced(text, words, ignore_case=True)
    if spaced:
        return _passage(text, *spaced)
    similar = _similar_run(text, [word.casefold() for word in words], _TOKEN_RE, str.casefold)
    if similar is not None:
        return _passage(text, *similar)

    old_lines = old_text.strip().split("\n")
    first_line = old_lines[0].strip()
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.strip() == first_line:
            passage = lines[index : index + len(old_lines)]
            return Passage(index + 1, index + len(passage), "\n".join(passage))
    normalised = [normal_word(m.group()) for m in WORD_RE.finditer(old_text)]
    found = _similar_run(text, normalised, WORD_RE, normal_word)
    return None if found is None else _passage(text, *_whole_words(text, *found))


SIMILAR_SHARE = 0.6
SIMILAR_CANDIDATES = 20
SIMILAR_MAX_WORDS = 1_000  # difflib's comparison is quadratic in the words: longer old_texts skip it
SPACED_TRIES = 64  # places a case-insensitive spaced match is tried at, at most
_TOKEN_RE = re.compile(r"\S+")
Token = tuple[int, int, str]  # start and end offsets in the text, the word as compared
# A word as try 5 compares them: letters and digits, so `pg-dump`, `pg_dump` and `pg dump` agree.
WORD_RE = re.compile(r"[^\W_]+")
_PLURAL_ES = ("sses", "shes", "ches", "xes", "zes")


def normal_word(word: str) -> str:
    """A word casefolded, without a plural's ending (`credentials`, `boxes`, `policies`); the same
    rule on both sides is all it needs to be, so a singular that looks plural (`this`) is cut too."""
    folded = word.casefold()
    if len(folded) <= 3:
        return folded
    if folded.endswith("ies"):
        return folded[:-3] + "y"
    if folded.endswith(_PLURAL_ES):
        return folded[:-2]
    if folded.endswith("s") and not folded.endswith("ss"):
        return folded[:-1]
    return folded


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """`text[start:end]` grown to the whitespace around it, so a word is never offered cut in two
    (`` `pg-dump` credentials. ``, not `` pg-dump` credentials ``)."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end


def _spaced(text: str, words: list[str], *, ignore_case: bool) -> tuple[int, int] | None:
    """Where the words first stand separated by any whitespace: the first match of the regex
    `w1\\s+w2…` (each word escaped), found without searching with it, which retries every start
    and takes time proportional to the text times the words.

    The first word ends a token of the text, the last starts one, the others are whole tokens in
    between; candidates come from a KMP pass over the tokens, and the regex confirms each from its
    start. Ignoring case, tokens are compared lowercased and at most SPACED_TRIES candidates are
    tried (a letter the regex folds and `lower` does not leaves that pass to the next step).
    """
    fold = _lower if ignore_case else str
    pattern = re.compile(r"\s+".join(map(re.escape, words)), re.IGNORECASE if ignore_case else 0)
    first, last = fold(words[0]), fold(words[-1])
    tokens = [(m.start(), m.end(), fold(m.group())) for m in _TOKEN_RE.finditer(text)]
    work.read(len(text))
    if len(words) == 1:
        starts = (start + at for start, _, token in tokens for at in _occurrences(token, first))
    else:
        starts = (
            tokens[i][1] - len(words[0])
            for i in _kmp([token for _, _, token in tokens], [fold(w) for w in words[1:-1]], offset=1)
            if i + len(words) - 1 < len(tokens)
            and tokens[i][2].endswith(first)
            and tokens[i + len(words) - 1][2].startswith(last)
        )
    for tried, start in enumerate(starts):
        if tried == SPACED_TRIES:
            break
        match = pattern.match(text, start)
        if match:
            work.read(match.end() - start)
            return match.start(), match.end()
    return None


def _lower(text: str) -> str:
    """Lowercased character for character, so offsets hold (`İ` is `i`, as the regex folds it)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else "".join(c.lower()[0] for c in text)


def _occurrences(token: str, word: str) -> list[int]:
    """Offsets of `word` in `token`, overlapping ones too (a handful: they stop at SPACED_TRIES)."""
    found: list[int] = []
    at = token.find(word)
    while at >= 0 and len(found) < SPACED_TRIES:
        found.append(at)
        at = token.find(word, at + 1)
    return found


def _kmp(tokens: list[str], middle: list[str], offset: int) -> list[int]:
    """Every i where tokens[i + offset : i + offset + len(middle)] == middle (all i for no middle)."""
    if not middle:
        return list(range(len(tokens)))
    ids: dict[str, int] = {}
    text = [ids.setdefault(token, len(ids)) for token in tokens]
    wanted = [ids.get(word, -1) for word in middle]
    fail = [0] * len(wanted)
    k = 0
    for i in range(1, len(wanted)):
        while k and wanted[i] != wanted[k]:
            k = fail[k - 1]
        k += wanted[i] == wanted[k]
        fail[i] = k
    hits: list[int] = []
    k = 0
    for i, token in enumerate(text):
        while k and token != wanted[k]:
            k = fail[k - 1]
        k += token == wanted[k]
        if k == len(wanted):
            hits.append(i - len(wanted) + 1 - offset)
            k = fail[k - 1]
    return [i for i in hits if i >= 0]


def _passage(text: str, start: int, end: int) -> Passage:
    first = text.count("\n", 0, start) + 1
    return Passage(first, first + text.count("\n", start, end), text[start:end])


def _similar_run(
    text: str, wanted: list[str], pattern: re.Pattern[str], fold: Callable[[str], str]
) -> tuple[int, int] | None:
    """Where the run of the text's words (`pattern`'s matches, each `fold`ed as `wanted`'s words are)
    most like `wanted` starts and ends, of its length or one more or less. A sliding count of shared
    words keeps this linear in the document; only the best few runs are then compared in order
    (difflib)."""
    if len(wanted) < 2 or len(wanted) > SIMILAR_MAX_WORDS:
        return None  # one word that differs is no hint at all; thousands are compared by lines
    tokens = [(match.start(), match.end(), fold(match.group())) for match in pattern.finditer(text)]
    work.read(len(text))
    best = _best_run(tokens, wanted)
    if best is None:
        return None
    first, size, run = best
    # Words old_text has before or after all that matched were changed, not dropped: show what the
    # document has in their place, so the agent sees the change and not a passage that stops short.
    codes = SequenceMatcher(None, wanted, run).get_opcodes()
    if codes[0][0] == "delete":
        grow = min(codes[0][2], first)
        first, size = first - grow, size + grow
    if codes[-1][0] == "delete":
        size = min(size + codes[-1][2] - codes[-1][1], len(tokens) - first)
    return tokens[first][0], tokens[first + size - 1][1]


def _shared_runs(tokens: list[Token], wanted: list[str]) -> list[tuple[int, int, int]]:
    """(shared words, first token, run length) of every run of `wanted`'s length, one more or one less,
    sharing at least SIMILAR_SHARE of the words: one sliding count per length."""
    need = Counter(wanted)
    candidates: list[tuple[int, int, int]] = []
    for size in {len(wanted) - 1, len(wanted), len(wanted) + 1}:
        if size > len(tokens):
            continue
        have: Counter[str] = Counter()
        shared = 0
        for index, (_, _, word) in enumerate(tokens):
            if have[word] < need[word]:
                shared += 1
            have[word] += 1
            if index >= size:
                gone = tokens[index - size][2]
                have[gone] -= 1
                if have[gone] < need[gone]:
                    shared -= 1
            if index >= size - 1 and shared >= SIMILAR_SHARE * max(size, len(wanted)):
                candidates.append((shared, index - size + 1, size))
    return candidates


def _best_run(tokens: list[Token], wanted: list[str]) -> tuple[int, int, list[str]] | None:
    """(first token, run length, its words) of the run most like `wanted` in order (difflib's
    ratio); then the one sharing most words, then the one with most words in the same places, then
    the earliest. None when no run is alike enough."""
    best: tuple[tuple[float, int, int, int], int, int, list[str]] | None = None
    candidates = _shared_runs(tokens, wanted)
    for shared, first, size in sorted(candidates, key=lambda c: (-c[0], c[1]))[:SIMILAR_CANDIDATES]:
        run = [t[2] for t in tokens[first : first + size]]
        ratio = SequenceMatcher(None, wanted, run).ratio()
        aligned = sum(a == b for a, b in zip(wanted, run, strict=False))
        rank = (ratio, shared, aligned, -first)
        if ratio >= SIMILAR_SHARE and (best is None or rank > best[0]):
            best = (rank, first, size, run)
    return None if best is None else best[1:]


def to_lf(text: str) -> str:
    """CRLF line endings as LF; a lone CR is left alone, as the reference leaves it."""
    return text.replace("\r\n", "\n")


def with_line_endings_of(original: str, text: str) -> str:
    """`text` (LF) with CRLF line endings when `original`, the file as read, had any CRLF."""
    if "\r\n" not in original:
        return text
    return to_lf(text).replace("\n", "\r\n")
