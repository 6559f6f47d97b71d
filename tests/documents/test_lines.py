"""docs/documents.md#lines-fences-and-headings line handling and the shared fence rule of
docs/documents.md#sections-and-breadcrumbs."""

from __future__ import annotations

import pytest

from ragdown.documents.chunks import CHUNKER_VERSION, chunk_markdown
from ragdown.documents.lines import FenceTracker, split_lines


def test_chunker_version_is_3() -> None:
    assert CHUNKER_VERSION == 3


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("", [""]),
        ("a", ["a"]),
        ("a\n", ["a", ""]),
        ("a\r\nb", ["a", "b"]),
        ("a\rb", ["a", "b"]),
        ("a\r\n", ["a", ""]),
        ("a\r", ["a", ""]),
        ("a\r\rb", ["a", "", "b"]),
        ("a\n\r\nb", ["a", "", "b"]),
        ("a\r\n\rb\nc\n", ["a", "", "b", "c", ""]),
        ("\n\n", ["", "", ""]),
    ],
)
def test_split_lines_normalises_newlines_and_counts_the_trailing_empty_line(
    source: str, expected: list[str]
) -> None:
    assert split_lines(source) == expected


@pytest.mark.parametrize("separator", ["\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"])
def test_split_lines_splits_on_newline_only(separator: str) -> None:
    assert split_lines(f"a{separator}b\nc") == [f"a{separator}b", "c"]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_chunk_line_numbers_are_the_same_for_every_newline_style(newline: str) -> None:
    source = newline.join(["---", "title: T", "---", "# H", "", "one", "two", ""])
    [chunk] = chunk_markdown(source, "x.md", 1500)
    assert (chunk.title, chunk.heading, chunk.text) == ("T", "H", "one\ntwo")
    assert (chunk.line_start, chunk.line_end) == (6, 7)
    assert "\r" not in chunk.text


def test_trailing_newline_counts_as_a_line_in_the_headings_only_fallback() -> None:
    # "# Stub\n## Todo\n" has three lines: the trailing newline makes an empty third one.
    [chunk] = chunk_markdown("# Stub\n## Todo\n", "stub.md", 1500)
    assert chunk.text == "# Stub\n## Todo"
    assert (chunk.line_start, chunk.line_end) == (1, 3)


def test_crlf_trailing_newline_counts_too() -> None:
    [chunk] = chunk_markdown("# Stub\r\n## Todo\r\n\r\n", "stub.md", 1500)
    assert chunk.text == "# Stub\n## Todo"
    assert (chunk.line_start, chunk.line_end) == (1, 4)


def _fence_states(lines: list[str]) -> list[tuple[bool, bool]]:
    """For each line: (is a fence line, a fence is open after it)."""
    tracker = FenceTracker()
    return [(tracker.feed(line), tracker.open) for line in lines]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # Backtick fence with an info string on the opener.
        (["```python", "x", "```"], [(True, True), (False, True), (True, False)]),
        # Tilde fence.
        (["~~~", "x", "~~~"], [(True, True), (False, True), (True, False)]),
        # A tilde line does not close a backtick fence, and the reverse.
        (["```", "~~~", "```"], [(True, True), (True, True), (True, False)]),
        (["~~~~", "````", "~~~~"], [(True, True), (True, True), (True, False)]),
        # A longer closer closes; a shorter one does not.
        (["```", "`````"], [(True, True), (True, False)]),
        (["````", "```", "````"], [(True, True), (True, True), (True, False)]),
        # An info string after the closing marker does not stop the close.
        (["```", "```js"], [(True, True), (True, False)]),
        # Up to three spaces of indent; four is not a fence.
        (["   ```", "   ```"], [(True, True), (True, False)]),
        (["    ```", "x"], [(False, False), (False, False)]),
        # Two backticks or tildes are not a fence.
        (["``", "~~"], [(False, False), (False, False)]),
        # A fence re-opens after it closed.
        (["```", "```", "~~~"], [(True, True), (True, False), (True, True)]),
    ],
)
def test_fence_tracking(lines: list[str], expected: list[tuple[bool, bool]]) -> None:
    assert _fence_states(lines) == expected
