"""The internal token readers send the primary (docs/security.md): RAGDOWN_INTERNAL_TOKEN, or on one
machine the data dir's own `internal.token`, made owner-only by the first primary and kept across
restarts, so readers sharing the data dir can read it and nobody else can."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

TOKEN_FILE = "internal.token"


def local_token(data_dir: Path, *, create: bool) -> str | None:
    """The data dir's token; with `create` (a primary), made if there is none yet."""
    path = data_dir / TOKEN_FILE
    try:
        return path.read_text(encoding="ascii").strip() or None
    except FileNotFoundError:
        if not create:
            return None
    data_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_text(encoding="ascii").strip() or None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token)
    return token
