"""Settings files read leniently (`ragdown.folders.config`): a `.ragdown.json` or `.ragdown-server.json`
that is missing, symlinked, not a regular file, not UTF-8, not JSON or not an object reads as empty, so
a broken file never breaks the hook; only a real problem with a file that is there is logged."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from ragdown.bounds import FOLDER_CONFIG, SERVER_CONFIG
from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.folders import config as config_module
from ragdown.folders.config import hook_layer, read_json_object

LOGGER = "ragdown.folders.config"


@pytest.fixture
def ops(tmp_path: Path) -> Path:
    folder = tmp_path / "docs" / "ops"
    folder.mkdir(parents=True)
    return folder


def root(folder: Path) -> Root:
    """The folder as the server reaches it: the docs dir trusted, the folder walked below it."""
    return Root(folder.parent, (folder.name,))


def test_an_object_is_read_as_it_is_written(ops: Path) -> None:
    config = {"title": "Ops", "mcp": True, "hook": {"top_k": 2}, "colour": "red"}
    (ops / FOLDER_CONFIG).write_text(json.dumps(config), encoding="utf-8")
    assert read_json_object(root(ops), FOLDER_CONFIG) == config


def test_a_missing_file_is_empty_and_not_worth_a_warning(ops: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert read_json_object(root(ops), FOLDER_CONFIG) == {}
        assert read_json_object(Root(ops.parent, ("missing",)), FOLDER_CONFIG) == {}
    assert caplog.records == []


@pytest.mark.parametrize(
    "content",
    [b"{nope", b"", b'{"mcp": true', b"\xff\xfe{}", b"[1, 2]", b'"mcp"', b"null", b"42"],
    ids=["malformed", "empty", "truncated", "not-utf8", "array", "string", "null", "number"],
)
def test_anything_but_a_json_object_is_empty(ops: Path, content: bytes) -> None:
    (ops / FOLDER_CONFIG).write_bytes(content)
    assert read_json_object(root(ops), FOLDER_CONFIG) == {}


def test_a_malformed_file_is_logged_with_its_folder(ops: Path, caplog: pytest.LogCaptureFixture) -> None:
    (ops / FOLDER_CONFIG).write_text("{nope", encoding="utf-8")
    (ops.parent / SERVER_CONFIG).write_text("{nope", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        read_json_object(root(ops), FOLDER_CONFIG)
        read_json_object(Root(ops.parent), SERVER_CONFIG)
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "ignoring .ragdown.json of ops",
        "ignoring .ragdown-server.json of the docs folder",
    ]


def test_a_symlinked_file_is_never_followed(ops: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"mcp": True, "title": "Borrowed"}), encoding="utf-8")
    (ops / FOLDER_CONFIG).symlink_to(elsewhere)
    assert read_json_object(root(ops), FOLDER_CONFIG) == {}


def test_a_symlinked_folder_on_the_way_is_never_followed(ops: Path) -> None:
    (ops / FOLDER_CONFIG).write_text(json.dumps({"mcp": True}), encoding="utf-8")
    (ops / "db").mkdir()
    (ops / "db" / FOLDER_CONFIG).write_text(json.dumps({"mcp": True}), encoding="utf-8")
    (ops.parent / "alias").symlink_to(ops, target_is_directory=True)
    assert read_json_object(Root(ops.parent, ("alias",)), FOLDER_CONFIG) == {}
    assert read_json_object(Root(ops.parent, ("alias", "db")), FOLDER_CONFIG) == {}
    assert read_json_object(Root(ops.parent, ("ops", "db")), FOLDER_CONFIG) == {"mcp": True}


@pytest.mark.timeout(30)
def test_a_fifo_or_a_folder_in_its_place_is_empty_and_nothing_waits(ops: Path) -> None:
    os.mkfifo(ops / FOLDER_CONFIG)  # opened for reading, a FIFO would block until a writer came
    assert read_json_object(root(ops), FOLDER_CONFIG) == {}
    (ops / FOLDER_CONFIG).unlink()
    (ops / FOLDER_CONFIG).mkdir()
    assert read_json_object(root(ops), FOLDER_CONFIG) == {}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"hook": {"top_k": 2, "colour": "red"}}, {"top_k": 2, "colour": "red"}),
        ({"hook": [1, 2]}, {}),
        ({"hook": "top_k=2"}, {}),
        ({"hook": None}, {}),
        ({"title": "No hook"}, {}),
        ([{"hook": {"top_k": 2}}], {}),
    ],
)
def test_the_hook_layer_is_the_hook_object_or_empty(ops: Path, config: object, expected: object) -> None:
    """The layer is taken as written: `hook.settings` skips the keys and values it cannot use."""
    (ops / FOLDER_CONFIG).write_text(json.dumps(config), encoding="utf-8")
    assert hook_layer(root(ops), FOLDER_CONFIG) == expected


class Reads:
    """Counts the reads of settings files' bytes (a stat alone is not one)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = files.read_file

        def read_file(*args: Any, **kwargs: Any) -> bytes | None:
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(files, "read_file", read_file)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    """As if every file were older than the settling window, so the cache is used at once."""
    monkeypatch.setattr(config_module, "SETTLED_NS", -(10**18))
    return Reads(monkeypatch)


def test_an_unchanged_file_is_parsed_once_and_each_caller_gets_its_own_copy(ops: Path, reads: Reads) -> None:
    (ops / FOLDER_CONFIG).write_text(json.dumps({"title": "Ops", "hook": {"top_k": 2}}), encoding="utf-8")
    first = read_json_object(root(ops), FOLDER_CONFIG)
    first["hook"]["top_k"] = 99  # a caller changing what it got changes nothing kept
    second = read_json_object(root(ops), FOLDER_CONFIG)
    assert second == {"title": "Ops", "hook": {"top_k": 2}}
    assert reads.count == 1


@pytest.mark.parametrize("how", ["replaced by a rename", "edited in place, same size", "deleted"])
def test_a_changed_file_is_read_again(ops: Path, reads: Reads, how: str) -> None:
    path = ops / FOLDER_CONFIG
    path.write_text(json.dumps({"mcp": True}), encoding="utf-8")
    assert read_json_object(root(ops), FOLDER_CONFIG) == {"mcp": True}
    before = path.stat()
    if how == "replaced by a rename":
        staged = ops / ".staged"
        staged.write_text(json.dumps({"mcp": 1}), encoding="utf-8")
        os.replace(staged, path)
        expected: dict[str, Any] = {"mcp": 1}
    elif how == "edited in place, same size":
        with path.open("r+", encoding="utf-8") as handle:
            handle.write(json.dumps({"mcp": 0}).ljust(len(json.dumps({"mcp": True}))))
        # Within one timestamp tick an in-place edit may keep its mtime: it is one tick later here.
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
        expected = {"mcp": 0}
    else:
        path.unlink()
        expected = {}
    assert read_json_object(root(ops), FOLDER_CONFIG) == expected


def test_a_file_changed_within_the_settling_window_is_read_every_time(
    ops: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writes within one timestamp tick that keep the size look alike to a stat: until the file's
    change is SETTLED_NS old, it is read again at each call."""
    counted = Reads(monkeypatch)
    (ops / FOLDER_CONFIG).write_text(json.dumps({"mcp": True}), encoding="utf-8")
    for _ in range(3):
        assert read_json_object(root(ops), FOLDER_CONFIG) == {"mcp": True}
    assert counted.count == 3
