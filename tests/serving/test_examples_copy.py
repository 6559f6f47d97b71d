"""`ragdown serve --examples` (`ragdown.serving.examples`, docs/design.md#where-state-lives): the
bundled examples copied once into the cache and served from there, never from the clone."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from ragdown import cli
from ragdown.errors import CliError
from ragdown.serving.examples import BUNDLED, examples_copy

REPO = Path(__file__).resolve().parents[2]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_bundled_examples_are_the_repositorys() -> None:
    assert BUNDLED == REPO / "examples"
    assert (BUNDLED / "notes" / ".ragdown.json").is_file()


def test_the_first_run_copies_and_later_runs_serve_the_copy_as_left(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    docs, made = examples_copy(cache)
    assert (docs, made) == (cache / "ragdown" / "examples", True)
    assert tree(docs) == tree(BUNDLED)
    (docs / "notes" / "mine.md").write_text("# Mine\n", encoding="utf-8")
    (docs / "notes" / "recipes.md").unlink()
    assert examples_copy(cache) == (docs, False)
    assert (docs / "notes" / "mine.md").is_file()
    assert not (docs / "notes" / "recipes.md").exists()  # deleted in the copy, not brought back
    assert sorted(p.name for p in (cache / "ragdown").iterdir()) == ["examples"]  # no staging left


def test_a_copy_made_meanwhile_by_another_serve_is_the_one_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    theirs = cache / "ragdown" / "examples"
    copytree = shutil.copytree

    def copy_while_another_finishes(source: Path, target: Path, *args: Any, **kwargs: Any) -> Any:
        if not theirs.exists():  # the first call; copytree calls itself for each sub-folder
            copytree(source, theirs)
            (theirs / "notes" / "theirs.md").write_text("# Theirs\n", encoding="utf-8")
        return copytree(source, target, *args, **kwargs)

    monkeypatch.setattr(shutil, "copytree", copy_while_another_finishes)
    assert examples_copy(cache) == (theirs, False)
    assert (theirs / "notes" / "theirs.md").is_file()
    assert sorted(p.name for p in (cache / "ragdown").iterdir()) == ["examples"]


@pytest.mark.parametrize("found", [False, True])
def test_without_a_clone_it_says_what_to_set(tmp_path: Path, found: bool) -> None:
    """No examples/, or one that is not a clone's (no pyproject.toml beside it): nothing is copied."""
    bundled = tmp_path / "site-packages" / "examples"
    if found:
        shutil.copytree(BUNDLED, bundled)
    with pytest.raises(CliError, match="set RAGDOWN_DOCS_DIR") as caught:
        examples_copy(tmp_path / "cache", bundled=bundled)
    assert str(bundled) in str(caught.value)
    assert not (tmp_path / "cache" / "ragdown" / "examples").exists()


def test_examples_and_a_docs_dir_together_are_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAGDOWN_DOCS_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("RAGDOWN_TOKEN", "t")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert cli.main(["serve", "--examples"]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1
    assert "--examples" in said
    assert str(tmp_path / "mine") in said
    assert not (tmp_path / "cache").exists()
