"""`meta.json`: which embedder, chunker and layout built the index, and why it must be rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ragdown.atomic import write_atomic
from ragdown.documents.chunks import CHUNKER_VERSION

# Bump whenever a column or an index of the `chunks` table changes: a bump forces a rebuild.
INDEX_VERSION = 5
META_FILE = "meta.json"


class IndexMeta(BaseModel):
    model_config = ConfigDict(extra="allow")

    embedder: str
    dim: int
    chunker_version: int
    index_version: int
    # SHA-256 of the model file the vectors came from ("" when not a local file); informative.
    model_sha256: str = ""
    # The chunk size the embedder's window allows: a change re-chunks every file.
    max_chars: int = 0
    # The name the embedder was chosen by (`minilm`, `openai:<model>`), so it can be loaded again.
    source: str = ""
    # The directory under the data dir holding this index: a rebuild writes a new one beside it,
    # and rewriting meta.json to name it is the switch.
    lance_dir: str = "lance"


def current_meta(
    embedder: str, dim: int, model_sha256: str = "", source: str = "", max_chars: int = 0
) -> IndexMeta:
    return IndexMeta(
        embedder=embedder,
        dim=dim,
        chunker_version=CHUNKER_VERSION,
        index_version=INDEX_VERSION,
        model_sha256=model_sha256,
        source=source,
        max_chars=max_chars,
    )


def read_meta(data_dir: Path) -> IndexMeta | None:
    """The recorded meta, or None when the file is missing or malformed."""
    try:
        return IndexMeta.model_validate_json((data_dir / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError):
        return None


def meta_json(meta: IndexMeta) -> bytes:
    """meta.json's bytes, the same on disk and on an object store."""
    return (json.dumps(meta.model_dump(), indent=2) + "\n").encode()


def write_meta(data_dir: Path, meta: IndexMeta) -> None:
    """Write whole or not at all (docs/design.md#server-files), readable by the owner only."""
    write_atomic(data_dir / META_FILE, meta_json(meta), mode=0o600)


def rebuild_reason(recorded: IndexMeta | None, wanted: IndexMeta) -> str | None:
    """Why an existing table cannot be kept, in the words the logs and errors use; None if it can."""
    if recorded is None:
        return "the index has no meta file"
    if recorded.embedder != wanted.embedder:
        return f"the embedder changed from {recorded.embedder} to {wanted.embedder}"
    if recorded.dim != wanted.dim:
        return f"the embedding dimension changed from {recorded.dim} to {wanted.dim}"
    if recorded.chunker_version != wanted.chunker_version:
        return f"the chunker changed from v{recorded.chunker_version} to v{wanted.chunker_version}"
    if recorded.max_chars != wanted.max_chars:
        return f"the chunk size changed from {recorded.max_chars} to {wanted.max_chars} characters"
    if recorded.index_version != wanted.index_version:
        return f"the index layout changed from v{recorded.index_version} to v{wanted.index_version}"
    return None
