"""Folders as `ragdown.folders.registry` reads them: each top-level real directory of the docs dir, its
`.ragdown.json` read again on every call, each setting taken only when it has the right type, and a
folder's `tokens` closing it to the shared token even when they are malformed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ragdown.folders.registry import SHA256_RE, Folder, list_folders, read_folder, token_digests

DIGEST_A = hashlib.sha256(b"token-a").hexdigest()
DIGEST_B = hashlib.sha256(b"token-b").hexdigest()
CLOSED = frozenset({"-"})


def folder(docs: Path, name: str, config: Any = None) -> Path:
    path = docs / name
    path.mkdir()
    if config is not None:
        (path / ".ragdown.json").write_text(json.dumps(config), encoding="utf-8")
    return path


def test_a_folder_without_settings_is_named_for_itself_and_off_mcp(docs: Path) -> None:
    folder(docs, "ops")
    assert read_folder(docs, "ops") == Folder(name="ops", title="ops", mcp=False)


def test_each_setting_is_read_from_the_file(docs: Path) -> None:
    config = {
        "title": "Ops runbooks",
        "mcp": True,
        "read_only": True,
        "disabled_tools": ["ragdown_stats", "ragdown_list"],
        "managed_by": "RagdownFolder team/ops",
        "tokens": [{"name": "team-a", "sha256": DIGEST_A}],
        "colour": "red",
    }
    folder(docs, "ops", config)
    read = read_folder(docs, "ops")
    assert read == Folder(
        name="ops",
        title="Ops runbooks",
        mcp=True,
        read_only=True,
        disabled_tools=frozenset({"ragdown_stats", "ragdown_list"}),
        managed_by="RagdownFolder team/ops",
        token_digests=frozenset({DIGEST_A}),
    )
    assert read is not None
    assert read.config == config  # unknown keys are kept for whoever rewrites the file


@pytest.mark.parametrize(
    ("config", "field", "expected"),
    [
        ({"mcp": "true"}, "mcp", False),
        ({"mcp": 1}, "mcp", False),
        ({"read_only": "yes"}, "read_only", False),
        ({"title": "   "}, "title", "ops"),
        ({"title": 7}, "title", "ops"),
        ({"managed_by": ""}, "managed_by", None),
        ({"managed_by": ["RagdownFolder a/b"]}, "managed_by", None),
        ({"disabled_tools": "ragdown_stats"}, "disabled_tools", frozenset()),
        ({"disabled_tools": ["ragdown_stats", 3, None]}, "disabled_tools", frozenset({"ragdown_stats"})),
    ],
)
def test_a_setting_of_the_wrong_type_is_its_default(
    docs: Path, config: dict[str, Any], field: str, expected: object
) -> None:
    """A hand-edited file is never taken to mean more than it says: `"mcp": "true"` is not on."""
    folder(docs, "ops", config)
    assert getattr(read_folder(docs, "ops"), field) == expected


def test_settings_are_read_again_on_every_call(docs: Path) -> None:
    path = folder(docs, "ops", {"mcp": True})
    assert read_folder(docs, "ops") == Folder(name="ops", title="ops", mcp=True)
    (path / ".ragdown.json").write_text(json.dumps({"mcp": False, "title": "Later"}), encoding="utf-8")
    assert read_folder(docs, "ops") == Folder(name="ops", title="Later", mcp=False)


@pytest.mark.parametrize(
    "name", ["", ".git", ".ragdown", "node_modules", "a/b", "..", "a\\b", "a\nb", "x" * 256, "é" * 128]
)
def test_names_that_are_no_folder_of_the_docs_dir_read_as_none(docs: Path, name: str) -> None:
    """Each is refused by the name, not for want of a directory: all that can exist do."""
    for there in (".git", ".ragdown", "node_modules", "a", "a/b", "a\\b", "a\nb"):
        (docs / there).mkdir()
    assert read_folder(docs, name) is None


def test_a_symlink_or_a_file_is_no_folder(docs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".ragdown.json").write_text(json.dumps({"mcp": True}), encoding="utf-8")
    (docs / "link").symlink_to(outside, target_is_directory=True)
    (docs / "notes.md").write_text("# Notes\n", encoding="utf-8")
    assert read_folder(docs, "link") is None
    assert read_folder(docs, "notes.md") is None
    assert read_folder(docs, "missing") is None


def test_list_folders_lists_real_visible_directories_by_name(docs: Path, tmp_path: Path) -> None:
    for name in ("zeta", "Alpha", "beta", ".hidden", "node_modules"):
        folder(docs, name)
    (docs / "loose.md").write_text("# Loose\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (docs / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert [f.name for f in list_folders(docs)] == ["Alpha", "beta", "zeta"]


# --- tokens ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (None, frozenset()),
        ([], frozenset()),
        ([{"name": "a", "sha256": DIGEST_A}], frozenset({DIGEST_A})),
        ([{"name": "a", "sha256": DIGEST_A.upper()}], frozenset({DIGEST_A})),
        (
            [{"name": "a", "sha256": DIGEST_A}, {"name": "b", "sha256": DIGEST_B}],
            frozenset({DIGEST_A, DIGEST_B}),
        ),
        # Valid entries count and the junk beside them is skipped.
        ([{"name": "a", "sha256": DIGEST_A}, "junk", {"sha256": "abc"}], frozenset({DIGEST_A})),
    ],
    ids=["absent", "empty-list", "one", "upper-case", "two", "some-junk"],
)
def test_valid_token_entries_give_their_digests(tokens: object, expected: frozenset[str]) -> None:
    assert token_digests(tokens) == expected


@pytest.mark.parametrize(
    "tokens",
    [
        ["junk"],
        [{"name": "a"}],
        [{"name": "a", "sha256": "abc"}],
        [{"name": "a", "sha256": DIGEST_A + "0"}],
        [{"name": "a", "sha256": int(DIGEST_A, 16)}],
        [{"name": "a", "sha256": "g" * 64}],
    ],
    ids=["string", "no-digest", "short", "long", "number", "not-hex"],
)
def test_a_list_with_no_valid_entry_closes_the_folder(tokens: object) -> None:
    assert token_digests(tokens) == CLOSED


@pytest.mark.parametrize(
    "tokens",
    [{"name": "a", "sha256": DIGEST_A}, DIGEST_A, 5, True, "team-a"],
    ids=["object", "digest-string", "number", "bool", "name"],
)
def test_tokens_that_are_not_a_list_close_the_folder(
    tokens: object, caplog: pytest.LogCaptureFixture
) -> None:
    """Even an object holding a valid entry: a typo must not open a team's folder to the shared token."""
    with caplog.at_level("WARNING", logger="ragdown.folders.registry"):
        assert token_digests(tokens) == CLOSED
    assert "only the admin token reaches it" in caplog.text


def test_the_closed_marker_is_no_tokens_digest() -> None:
    """A closed folder holds a digest no token can have, so no bearer token matches it."""
    assert not any(SHA256_RE.match(digest) for digest in CLOSED)


def test_a_folder_reads_its_tokens_through_the_same_rule(docs: Path) -> None:
    folder(docs, "open", {"mcp": True})
    folder(docs, "own", {"mcp": True, "tokens": [{"name": "a", "sha256": DIGEST_A}]})
    folder(docs, "typo", {"mcp": True, "tokens": {"name": "a", "sha256": DIGEST_A}})
    digests = {f.name: f.token_digests for f in list_folders(docs)}
    assert digests == {"open": frozenset(), "own": frozenset({DIGEST_A}), "typo": CLOSED}
