"""Model files checked against pinned SHA-256 digests before anything loads them."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ragdown.indexing.embedders.base import EmbedderError


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, expected_sha256: str, what: str) -> Path:
    """Return `path` if its SHA-256 is the pinned one; refuse a missing or changed file."""
    if not path.is_file():
        raise EmbedderError(f"{what} is missing: {path} does not exist")
    actual = sha256_file(path)
    if actual != expected_sha256:
        raise EmbedderError(
            f"{what} at {path} does not match its pinned SHA-256 (expected {expected_sha256}, "
            f"found {actual}); reinstall it or delete the file so it is fetched again"
        )
    return path


MODELS_DIR_ENV = "RAGDOWN_MODELS"
# Read-only folders searched before RAGDOWN_MODELS (an image's baked-in models), os.pathsep-separated:
# a pod can then download into a writable volume without losing what its image already holds.
BUNDLED_DIRS_ENV = "RAGDOWN_MODELS_BUNDLED"


def cache_home() -> Path:
    """`$XDG_CACHE_HOME`, else `~/.cache`: where indexes and models live by default."""
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(cache).expanduser() if cache else Path.home() / ".cache"


def default_models_dir() -> Path:
    """`RAGDOWN_MODELS`, else `$XDG_CACHE_HOME/ragdown/models`, else `~/.cache/ragdown/models`."""
    configured = os.environ.get(MODELS_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return cache_home() / "ragdown" / "models"


def bundled_models_dirs() -> list[Path]:
    """`RAGDOWN_MODELS_BUNDLED`: folders holding verified models that are looked in first, never written."""
    value = os.environ.get(BUNDLED_DIRS_ENV, "")
    return [Path(part).expanduser() for part in value.split(os.pathsep) if part.strip()]
