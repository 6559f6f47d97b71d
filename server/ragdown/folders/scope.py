"""Scopes (docs/search.md#scopes): the directory an endpoint treats as its root.

A scope is a directory, never a string prefix: `projects/alpha` does not reach
`projects/alpha-old`. Paths go in and come out relative to it, so a subfolder endpoint never
shows the folder above it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ragdown.errors import ScopeError


def normalise_prefix(path_prefix: str) -> str:
    """`\\` to `/`, posix-normalised, without leading `./` or `/` or a trailing `/`; "" for none."""
    if not path_prefix:
        return ""
    if "\0" in path_prefix:
        raise ScopeError("path_prefix contains a NUL character; pass a folder path such as ops/db")
    normalised = posixpath.normpath(path_prefix.replace("\\", "/"))
    if normalised == ".." or normalised.startswith("../"):
        raise ScopeError(f"path_prefix is outside the docs folder: {path_prefix}")
    normalised = normalised.lstrip("/")
    if normalised.startswith("./"):
        normalised = normalised[2:]
    normalised = normalised.rstrip("/")
    return "" if normalised in (".", "") else normalised


@dataclass(frozen=True)
class Scope:
    """`dir` is root-relative with `/` separators, "" for the whole docs folder."""

    dir: str = ""

    def search_prefix(self, path_prefix: str = "") -> str:
        """The root-relative directory prefix (ending in `/`) a search is limited to, or ""."""
        joined = "/".join(part for part in (self.dir, normalise_prefix(path_prefix)) if part)
        return f"{joined}/" if joined else ""

    def relative(self, path: str) -> str:
        """A root-relative path as this scope shows it."""
        return path[len(self.dir) + 1 :] if self.dir and path.startswith(self.dir + "/") else path

    def contains(self, path: str) -> bool:
        """Whether a root-relative path lies inside this scope."""
        return not self.dir or path.startswith(self.dir + "/")

    def absolute(self, path: str) -> str:
        """A scope-relative path as a root-relative one."""
        return f"{self.dir}/{path}" if self.dir else path
