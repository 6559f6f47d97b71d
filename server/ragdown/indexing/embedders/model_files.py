"""Model files checked against pinned SHA-256 digests before anything loads them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ragdown.errors import EmbedderError
from ragdown.settings import embedder_settings


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


def cache_home() -> Path:
    """`$XDG_CACHE_HOME`, else `~/.cache`: where indexes and models live by default."""
    return embedder_settings().cache()


def default_models_dir() -> Path:
    """`RAGDOWN_MODELS`, else `<cache>/ragdown/models`."""
    return embedder_settings().models_dir()


def bundled_models_dirs() -> list[Path]:
    """`RAGDOWN_MODELS_BUNDLED`: folders holding verified models that are looked in first, never
    written (an image's baked-in models, while a pod downloads into a writable RAGDOWN_MODELS)."""
    return embedder_settings().bundled_dirs()
