"""Where each folder's settings come from: its `.ragdown.json`, else what the server gives every folder
(docs/design.md#where-a-setting-comes-from). A folder a RagdownFolder manages says so: the operator
writes the resource's spec into that file, marked with `managed_by` (docs/cluster.md)."""

from __future__ import annotations

from collections.abc import Mapping

from ragdown.bounds import HOOK_KEYS, valid_overrides
from ragdown.folders.registry import Folder
from ragdown.status.sources import DEFAULT, FOLDER_FILE, Setting


def folder_file(folder: Folder) -> str:
    """`.ragdown.json`, naming the RagdownFolder whose spec the operator wrote there."""
    return f"{FOLDER_FILE} ({folder.managed_by})" if folder.managed_by else FOLDER_FILE


def folder_settings(folder: Folder, server: Mapping[str, Setting]) -> list[Setting]:
    """The folder's settings in effect; `server` is the server's, by name, for what it gives every
    folder (read-only and disabled tools add to the folder's own; hook values fill in)."""
    config, own = folder.config, folder_file(folder)

    def setting(name: str, value: object, present: bool, fallback: Setting | None = None) -> Setting:
        if present or fallback is None:
            return Setting(name, value, own if present else DEFAULT, group="folders")
        return Setting(
            name, fallback.value, fallback.source, fallback.variable, "folders", fallback.default_text
        )

    found = [
        setting("title", folder.title, isinstance(config.get("title"), str)),
        setting("mcp", folder.mcp, "mcp" in config),
        read_only(folder, own, server["read_only"]),
        disabled_tools(folder, own, server["disabled_tools"]),
        setting("tokens", "set" if folder.token_digests else "not set", "tokens" in config),
    ]
    hook = valid_overrides(config.get("hook"))
    for key in HOOK_KEYS:
        found.append(setting(f"hook_{key}", hook.get(key), key in hook, server[f"hook_{key}"]))
    return found


def read_only(folder: Folder, own: str, server: Setting) -> Setting:
    """Read-only when the folder or the server says so."""
    if folder.read_only:
        return Setting("read_only", True, own, group="folders")
    if server.value is True:
        return Setting("read_only", True, server.source, server.variable, "folders")
    return Setting("read_only", False, own if "read_only" in folder.config else DEFAULT, group="folders")


def disabled_tools(folder: Folder, own: str, server: Setting) -> Setting:
    """The folder's own switched-off tools and the server's, together (both apply)."""
    server_tools = sorted(t.strip() for t in str(server.value or "").split(",") if t.strip())
    tools = ",".join(sorted(set(folder.disabled_tools) | set(server_tools)))
    if folder.disabled_tools:
        source = own if not server_tools else f"{own} + {server.source}"
        return Setting("disabled_tools", tools, source, server.variable if server_tools else None, "folders")
    if server_tools:
        return Setting("disabled_tools", tools, server.source, server.variable, "folders")
    return Setting(
        "disabled_tools", "", own if "disabled_tools" in folder.config else DEFAULT, group="folders"
    )
