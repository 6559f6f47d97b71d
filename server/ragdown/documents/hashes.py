"""The content hash (docs/documents.md#hashes): what a read returns and a `base_hash` is checked against."""

from __future__ import annotations

import hashlib

SHORT_HASH_CHARS = 12


def file_hash(data: bytes) -> str:
    """SHA-256 hex of a file's bytes."""
    return hashlib.sha256(data).hexdigest()


def short_hash(full_hash: str) -> str:
    """The hash as tools show it."""
    return full_hash[:SHORT_HASH_CHARS]


def hash_matches(base_hash: str, full_hash: str) -> bool:
    """Whether `base_hash` names the version `full_hash` is of: the short form or the whole hash.

    Fewer than 12 characters never match: a short prefix could name another version by chance.
    """
    return len(base_hash) >= SHORT_HASH_CHARS and full_hash.startswith(base_hash)
