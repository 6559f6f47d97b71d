"""Folders (docs/tools.md#endpoints, docs/tools.md#folder-routes): each top-level real directory of the docs
dir, with its
`.ragdown.json` (`title`, `mcp` default false, `hook`, and the per-folder tool switches `read_only` and
`disabled_tools`); looked at on every request, so turning `mcp` on or off applies to the next one
without a restart."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdown.bounds import FOLDER_CONFIG
from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import (
    MAX_NAME_BYTES,
    control_character,
    is_markdown,
    is_skipped_entry,
    is_utf8,
)
from ragdown.folders.config import read_json_object

SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Folder:
    name: str
    title: str
    mcp: bool
    read_only: bool = False
    disabled_tools: frozenset[str] = frozenset()
    # Who owns the settings (`RagdownFolder <namespace>/<name>` on Kubernetes); None: edited freely.
    managed_by: str | None = None
    # The SHA-256 (hex) of the folder's own agent tokens: when there are any, only they reach it.
    token_digests: frozenset[str] = frozenset()
    config: dict[str, Any] = field(default_factory=dict, compare=False)


def is_folder_name(name: str) -> bool:
    return bool(name) and not is_skipped_entry(name)


def read_folder(docs_dir: Path, name: str) -> Folder | None:
    """The folder `name`, or None when there is no such real directory (a symlink is none)."""
    if not is_folder_name(name) or "/" in name or "\\" in name or control_character(name) is not None:
        return None
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return None
    folder = Root(docs_dir, (name,))
    if not files.is_dir(folder):
        return None
    config = read_json_object(folder, FOLDER_CONFIG)
    title = config.get("title")
    disabled = config.get("disabled_tools")
    managed_by = config.get("managed_by")
    return Folder(
        name=name,
        title=title if isinstance(title, str) and title.strip() else name,
        mcp=config.get("mcp") is True,
        read_only=config.get("read_only") is True,
        disabled_tools=frozenset(t for t in disabled if isinstance(t, str))
        if isinstance(disabled, list)
        else frozenset(),
        managed_by=managed_by if isinstance(managed_by, str) and managed_by else None,
        token_digests=token_digests(config.get("tokens")),
        config=config,
    )


def token_digests(value: object) -> frozenset[str]:
    """The digests of a `tokens` list (`[{"name": …, "sha256": <64 hex>}]`); malformed entries are
    skipped. A `tokens` key that is there but holds no valid entry (a list of junk, an object, a
    string) still closes the folder to the shared token: a typo must not open a team's folder."""
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        log.warning("a folder's `tokens` is not a list: only the admin token reaches it until it is")
        return frozenset({"-"})
    found = {
        entry["sha256"].lower()
        for entry in value
        if isinstance(entry, dict)
        and isinstance(entry.get("sha256"), str)
        and SHA256_RE.match(entry["sha256"])
    }
    return frozenset(found) if found or not value else frozenset({"-"})  # "-": no token's digest


def token_digest(token: str) -> str:
    """What a folder's `tokens` store for a token: its SHA-256, hex. One definition for the server's
    check, `ragdown token` and the Kubernetes operator, which hashes the tokens of Secrets."""
    return hashlib.sha256(token.encode()).hexdigest()


def tokens_fingerprint(value: object) -> str:
    """One SHA-256 over a `tokens` value as stored (canonical JSON): `/api/folders` shows it in place of
    the digests, so a manager can tell whether the entries it would write are the ones there."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def list_folders(docs_dir: Path) -> list[Folder]:
    found = []
    for entry in sorted(os.scandir(docs_dir), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False):
            folder = read_folder(docs_dir, entry.name)
            if folder is not None:
                found.append(folder)
    return found


def loose_markdown(docs: Path) -> list[str]:
    """Markdown files at the top of the docs dir: they belong to no folder, so nothing serves them. A
    name that is not UTF-8 is left out: no answer can carry it, nor a client name it."""
    try:
        entries = sorted(os.scandir(docs), key=lambda entry: entry.name)
    except OSError:
        return []
    return [
        entry.name
        for entry in entries
        if not is_skipped_entry(entry.name)
        and is_markdown(entry.name)
        and is_utf8(entry.name)
        and entry.is_file(follow_symlinks=False)
    ]
