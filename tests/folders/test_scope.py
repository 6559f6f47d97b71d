"""Scopes (docs/search.md#scopes): prefixes are directories, `..` is refused, paths come out relative."""

from __future__ import annotations

import pytest

from ragdown.errors import ScopeError
from ragdown.folders.scope import Scope, normalise_prefix


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("", ""),
        (".", ""),
        ("./", ""),
        ("/", ""),
        ("./ops/", "ops"),
        ("/ops", "ops"),
        ("ops\\db\\", "ops/db"),
        ("ops//db/./x/..", "ops/db"),
        ("a/../b", "b"),
    ],
)
def test_normalise_prefix(given: str, expected: str) -> None:
    assert normalise_prefix(given) == expected


@pytest.mark.parametrize("given", ["..", "../beta", "ops/../../x", "..\\x"])
def test_a_prefix_outside_the_folder_is_refused(given: str) -> None:
    with pytest.raises(ScopeError, match=r"path_prefix is outside the docs folder: "):
        normalise_prefix(given)


def test_a_nul_is_refused() -> None:
    with pytest.raises(ScopeError, match="NUL"):
        normalise_prefix("ops\0")


def test_search_prefix_joins_the_scope_and_the_prefix_as_a_directory() -> None:
    assert Scope().search_prefix() == ""
    assert Scope().search_prefix("ops") == "ops/"
    assert Scope("projects/alpha").search_prefix() == "projects/alpha/"
    assert Scope("projects").search_prefix("./alpha/") == "projects/alpha/"
    assert not "projects/alpha-old/plan.md".startswith(Scope("projects/alpha").search_prefix())


def test_paths_are_made_scope_relative_and_back() -> None:
    scope = Scope("work/ops")
    assert scope.relative("work/ops/db/pg.md") == "db/pg.md"
    assert scope.absolute("db/pg.md") == "work/ops/db/pg.md"
    assert Scope().relative("a.md") == "a.md"
    assert scope.relative("work/opsx/a.md") == "work/opsx/a.md"  # not inside: left alone


def test_a_scope_contains_what_is_below_its_directory_only() -> None:
    scope = Scope("projects/alpha")
    assert scope.contains("projects/alpha/plan.md")
    assert scope.contains("projects/alpha/deep/er/plan.md")
    assert not scope.contains("projects/alpha-old/plan.md")  # a directory, never a string prefix
    assert not scope.contains("projects/alphabet.md")
    assert not scope.contains("projects/alpha")  # the directory itself is no document in it
    assert not scope.contains("projects/plan.md")
    assert Scope().contains("anything/at/all.md")


def test_relative_and_absolute_are_inverse_inside_the_scope() -> None:
    scope = Scope("work/ops")
    for path in ("a.md", "db/pg.md", "db/deep/x.md"):
        absolute = scope.absolute(path)
        assert scope.contains(absolute)
        assert scope.relative(absolute) == path


@pytest.mark.parametrize(
    ("given", "expected"),
    [("/etc", "team/etc/"), ("/../etc", "team/etc/"), ("//ops", "team/ops/"), ("a/./b/../c", "team/a/c/")],
)
def test_a_prefix_that_looks_absolute_stays_inside_the_scope(given: str, expected: str) -> None:
    assert Scope("team").search_prefix(given) == expected


@pytest.mark.parametrize("given", ["..", "../other", "ops/../../other", "..\\other"])
def test_a_prefix_cannot_climb_out_of_a_sub_folder_scope(given: str) -> None:
    with pytest.raises(ScopeError, match="path_prefix is outside the docs folder"):
        Scope("team/ops").search_prefix(given)
