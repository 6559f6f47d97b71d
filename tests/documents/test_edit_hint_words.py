"""An edit whose old_text matched nothing gets the nearest passage even when its words differ from the
document's by punctuation, hyphens, underscores, case or a plural's ending (docs/documents.md#edit)."""

from __future__ import annotations

import pytest

from ragdown.documents.text_edits import Edit, Passage, apply_edits, nearest_passage
from ragdown.errors import NotFoundError

DOC = (
    "# Postgres backups\n\n## Restore\n\n"
    "The `pg-dump` credentials live in the vault.\nRotate them monthly.\n\n"
    "## Boxes\n\nThree storage boxes hold the policies.\n"
)


@pytest.mark.parametrize(
    ("old_text", "expected"),
    [
        # The report of issue 28: no hint at all before.
        ("pg dump credential", Passage(5, 5, "`pg-dump` credentials")),
        ("pg_dump credentials", Passage(5, 5, "`pg-dump` credentials")),
        (
            "The pg_dump credential lives in the vault",
            Passage(5, 5, "The `pg-dump` credentials live in the vault."),
        ),
        ("storage box holds the policy", Passage(10, 10, "storage boxes hold the policies.")),
    ],
)
def test_words_that_differ_by_punctuation_or_plural_still_find_the_passage(
    old_text: str, expected: Passage
) -> None:
    assert nearest_passage(DOC, old_text) == expected
    assert expected.text in DOC  # whole words of the document: copying it as old_text matches
    with pytest.raises(NotFoundError) as raised:
        apply_edits(DOC, [Edit(old_text, "x")])
    assert raised.value.message.endswith(f"copy old_text from it exactly:\n{expected.text}")


def test_the_earlier_tries_still_win() -> None:
    # A run alike word for word (try 3) is offered as it was, not grown to normalised words.
    assert nearest_passage(DOC, "Rotate it monthly.") == Passage(6, 6, "Rotate them monthly.")
    # A first line equal once trimmed (try 4) still comes before normalised words.
    old_text = "  Rotate them monthly.  \nnothing else here agrees with the document at all"
    assert nearest_passage(DOC, old_text) == Passage(6, 7, "Rotate them monthly.\n")


def test_normalised_words_still_need_most_of_them_to_agree() -> None:
    assert nearest_passage(DOC, "mysql dump passwords") is None  # one of three
    assert nearest_passage(DOC, "vaults") is None  # a single word never guesses, normalised or not
