"""The folders themselves: each `.ragdown.json` valid, each folder serving something, and no Markdown
loose at the top of the docs dir (docs/doctor.md#folders)."""

from __future__ import annotations

import json
from collections import Counter

from ragdown.bounds import FOLDER_CONFIG
from ragdown.doctor.report import Check, fail, first_few, ok, warn
from ragdown.doctor.scan import Scan
from ragdown.doctor.target import Target
from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.errors import Refusal
from ragdown.folders.manage import config_error
from ragdown.folders.registry import list_folders, loose_markdown

CONFIG = "folder settings"
SERVING = "folders served"
LOOSE = "loose Markdown"


def config_problem(target: Target, name: str) -> str | None:
    """Why the folder's `.ragdown.json` is not used as written, or None (absent counts as fine)."""
    folder = Root(target.docs_dir, (name,)) if target.folders_mode else Root.at(target.docs_dir)
    try:
        raw = files.read_file(folder, (FOLDER_CONFIG,))
    except (OSError, Refusal) as error:
        return f"cannot be read ({error})"
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return f"is not JSON ({error})"
    if not isinstance(data, dict):
        return "is not a JSON object"
    return config_error(data)


def folder_names(target: Target) -> list[str]:
    return [folder.name for folder in list_folders(target.docs_dir)] if target.folders_mode else [""]


def check_configs(target: Target) -> Check:
    problems = []
    for name in folder_names(target):
        problem = config_problem(target, name)
        if problem:
            problems.append(f"{name + '/' if name else ''}{FOLDER_CONFIG} {problem}")
    if problems:
        return fail(
            CONFIG,
            "; ".join(problems[:5]) + (f" and {len(problems) - 5} more" if len(problems) > 5 else ""),
            "correct the file (docs/tools.md#folder-routes lists the settings); until then the folder "
            "counts as having none: no MCP, no tokens",
        )
    return ok(CONFIG, f"every {FOLDER_CONFIG} is valid")


def check_serving(target: Target, scan: Scan) -> Check:
    """A folder with no documents serves nothing; a server whose folders all have MCP off serves no
    agent. A single folder (`ragdown doctor FOLDER`) is served by `stdio` whatever its settings."""
    counts = Counter(doc.folder for doc in scan.docs.values())
    folders = list_folders(target.docs_dir) if target.folders_mode else []
    if not target.folders_mode:
        if not counts:
            return warn(SERVING, f"{target.docs_dir} holds no Markdown document", "add .md files to it")
        return ok(SERVING, f"{counts['']} documents")
    if not folders:
        return warn(
            SERVING,
            f"{target.docs_dir} holds no folder",
            "make one (a directory with .md files), in the web UI or on disk",
        )
    empty = [folder.name for folder in folders if not counts[folder.name]]
    if empty:
        return warn(
            SERVING,
            f"no Markdown document in {first_few(empty)}: nothing to search there",
            "add documents or remove the folder",
        )
    if not any(folder.mcp for folder in folders):
        return warn(
            SERVING,
            "no folder has MCP on: agents reach none of them (the web UI still shows them)",
            f'set "mcp": true in a folder\'s {FOLDER_CONFIG} (or in Settings) for agents to use it',
        )
    served = sum(folder.mcp for folder in folders)
    return ok(SERVING, f"{len(folders)} folder(s), {served} with MCP on, {len(scan.docs)} documents")


def check_loose(target: Target) -> Check:
    if not target.folders_mode:
        return ok(LOOSE, "one folder: nothing can be loose")
    loose = loose_markdown(target.docs_dir)
    if loose:
        return warn(
            LOOSE,
            f"{len(loose)} Markdown file(s) at the top of {target.docs_dir} belong to no folder and are "
            f"never indexed: {first_few(loose)}",
            "move each into a folder (or delete it in the web UI's Settings)",
        )
    return ok(LOOSE, "no Markdown at the top of the docs dir")
