"""BM25 over the in-memory snapshot, scored as LanceDB's full-text index scores it
(docs/search.md#bm25-from-memory).

A LanceDB full-text query costs ~4 ms of fixed overhead even on a few thousand rows, while the
arithmetic is well under a millisecond. While a table is small enough to be held in memory, the
lexical pool is answered here instead, from postings built once per table version.

The analysis repeats the chain LanceDB's default `FTS()` index runs (tantivy's filters, in this
order): split into runs of letters and digits, drop tokens of 40 bytes or more, lower-case, stem
(Snowball English), drop English stop words (after stemming, as LanceDB does), fold accented
Latin letters to ASCII. The score is Okapi BM25 with k1 = 1.2, b = 0.75 and
idf = ln(1 + (N - n + 0.5) / (n + 0.5)), a query term counted as often as it is repeated.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import unicodedata
from array import array
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

_ARRAYS = ("starts", "rows", "counts", "norms", "lengths")
K1 = 1.2
B = 0.75
MAX_TOKEN_BYTES = 40  # tokens this long or longer are dropped (tantivy's RemoveLongFilter)
# The English stop words LanceDB drops: NLTK's list, as single tokens (a contraction's pieces are
# listed on their own: "don", "t"). Found by indexing every word of the benchmark corpora.
_STOP_WORD_LIST = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did doing
    a an the and but if or because as until while of at by for with about against between into
    through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very s t can will just don should now d ll m o re
    ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn
    weren won wouldn
"""
STOP_WORDS = frozenset(_STOP_WORD_LIST.split())
# Runs of letters and digits (Python's \w without the underscore): tantivy's simple tokenizer.
_WORD_RE = re.compile(r"[^\W_]+")
# Letters NFKD does not take apart, folded as LanceDB folds them.
_SPECIAL_FOLDS = {
    "ß": "ss",
    "æ": "ae",
    "ø": "o",
    "œ": "oe",
    "đ": "d",
    "ð": "d",
    "ł": "l",
    "þ": "th",
    "ı": "i",
}
_CACHE_LIMIT = 500_000  # distinct words remembered before the cache starts over


def _fold_char(char: str) -> str:
    if char in _SPECIAL_FOLDS:
        return _SPECIAL_FOLDS[char]
    plain = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return plain if plain and plain.isascii() else char


def _fold(term: str) -> str:
    """Letters and digits with an ASCII form to it (é → e, ﬁ → fi, ² → 2); others as they are
    (Greek, Cyrillic and CJK keep their marks, as LanceDB keeps them)."""
    return term if term.isascii() else "".join(_fold_char(c) for c in term)


class Analyzer:
    """Text to index terms. Thread-safe; remembers each distinct word's term."""

    def __init__(self) -> None:
        self._stemmer: Any = None  # loaded on first use: a one-shot command may never need it
        self._terms: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def _term(self, word: str) -> str | None:
        if len(word.encode("utf-8")) >= MAX_TOKEN_BYTES:
            return None
        with self._lock:  # the Snowball stemmer keeps state between calls
            if self._stemmer is None:
                import snowballstemmer

                self._stemmer = snowballstemmer.stemmer("english")
            stem = self._stemmer.stemWord(word.lower())
        return None if stem in STOP_WORDS else _fold(stem)

    def terms(self, text: str) -> list[str]:
        cache = self._terms
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        out = []
        for word in _WORD_RE.findall(text):
            try:
                term = cache[word]
            except KeyError:
                term = cache[word] = self._term(word)
            if term is not None:
                out.append(term)
        return out


ANALYZER = Analyzer()


@dataclass(frozen=True)
class Lexicon:
    """Postings of every term over the snapshot's rows (row positions), with each row's length."""

    term_ids: dict[str, int]
    starts: npt.NDArray[np.int64]  # term t's postings are rows[starts[t]:starts[t + 1]]
    rows: npt.NDArray[np.int32]
    counts: npt.NDArray[np.float32]
    norms: npt.NDArray[np.float64]  # k1 * (1 - b + b * length / average length), per row
    documents: int  # N: the rows with at least one term
    lengths: npt.NDArray[np.int32]  # terms per row: what the norms come from when rows change

    @classmethod
    def build(cls, texts: Iterable[str], analyzer: Analyzer = ANALYZER) -> Lexicon:
        term_ids: dict[str, int] = {}
        return cls._of(term_ids, *_postings(texts, term_ids, 0, analyzer))

    @classmethod
    def _of(
        cls,
        term_ids: dict[str, int],
        terms: npt.NDArray[np.int32],
        rows: npt.NDArray[np.int32],
        counts: npt.NDArray[np.float32],
        lengths: npt.NDArray[np.int32],
    ) -> Lexicon:
        """The postings from one (term, row, count) triple per posting, rows ascending within a term."""
        order = np.argsort(terms, kind="stable")  # rows stay in order within a term
        starts = np.searchsorted(terms[order], np.arange(len(term_ids) + 1)).astype(np.int64)
        length = lengths.astype(np.float64)
        # LanceDB counts only rows with at least one term, and averages their lengths in f32.
        documents = int(np.count_nonzero(length))
        average = float(np.float32(length.sum()) / np.float32(max(documents, 1))) or 1.0
        norms = K1 * (1.0 - B + B * length / average)
        return cls(term_ids, starts, rows[order], counts[order], norms, documents, lengths)

    def updated(
        self, keep: npt.NDArray[np.bool_], texts: Iterable[str], analyzer: Analyzer = ANALYZER
    ) -> Lexicon:
        """The postings of the rows `keep` leaves, in their order, then of `texts` as new rows after
        them: what `build` gives over the new rows, analysing only the new texts
        (docs/search.md#bm25-from-memory). A term no row holds any more is dropped."""
        terms = np.repeat(np.arange(len(self.term_ids), dtype=np.int32), np.diff(self.starts))
        kept = keep[self.rows]
        position = np.cumsum(keep, dtype=np.int64) - 1  # a kept row's new position
        old_terms, old_rows, old_counts = terms[kept], position[self.rows[kept]], self.counts[kept]
        term_ids = dict(self.term_ids)
        new_terms, new_rows, new_counts, new_lengths = _postings(
            texts, term_ids, int(np.count_nonzero(keep)), analyzer
        )
        all_terms = np.concatenate([old_terms, new_terms])
        # Terms no row holds any more go, and the others keep their order.
        used = np.zeros(len(term_ids), dtype=bool)
        used[all_terms] = True
        if used.all():  # the common case for a small change: every id stays, nothing to renumber
            live, renumbered = term_ids, all_terms
        else:
            new_id = np.cumsum(used, dtype=np.int64) - 1
            names = sorted(term_ids, key=term_ids.__getitem__)
            live = {name: int(new_id[i]) for i, name in enumerate(names) if used[i]}
            renumbered = new_id[all_terms]
        return Lexicon._of(
            live,
            renumbered.astype(np.int32),
            np.concatenate([old_rows, new_rows]).astype(np.int32),
            np.concatenate([old_counts, new_counts]),
            np.concatenate([self.lengths[keep], new_lengths]).astype(np.int32),
        )

    @property
    def size(self) -> int:
        return int(self.norms.size)

    def save(self, directory: Path) -> None:
        """Write the postings as files `load` maps back (docs/design.md#search-snapshot): the terms one
        per line in id order (a term is a run of letters and digits, never a newline), each array as
        a `.npy` file, and N in `lexicon.json`."""
        terms = sorted(self.term_ids, key=self.term_ids.__getitem__)
        (directory / "bm25-terms.txt").write_text("\n".join(terms), encoding="utf-8")
        for name in _ARRAYS:
            np.save(directory / f"bm25-{name}.npy", getattr(self, name), allow_pickle=False)
        (directory / "bm25.json").write_text(json.dumps({"documents": self.documents}), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> Lexicon:
        """The postings `save` wrote, the arrays mapped read-only rather than read."""
        text = (directory / "bm25-terms.txt").read_text(encoding="utf-8")
        terms = text.split("\n") if text else []
        arrays = {name: load_array(directory / f"bm25-{name}.npy") for name in _ARRAYS}
        documents = int(json.loads((directory / "bm25.json").read_text(encoding="utf-8"))["documents"])
        return cls(dict(zip(terms, range(len(terms)), strict=True)), documents=documents, **arrays)

    def query_terms(self, query: str, analyzer: Analyzer = ANALYZER) -> Counter[int]:
        """The ids of `query`'s terms that some row holds, each with how often the query repeats it."""
        return Counter(self.term_ids[t] for t in analyzer.terms(query) if t in self.term_ids)

    def scores(self, query: str, analyzer: Analyzer = ANALYZER) -> npt.NDArray[np.float64] | None:
        """Every row's BM25 score for `query` (0 where no term matches); None when none does."""
        wanted = self.query_terms(query, analyzer)
        if not wanted:
            return None
        total = np.zeros(self.size, dtype=np.float64)
        for term, repeats in wanted.items():
            start, end = self.starts[term], self.starts[term + 1]
            rows, counts = self.rows[start:end], self.counts[start:end]
            total[rows] += bm25(repeats, end - start, self.documents, counts, self.norms[rows])
        return total

    def top(
        self, query: str, limit: int, keep: npt.NDArray[np.bool_] | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The `limit` best rows (positions) and their scores, best first; ties by position.
        `keep` masks rows out (a pre-filter)."""
        total = self.scores(query)
        if total is None:
            return np.empty(0, dtype=np.int64), np.empty(0)
        if keep is not None:
            total = np.where(keep, total, 0.0)
        matched = np.flatnonzero(total > 0.0)
        if matched.size > limit:
            # Keep every row tied with the last one in, so the order below breaks ties by position.
            cut = -np.partition(-total[matched], limit - 1)[limit - 1]
            matched = matched[total[matched] >= cut]
        order = np.lexsort((matched, -total[matched]))[:limit]
        best = matched[order]
        return best, total[best]


def _postings(
    texts: Iterable[str], term_ids: dict[str, int], first_row: int, analyzer: Analyzer
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.float32], npt.NDArray[np.int32]]:
    """Each text's (term, row, count) postings, rows numbered from `first_row`, and its length in
    terms; new terms are added to `term_ids`."""
    # In flat arrays: a tuple per posting cost ~15x the memory.
    term_of, row_of, count_of, lengths = array("i"), array("i"), array("i"), array("i")
    for row, text in enumerate(texts, start=first_row):
        terms = analyzer.terms(text)
        lengths.append(len(terms))
        counted = Counter(terms)
        term_of.extend(term_ids.setdefault(term, len(term_ids)) for term in counted)
        row_of.extend(repeat(row, len(counted)))
        count_of.extend(counted.values())
    return (
        np.frombuffer(term_of, dtype=np.int32),
        np.frombuffer(row_of, dtype=np.int32),
        np.frombuffer(count_of, dtype=np.int32).astype(np.float32),
        np.frombuffer(lengths, dtype=np.int32).copy(),
    )


def bm25(
    repeats: int, df: int, documents: int, tf: npt.NDArray[Any], norms: npt.NDArray[Any]
) -> npt.NDArray[np.float64]:
    """One query term's share of BM25 (the module's formula) for the documents holding it `tf`
    times, whose length norms are `norms`: in `df` of `documents` documents."""
    idf = np.log(1.0 + (documents - df + 0.5) / (df + 0.5))
    result: npt.NDArray[np.float64] = repeats * idf * (K1 + 1.0) * tf / (tf + norms)
    return result


def load_array(path: Path) -> npt.NDArray[Any]:
    """A `.npy` file mapped read-only (its pages shared by every process that maps it); an empty
    array is read, as an empty file region cannot be mapped."""
    try:
        array: npt.NDArray[Any] = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError:
        array = np.load(path, allow_pickle=False)
    return array


# One build at a time, off the search path (docs/search.md#bm25-from-memory).
_BUILDS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragdown-lexicon")
log = logging.getLogger(__name__)


class LexiconBuild:
    """The postings of one snapshot's rows, built on a background thread once they are wanted: by the
    snapshot's second search (so a one-shot command never pays for them) or by the warm-up."""

    def __init__(self, texts: pa.ChunkedArray | None) -> None:
        self._texts = texts
        self._future: Future[Lexicon | None] | None = None
        self._searches = 0
        self._lock = threading.Lock()

    @classmethod
    def built(cls, lexicon: Lexicon) -> LexiconBuild:
        """Postings that are ready already (read from a snapshot on disk)."""
        build = cls(None)
        future: Future[Lexicon | None] = Future()
        future.set_result(lexicon)
        build._future = future
        return build

    def ready(self) -> Lexicon | None:
        """The postings if they are built; None before, or if the build failed."""
        future = self._future
        return future.result() if future is not None and future.done() else None

    def searched(self) -> None:
        """Count a search of the snapshot that found no postings; the second starts the build."""
        with self._lock:
            self._searches += 1
            start = self._searches >= 2
        if start:
            self.start()

    def start(self) -> Future[Lexicon | None]:
        with self._lock:
            if self._future is None:
                self._future = _BUILDS.submit(self._build)
            return self._future

    def _build(self) -> Lexicon | None:
        texts, self._texts = self._texts, None  # the texts are not kept past the build
        if texts is None:  # a snapshot made without them has no postings
            return None
        try:
            return Lexicon.build(texts.to_pylist())
        except Exception:  # a failed build leaves BM25 to LanceDB
            log.exception("could not build the in-memory BM25 postings")
            return None
