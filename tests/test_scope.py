"""Scopes (docs/search.md#scopes): prefixes are directories, `..` is refused, paths come out relative."""

from __future__ import annotations

import pytest

from ragdown.folders.scope import Scope, ScopeError, normalise_prefix


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
