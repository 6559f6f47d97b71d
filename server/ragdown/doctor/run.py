"""Every check in order, and the target they look at (docs/doctor.md): `ragdown doctor`, GET
/api/doctor and the web UI's Health panel all come here."""

from __future__ import annotations

import json
from pathlib import Path

from ragdown.doctor import content, folders
from ragdown.doctor.data_dir import check_modes, check_writable
from ragdown.doctor.embedder import check_embedder_files
from ragdown.doctor.index import check_embedder, check_files, read_index
from ragdown.doctor.reader import check_primary
from ragdown.doctor.report import Check
from ragdown.doctor.scan import DEFAULT_MAX_CHARS, scan_folders
from ragdown.doctor.target import Target
from ragdown.doctor.tokens import check_tokens
from ragdown.errors import CliError
from ragdown.folders.dir_checks import check_docs_dir, default_data_dir
from ragdown.settings import ServerSettings


def target_for(folder: str | None, settings: ServerSettings) -> Target:
    """FOLDER as `ragdown index FOLDER` takes it, or else the server's RAGDOWN_DOCS_DIR, every folder
    of it; each with the data dir the matching command would use."""
    if folder is not None:
        docs = check_docs_dir(Path(folder))
        data = settings.data_dir or default_data_dir(docs)
        return Target(docs, data.resolve(), folders_mode=False, settings=settings)
    if settings.docs_dir is None:
        raise CliError("pass the folder to check (ragdown doctor FOLDER) or set RAGDOWN_DOCS_DIR")
    docs = check_docs_dir(settings.docs_dir)
    data = settings.data_dir or default_data_dir(docs, folders_mode=True)
    return Target(docs, data.resolve(), folders_mode=True, settings=settings)


def run_checks(target: Target) -> list[Check]:
    """One Check per line, in the order docs/doctor.md lists them."""
    index = read_index(target)
    meta = index.meta
    scan = scan_folders(
        target.docs_dir,
        folders_mode=target.folders_mode,
        max_chars=meta.max_chars if meta and meta.max_chars else DEFAULT_MAX_CHARS,
    )
    embedder = target.settings.embedder or (meta.source or meta.embedder if meta else None)
    return [
        check_embedder_files(embedder),
        check_writable(target),
        check_modes(target),
        index.check,
        check_embedder(target, meta),
        check_files(target, scan, index.held),
        folders.check_configs(target),
        folders.check_serving(target, scan),
        folders.check_loose(target),
        content.crowding(scan),
        content.skipped(scan),
        content.superseded(scan),
        content.broken_wikilinks(scan),
        check_tokens(target),
        check_primary(target, index),
        content.clock(scan),
    ]


def as_json(checks: list[Check]) -> str:
    return json.dumps([check.model_dump() for check in checks], ensure_ascii=False)
