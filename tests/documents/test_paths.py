"""§6.9 path validation and the §7.5 RAGDOWN_NOTES_DIR rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragdown.documents.errors import Refusal
from ragdown.documents.paths import notes_dir, resolve_path, validate_path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "ops").mkdir(parents=True)
    (folder / "ops" / "pg.md").write_text("# Postgres\n")
    return folder


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
    assert str(refusal(root, path)) == f"path names a folder or file the index skips: {path}"


def test_a_backslash_is_a_separator_not_part_of_a_name(root: Path) -> None:
    assert resolve_path(root, "ops\\pg.md", markdown_only=True).relative == "ops/pg.md"
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
    resolved = resolve_path(alias, "./ops//sub/../pg.md", markdown_only=True)
    assert resolved.full == Path(os.path.realpath(root)) / "ops" / "pg.md"
    assert resolved.relative == "ops/pg.md"


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
    with pytest.raises(ValueError, match=r"^RAGDOWN_NOTES_DIR names a folder the index skips: "):
        notes_dir(value)


@pytest.mark.parametrize("value", ["..", "../x", "a/../../x", "/abs/notes"])
def test_notes_dir_must_stay_inside(value: str) -> None:
    with pytest.raises(ValueError, match=r"^RAGDOWN_NOTES_DIR must be a path inside the folder: "):
        notes_dir(value)
