"""Where a folder and its index live: the checks every command makes before it opens anything.

Kept apart from the engine so that `ragdown stdio` can check its arguments and answer the MCP
handshake before the engine's stack is imported (docs/design.md#start-up).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ragdown.errors import DataDirError, FolderNotFoundError
from ragdown.settings import embedder_settings


def check_docs_dir(docs_dir: Path) -> Path:
    if not docs_dir.exists():
        raise FolderNotFoundError(f"the folder {docs_dir} does not exist; pass a directory of Markdown files")
    if not docs_dir.is_dir():
        raise FolderNotFoundError(f"{docs_dir} is a file, not a folder; pass the directory that holds it")
    if docs_dir.is_symlink():
        raise FolderNotFoundError(
            f"{docs_dir} is a symlink; pass the real directory (symlinks are not followed)"
        )
    return docs_dir.resolve()


def check_data_dir(data_dir: Path, docs_dir: Path, setting: str = "the data dir") -> Path:
    """Refuse a data dir that is a file, that cannot be created, or that sits inside the docs folder
    outside a dot-folder (the index's own files would then wake the watcher after every write).
    `setting` names where the path came from (`--data-dir`, `RAGDOWN_DATA_DIR`) in a refusal."""
    resolved = data_dir.resolve()
    if resolved.exists() and not resolved.is_dir():
        raise DataDirError(f"the data dir {data_dir} is a file; pass a directory (it is created if missing)")
    check_creatable(resolved, f"{setting} {data_dir}")
    try:
        inside = resolved.relative_to(docs_dir.resolve())
    except ValueError:
        return resolved
    if not any(part.startswith(".") for part in inside.parts):
        raise DataDirError(
            f"the data dir {data_dir} is inside the folder it indexes; put it elsewhere or in a dot-folder "
            f"such as {docs_dir / '.ragdown'}"
        )
    return resolved


def check_creatable(path: Path, named: str) -> None:
    """A directory that does not exist yet can be made: its nearest existing parent is a directory
    this user may write. Checked before anything loads, so a bad path is one line, not a traceback
    from deep inside the index. An existing directory is not checked: a reader may mount it read-only."""
    if os.path.exists(path):  # False, not an error, through a file
        if not path.is_dir():
            raise DataDirError(f"{named} cannot be used: {path} is a file, not a directory")
        return
    parent = next(p for p in path.parents if os.path.exists(p))
    if not parent.is_dir():
        raise DataDirError(f"{named} cannot be created: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DataDirError(f"{named} cannot be created: this user may not write in {parent}")


def default_data_dir(docs_dir: Path, *, folders_mode: bool = False) -> Path:
    """`~/.cache/ragdown/<16 hex>`: `serve` (folders) and single-folder modes never share an index."""
    key = ("folders\0" if folders_mode else "") + str(docs_dir.resolve())
    return embedder_settings().cache() / "ragdown" / hashlib.sha256(key.encode()).hexdigest()[:16]
