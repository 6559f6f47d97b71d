"""`ragdown status [FOLDER] [--json]`: the settings `serve` would run with over a docs dir, each with
its source, as a table grouped like the README's configuration or as JSON
(docs/design.md#where-a-setting-comes-from)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragdown.bounds import DEFAULT_EMBEDDER, DEFAULT_MAX_CHARS, DEFAULT_TOP_K
from ragdown.errors import CliError, FolderNotFoundError
from ragdown.folders.dir_checks import check_docs_dir, default_data_dir
from ragdown.folders.registry import list_folders
from ragdown.folders.saved import read_saved
from ragdown.indexing.meta import read_meta
from ragdown.roles.lock import SOCKET_NAME
from ragdown.search.query_log import LOG_NAME
from ragdown.settings import ServerSettings
from ragdown.status.folder_sources import folder_file, folder_settings
from ragdown.status.sources import GROUPS, Setting, extra_settings, server_settings

COMMAND_LINE = "command line (FOLDER)"


def derived_defaults(settings: ServerSettings, docs: Path | None) -> dict[str, Any]:
    """What an unset setting with no fixed default comes to here: computed, as the server computes it."""
    out: dict[str, Any] = {
        "threads": settings.cpu_threads(),
        "models": str(settings.models_dir()),
        "cache_home": str(settings.cache()),
        "hook_top_k": DEFAULT_TOP_K,
        "hook_max_chars": DEFAULT_MAX_CHARS,
    }
    data_dir = settings.data_dir or (default_data_dir(docs, folders_mode=True) if docs else None)
    if data_dir is not None:
        out["data_dir"] = str(data_dir)
        out["query_log_file"] = str(data_dir / LOG_NAME)
        out["primary_url"] = f"unix://{data_dir / SOCKET_NAME}"
        meta = None if settings.index_uri else read_meta(data_dir)
        out["embedder"] = meta.source if meta and meta.source else DEFAULT_EMBEDDER
    return out


def collect(folder: str | None, settings: ServerSettings, environ: Mapping[str, str]) -> dict[str, Any]:
    """Every setting in effect, with its source, and each folder's own."""
    given = folder is not None
    where = Path(folder) if folder is not None else settings.docs_dir
    try:
        docs = check_docs_dir(where) if where is not None else None
    except FolderNotFoundError as error:
        if given:
            raise
        raise CliError(f"RAGDOWN_DOCS_DIR: {error}") from None  # as `serve` names it
    saved = read_saved(docs) if docs is not None else {}
    found = server_settings(settings, environ, saved, derived_defaults(settings, docs))
    if given and docs is not None:
        found = [
            Setting("docs_dir", str(docs), COMMAND_LINE, group=s.group) if s.name == "docs_dir" else s
            for s in found
        ]
    found += extra_settings(environ)
    by_name = {setting.name: setting for setting in found}
    folders = [
        {
            "name": f.name,
            "file": folder_file(f) if f.config else "no .ragdown.json",
            "settings": folder_settings(f, by_name),
        }
        for f in (list_folders(docs) if docs is not None else [])
    ]
    return {"settings": found, "folders": folders}


def as_json(status: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "settings": [setting.json() for setting in status["settings"]],
        "folders": [
            {"name": f["name"], "settings": [s.json() for s in f["settings"]]} for f in status["folders"]
        ],
    }


def text_value(setting: Setting) -> str:
    value = setting.value
    if value is None or value == "":
        return f"({setting.default_text})" if setting.default_text else "—"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def source_text(setting: Setting) -> str:
    return f"{setting.source} ({setting.variable})" if setting.variable else setting.source


def rows(settings: list[Setting], indent: str) -> list[str]:
    width = max((len(s.name) for s in settings), default=0) + 2
    values = [text_value(s) for s in settings]
    value_width = min(max((len(v) for v in values), default=0), 48)
    return [
        f"{indent}{s.name:<{width}}{value:<{value_width}}  {source_text(s)}".rstrip()
        for s, value in zip(settings, values, strict=True)
    ]


def as_text(status: Mapping[str, Any]) -> str:
    lines: list[str] = []
    settings: list[Setting] = status["settings"]
    for group in GROUPS:
        order = {name: n for n, name in enumerate(GROUPS[group])}
        members = sorted(
            (s for s in settings if s.group == group), key=lambda s: order.get(s.name, len(order))
        )
        lines += ["", group, *rows(members, "  ")]
    lines += ["", "folders"]
    if not status["folders"]:
        lines.append("  (none: no docs dir, or no folder in it)")
    for folder in status["folders"]:
        lines += [f"  {folder['name']}  ({folder['file']})", *rows(folder["settings"], "    ")]
    return "\n".join(lines[1:])


def print_status(folder: str | None, settings: ServerSettings, *, json_output: bool) -> int:
    status = collect(folder, settings, dict(os.environ))
    if json_output:
        print(json.dumps(as_json(status), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(as_text(status) + "\n")
    return 0
