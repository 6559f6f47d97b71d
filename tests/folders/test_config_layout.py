"""A `.ragdown.json` that a change rewrites keeps its layout and key order (`ragdown.folders.manage`,
docs/design.md#where-state-lives): a folder kept in git shows only the setting that changed, and
turning MCP off and on again leaves the file as it was, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdown.folders.manage import patch_folder

ONE_LINE = b'{"title": "Example notes", "mcp": true}\n'


def config_file(tmp_path: Path, data: bytes) -> Path:
    (tmp_path / "notes").mkdir()
    path = tmp_path / "notes" / ".ragdown.json"
    path.write_bytes(data)
    return path


def patch(docs: Path, changes: dict[str, object]) -> None:
    patch_folder(docs, "notes", changes, caller=None, can_rename=True)


def test_mcp_off_and_on_again_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = config_file(tmp_path, ONE_LINE)
    patch(tmp_path, {"mcp": False})
    assert path.read_bytes() == b'{"title": "Example notes", "mcp": false}\n'
    patch(tmp_path, {"mcp": True})
    assert path.read_bytes() == ONE_LINE


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # indented by four, no final newline
        (
            b'{\n    "mcp": true,\n    "title": "Ops"\n}',
            b'{\n    "mcp": true,\n    "title": "Ops",\n    "read_only": true\n}',
        ),
        # compact, non-ASCII written as escapes
        (
            b'{"title":"Op\\u00e9rations","mcp":true}\n',
            b'{"title":"Op\\u00e9rations","mcp":true,"read_only":true}\n',
        ),
        # tabs, CRLF at the end
        (b'{\n\t"mcp": true\n}\r\n', b'{\n\t"mcp": true,\n\t"read_only": true\n}\r\n'),
    ],
)
def test_a_change_is_written_in_the_files_own_layout(tmp_path: Path, before: bytes, after: bytes) -> None:
    path = config_file(tmp_path, before)
    patch(tmp_path, {"read_only": True})
    assert path.read_bytes() == after


def test_a_layout_of_its_own_is_written_indented_by_two(tmp_path: Path) -> None:
    path = config_file(tmp_path, b'{ "mcp" : true }\n')
    patch(tmp_path, {"title": "Notes"})
    assert path.read_bytes() == b'{\n  "mcp": true,\n  "title": "Notes"\n}\n'


def test_the_folder_form_saved_unchanged_writes_nothing(tmp_path: Path) -> None:
    """What the web UI's folder form sends when nothing was changed in it (folder-settings.js)."""
    path = config_file(tmp_path, ONE_LINE)
    before = path.stat()
    patch(
        tmp_path,
        {
            "title": "Example notes",
            "mcp": True,
            "read_only": False,
            "disabled_tools": [],
            "hook": {"top_k": None, "min_score": None, "min_ratio": None, "max_chars": None},
        },
    )
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert path.read_bytes() == ONE_LINE
