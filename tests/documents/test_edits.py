"""docs/documents.md#edit exact-passage edits."""

from __future__ import annotations

import pytest

from ragdown.documents.text_edits import (
    Edit,
    EditOutcome,
    Passage,
    apply_edits,
    nearest_passage,
    with_line_endings_of,
)
from ragdown.errors import Refusal

TEXT = "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n"
FALLBACK = (
    "It must match character for character, whitespace included: "
    "read the document again and copy the passage from it"
)


def refusal(text: str, edits: list[Edit]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        apply_edits(text, edits)
    return caught.value


def test_one_passage_is_swapped_and_the_rest_kept() -> None:
    assert apply_edits(TEXT, [Edit("twice", "once")]) == EditOutcome(
        "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore once.\n", 1
    )


def test_spec_vector_two_edits_replace_two() -> None:
    outcome = apply_edits(
        TEXT,
        [Edit("Nightly", "Hourly"), Edit("Run pg_restore twice.", "Run pg_restore once.\n\nThen vacuum.")],
    )
    assert outcome == EditOutcome(
        "# Backups\n\nHourly snapshots.\n\n## Restore\n\nRun pg_restore once.\n\nThen vacuum.\n", 2
    )


def test_each_edit_applies_to_the_result_of_the_one_before() -> None:
    outcome = apply_edits(
        TEXT,
        [
            Edit("Nightly", "Hourly"),
            Edit("Hourly snapshots.", "Hourly snapshots, kept a week."),
            Edit("\n## Restore\n\nRun pg_restore twice.\n", ""),
        ],
    )
    assert outcome == EditOutcome("# Backups\n\nHourly snapshots, kept a week.\n", 3)


def test_same_text_is_a_400() -> None:
    error = refusal(TEXT, [Edit("twice", "twice")])
    assert error.status == 400
    assert error.message == "edit 1 of 1: old_text and new_text are the same, so nothing was written"
    assert str(error) == error.message
    assert isinstance(error, Refusal)


def test_same_text_after_crlf_normalisation_is_a_400() -> None:
    assert refusal(TEXT, [Edit("a\r\nb", "a\nb")]).status == 400


def test_missing_passage_without_a_near_one_is_a_404_with_the_fallback() -> None:
    error = refusal(TEXT, [Edit("thrice", "once")])
    assert error.status == 404
    assert error.message == (
        f"edit 1 of 1: old_text is not in the document, so nothing was written. {FALLBACK}"
    )


def test_spec_vector_two_spaces_shows_the_nearest_passage_with_lines() -> None:
    text = "# Backups\n\nHourly snapshots.\n"
    error = refusal(text, [Edit("Hourly  snapshots.", "x")])
    assert error.status == 404
    assert error.message == (
        "edit 1 of 1: old_text is not in the document, so nothing was written. "
        "The nearest passage (line 3) follows; copy old_text from it exactly:\nHourly snapshots."
    )


def test_nearest_passage_spans_lines_when_whitespace_differs() -> None:
    error = refusal(TEXT, [Edit("Nightly  snapshots.\n\n\n## Restore", "x")])
    assert error.message.endswith(
        "The nearest passage (lines 3-5) follows; copy old_text from it exactly:\n"
        "Nightly snapshots.\n\n## Restore"
    )


def test_nearest_passage_falls_back_to_the_first_line() -> None:
    # What follows the first line is out of date: the lines there now are what is shown.
    error = refusal(TEXT, [Edit("## Restore\n\nRun pg_restore (once).", "x")])
    assert error.message.endswith(
        "(lines 5-7) follows; copy old_text from it exactly:\n## Restore\n\nRun pg_restore twice."
    )


def test_later_edits_name_no_lines() -> None:
    error = refusal(TEXT, [Edit("# Backups\n\n", ""), Edit("Nightly  snapshots.", "x")])
    assert error.status == 404
    assert error.message == (
        "edit 2 of 2: old_text is not in the document, so nothing was written. "
        "The nearest passage follows; copy old_text from it exactly:\nNightly snapshots."
    )


def test_spec_vector_six_occurrences_is_a_409() -> None:
    error = refusal(TEXT, [Edit("twice", "once"), Edit("s", "z")])
    assert error.status == 409
    assert error.message == (
        "edit 2 of 2: old_text is in the document 6 times, so nothing was written. "
        "Add the text around the one you mean until it matches once, or pass replace_all: true"
    )


def test_replace_all_is_literal() -> None:
    assert apply_edits("a.b a.b", [Edit("a.b", "$& $1", replace_all=True)]) == EditOutcome("$& $1 $& $1", 2)
    assert apply_edits("x", [Edit("x", r"\1 \g<0> \\")]).text == r"\1 \g<0> \\"


def test_replace_all_counts_every_occurrence() -> None:
    assert apply_edits(TEXT, [Edit("s", "z", replace_all=True)]).replaced == 6


def test_crlf_document_matches_lf_old_text() -> None:
    assert apply_edits("One\r\nTwo\r\nThree\r\n", [Edit("One\nTwo", "1\n2")]).text == "1\n2\nThree\n"


def test_spec_vector_crlf_round_trip() -> None:
    original = "# A\r\n\r\nfirst\r\nsecond\r\n"
    outcome = apply_edits(original, [Edit("first\nsecond", "one\ntwo")])
    assert outcome.text == "# A\n\none\ntwo\n"
    assert with_line_endings_of(original, outcome.text) == "# A\r\n\r\none\r\ntwo\r\n"


def test_crlf_in_old_and_new_text_is_normalised() -> None:
    outcome = apply_edits("a\nb\n", [Edit("a\r\nb", "c\r\nd")])
    assert outcome.text == "c\nd\n"


def test_lf_file_stays_lf() -> None:
    assert with_line_endings_of("a\nb\n", "c\nd\n") == "c\nd\n"
    assert with_line_endings_of("a\r\nb", "c\r\nd\ne") == "c\r\nd\r\ne"


def test_empty_old_text_is_not_found() -> None:
    error = refusal(TEXT, [Edit("", "x")])
    assert error.status == 404
    assert error.message.endswith(FALLBACK)


def test_no_edits_changes_nothing() -> None:
    assert apply_edits("a\r\nb", []) == EditOutcome("a\nb", 0)


def test_nearest_passage_cases() -> None:
    assert nearest_passage("a\n  b   c\nd", "b c") == Passage(2, 2, "b   c")
    assert nearest_passage("a\nb\n\nc", "b\nc") == Passage(2, 4, "b\n\nc")
    assert nearest_passage("x\n  head  \ny\nz", "head\nnope\nmore\nand more") == Passage(
        2, 4, "  head  \ny\nz"
    )
    assert nearest_passage("abc", "   ") is None
    assert nearest_passage("abc", "zzz") is None
    # Regex metacharacters in the words are matched literally.
    assert nearest_passage("see (a.b)  [c]", "(a.b) [c]") == Passage(1, 1, "(a.b)  [c]")


DOC = (
    "# Vacuum\n\nNightly vacuum on postgres keeps bloat down.\nSee the runbook before a FULL vacuum.\n\n"
    "## Schedule\n\nRuns at 02:00 UTC on every primary.\n"
)


@pytest.mark.parametrize(
    ("old_text", "expected"),
    [
        # A case difference, spacing too: the exact words shown as the document has them.
        ("see the runbook before a full  vacuum.", Passage(4, 4, "See the runbook before a FULL vacuum.")),
        # One word changed, even at the end: the document's word in its place is shown.
        ("keeps bloat low.", Passage(3, 3, "keeps bloat down.")),
        ("Runs at 03:00 UTC on every primary.", Passage(8, 8, "Runs at 02:00 UTC on every primary.")),
        # A word dropped, a word added, across a line break.
        ("postgres keeps down.\nSee the", Passage(3, 4, "postgres keeps bloat down.\nSee the")),
        (
            "Nightly vacuum on the postgres keeps bloat",
            Passage(3, 3, "Nightly vacuum on postgres keeps bloat"),
        ),
    ],
)
def test_the_nearest_passage_differs_by_a_word_or_by_case(old_text: str, expected: Passage) -> None:
    assert nearest_passage(DOC, old_text) == expected
    error = refusal(DOC, [Edit(old_text, "x")])
    assert error.message.endswith(f"copy old_text from it exactly:\n{expected.text}")
    assert expected.text in DOC  # what is offered can be copied as old_text and will match


def test_too_few_shared_words_is_no_hint() -> None:
    assert nearest_passage(DOC, "bloat up") is None  # one of two words: too little to go on
    assert nearest_passage(DOC, "daily reindex of mysql tables") is None
    assert nearest_passage(DOC, "vacuuum") is None  # a single word never guesses


def test_the_run_is_found_in_a_long_document() -> None:
    filler = "".join(f"Line {n} says nothing about the topic at all.\n" for n in range(5000))
    text = filler + "The restore needs the WAL archive from the night before.\n" + filler
    found = nearest_passage(text, "The restore needs a WAL archive from the night before.")
    assert found == Passage(5001, 5001, "The restore needs the WAL archive from the night before.")
