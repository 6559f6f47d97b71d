"""The internal token readers send the primary (docs/security.md): RAGDOWN_INTERNAL_TOKEN, or on one
machine the data dir's own `internal.token`, made owner-only by the first primary and kept across
restarts, so readers sharing the data dir can read it and nobody else can."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from ragdown.atomic import write_atomic

TOKEN_FILE = "internal.token"


def _read(path: Path) -> str | None:
    """The token in `path`; None when there is no file or it is empty. A symlink is never followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, encoding="ascii") as handle:
        return handle.read().strip() or None


def local_token(data_dir: Path, *, create: bool) -> str | None:
    """The data dir's token; with `create` (a primary), made if there is none yet.

    A new token appears whole (linked into place, docs/design.md#server-files), so a reader or a second
    primary never sees an empty file; of two primaries starting at once the first link wins and the
    other uses its token. An empty file left by an older release is replaced.
    """
    path = data_dir / TOKEN_FILE
    found = _read(path)
    if found is not None or not create:
        return found
    token = secrets.token_hex(32)
    try:
        write_atomic(path, token.encode("ascii"), mode=0o600, exclusive=True)
    except FileExistsError:
        theirs = _read(path)
        if theirs is not None:
            return theirs
        write_atomic(path, token.encode("ascii"), mode=0o600)
    return token
