"""The path rule (docs/documents.md#the-path-rule, docs/security.md): the lexical half (`check_path`), the
physical half as it
refuses a path (`documents/files.py`), and the docs/design.md#configuration RAGDOWN_NOTES_DIR rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import check_path, notes_dir, shown
from ragdown.errors import ConfigError, Refusal


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "ops").mkdir(parents=True)
    (folder / "ops" / "pg.md").write_text("# Postgres\n")
    return folder


def validate_path(root: Path, path: str, *, markdown_only: bool, create: bool = False) -> Path:
    """Both halves of the rule, as every write applies them: the parts, then the folders on the way."""
    checked = check_path(path, markdown_only=markdown_only)
    at = Root.at(root)
    if create:
        with files.directory(at, checked.parts[:-1], create=True, display=path):
            pass
    else:
        files.lstat(at, checked.parts, display=path)
    return at.path.joinpath(*checked.parts)


def refusal(root: Path, path: str, *, markdown_only: bool = True) -> Refusal:
    with pytest.raises(Refusal) as caught:
        validate_path(root, path, markdown_only=markdown_only)
    assert caught.value.status == 400
    return caught.value


@pytest.mark.parametrize("path", ["", "/etc/x.md", "C:/x.md", "c:x.md", "\\x.md"])
def test_a_path_must_be_relative(root: Path, path: str) -> None:
    assert str(refusal(root, path)) == f"path must be relative to the docs folder: {path}"


@pytest.mark.parametrize("path", [".", "./", "..", "../x.md", "ops/../../x.md", "a/./../.."])
def test_a_path_must_stay_inside(root: Path, path: str) -> None:
    assert str(refusal(root, path)) == f"path is outside the docs folder: {path}"


@pytest.mark.parametrize(
    "path", [".obsidian/x.md", "ops/.hidden.md", "node_modules/x.md", "a/node_modules/b.md", "a\0b/x.md"]
)
def test_a_path_the_index_skips_is_refused(root: Path, path: str) -> None:
    assert str(refusal(root, path)) == f"path names a folder or file the index skips: {shown(path)}"


def test_a_backslash_is_a_separator_not_part_of_a_name(root: Path) -> None:
    assert check_path("ops\\pg.md", markdown_only=True).relative == "ops/pg.md"
    assert str(refusal(root, "ops\\.git\\x.md")).startswith("path names a folder or file the index skips")


@pytest.mark.parametrize("path", ["ops/diagram.png", "notes", "x.md.txt"])
def test_writes_are_markdown_only(root: Path, path: str) -> None:
    message = f"only Markdown files (.md, .markdown, .mdx) can be written: {path}"
    assert str(refusal(root, path)) == message
    validate_path(root, path, markdown_only=False)


@pytest.mark.parametrize("path", ["a.md", "a.MARKDOWN", "a.mdx", "A.Md"])
def test_markdown_extensions_in_any_case(root: Path, path: str) -> None:
    validate_path(root, path, markdown_only=True)


def test_a_file_or_a_symlink_on_the_way_is_refused(root: Path, tmp_path: Path) -> None:
    message = "a folder on the path is a file or a symlink: ops/pg.md/x.md"
    assert str(refusal(root, "ops/pg.md/x.md")) == message
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    assert str(refusal(root, "link/x.md")) == "a folder on the path is a file or a symlink: link/x.md"
    assert str(refusal(root, "link/deeper/x.md", markdown_only=False)).startswith("a folder on the path")
    # The last segment may be a symlink: what to do with it is the caller's decision (not a file).
    validate_path(root, "link", markdown_only=False)


def test_resolves_against_the_real_path_and_normalises(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    assert Root.at(alias).path == root.resolve()
    assert check_path("./ops//sub/../pg.md", markdown_only=True).relative == "ops/pg.md"


def test_missing_folders_are_made_only_with_create(root: Path) -> None:
    validate_path(root, "new/deeper/x.md", markdown_only=True)
    assert not (root / "new").exists()
    full = validate_path(root, "new/deeper/x.md", markdown_only=True, create=True)
    assert (root / "new" / "deeper").is_dir()
    assert not full.exists()


@pytest.mark.parametrize(
    ("value", "expected"),
    [("notes", "notes"), ("notes/", "notes"), ("a/./b", "a/b"), ("a\\b", "a/b"), (".", ""), ("", "")],
)
def test_notes_dir_is_normalised(value: str, expected: str) -> None:
    assert notes_dir(value) == expected


@pytest.mark.parametrize("value", [".hidden", "a/node_modules", "no\0tes", "a/.git/b"])
def test_notes_dir_the_index_skips_is_refused(value: str) -> None:
    with pytest.raises(ConfigError, match=r"^RAGDOWN_NOTES_DIR names a folder the index skips: "):
        notes_dir(value)


@pytest.mark.parametrize("value", ["..", "../x", "a/../../x", "/abs/notes"])
def test_notes_dir_must_stay_inside(value: str) -> None:
    with pytest.raises(ConfigError, match=r"^RAGDOWN_NOTES_DIR must be a path inside the folder: "):
        notes_dir(value)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("a\nb.md", "path contains a control character (U+000A); names are plain text: a\\u000ab.md"),
        ("a\u202eb.md", "path contains a control character (U+202E); names are plain text: a\\u202eb.md"),
        ("a\u2028b.md", "path contains a control character (U+2028); names are plain text: a\\u2028b.md"),
        ("\uff0e\uff0e/x.md", "path names a look-alike of a dot or a slash: \uff0e\uff0e/x.md"),
        ("\u2025/x.md", "path names a look-alike of a dot or a slash: \u2025/x.md"),
        ("a\uff0fb.md", "path names a look-alike of a dot or a slash: a\uff0fb.md"),
    ],
)
def test_control_characters_and_look_alikes_are_refused_by_name(path: str, message: str) -> None:
    with pytest.raises(Refusal) as caught:
        check_path(path, markdown_only=True)
    assert (caught.value.status, str(caught.value)) == (400, message)


def test_names_and_paths_are_bounded_and_a_refusal_never_repeats_a_wall_of_text() -> None:
    check_path("a" * 252 + ".md", markdown_only=True)
    check_path("/".join(["b" * 200] * 5) + "/c.md", markdown_only=True)
    for path, detail in [
        ("a" * 253 + ".md", "path is too long (a name of 256 bytes; at most 255)"),
        ("é" * 127 + ".md", "path is too long (a name of 257 bytes; at most 255)"),
        ("/".join(["b" * 200] * 6), "path is too long (1,205 bytes; at most 1,024)"),
        ("a" * 5000 + ".md", "path is too long (5,003 bytes; at most 1,024)"),
    ]:
        with pytest.raises(Refusal) as caught:
            check_path(path, markdown_only=True)
        assert str(caught.value).startswith(detail + ": ")
        assert len(str(caught.value)) < 250


def test_shown_escapes_controls_and_cuts_long_paths() -> None:
    assert shown("ops/a.md") == "ops/a.md"
    assert shown("a\nb\x1b") == "a\\u000ab\\u001b"
    assert shown("x" * 500) == "x" * 120 + "… (500 characters)"


def test_a_path_that_is_not_utf8_is_refused_with_its_bytes_shown(root: Path) -> None:
    """docs/security.md#tenants: the name Python gives a file named with the byte 0xff (`\\udcff`) is
    refused as such, not as a control character, and the message is UTF-8 text."""
    for path, shown_as in (("ops/bad\udcffname.md", "ops/bad\\xffname.md"), ("a\ud800.md", "a\\ud800.md")):
        message = str(refusal(root, path))
        assert message == f"path is not UTF-8; rename the file to a UTF-8 name: {shown_as}"
        message.encode("utf-8")
    assert shown("caf\udce9/x.md") == "caf\\xe9/x.md"


def test_a_path_must_be_a_string() -> None:
    with pytest.raises(Refusal, match="path must be a string"):
        check_path(5, markdown_only=True)  # type: ignore[arg-type]  # what a JSON body may hold
