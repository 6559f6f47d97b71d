"""Server settings saved from the web UI (ragdown.folders.saved, docs/web.md#server-settings): read
leniently, laid over the environment, changed whole or not at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragdown.errors import Refusal
from ragdown.folders.saved import in_effect, read_saved, save_changes
from ragdown.settings import ServerSettings


def test_values_that_do_not_validate_are_skipped_when_read(tmp_path: Path) -> None:
    (tmp_path / ".ragdown-server.json").write_text(
        json.dumps(
            {"text_limit": 500, "watch": "yes", "token": "x", "hook": {"top_k": 2}, "embedder": "nope"}
        ),
        encoding="utf-8",
    )
    assert read_saved(tmp_path) == {"text_limit": 500, "hook": {"top_k": 2}}


def test_saved_values_go_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_TEXT_LIMIT", "900")
    monkeypatch.setenv("RAGDOWN_WATCH", "false")
    environment = ServerSettings()
    effective = in_effect(environment, {"text_limit": 300, "hook": {"top_k": 1}})
    assert (effective.text_limit, effective.watch) == (300, False)
    assert environment.text_limit == 900  # the environment's own stays as it was


def test_a_change_is_checked_whole_before_anything_is_written(tmp_path: Path) -> None:
    assert save_changes(tmp_path, {"text_limit": 300}) == {"text_limit": 300}
    with pytest.raises(Refusal, match="max_per_document"):
        save_changes(tmp_path, {"text_limit": 100, "max_per_document": -2})
    assert json.loads((tmp_path / ".ragdown-server.json").read_text(encoding="utf-8")) == {"text_limit": 300}
    assert save_changes(tmp_path, {"text_limit": None}) == {}


def test_the_file_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    docs = tmp_path / "docs"
    docs.mkdir()
    os.symlink(outside, docs / ".ragdown-server.json")
    with pytest.raises((Refusal, OSError)):
        save_changes(docs, {"text_limit": 300})
    assert not outside.exists()
