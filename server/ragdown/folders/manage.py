"""Changing folders (docs/tools.md#folder-routes): create, patch, rename and delete a folder and its
`.ragdown.json`.

The one home of these rules: the `/api/folders` routes, the root endpoint's `ragdown_create_folder`
and, through the routes, the Kubernetes operator all come here. A folder whose `.ragdown.json` names a
`managed_by` (the operator writes `RagdownFolder <namespace>/<name>`) only changes at the request of
that manager: anyone else is told which resource to edit, so the next reconcile cannot silently undo
a person's change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ragdown.bounds import FOLDER_CONFIG, HOOK_KEYS, hook_value_error
from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import control_character, shown
from ragdown.errors import BadRequestError, Code, ConflictError, ForbiddenError, NotFoundError, Refusal
from ragdown.folders.registry import SHA256_RE, Folder, read_folder

FOLDER_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9 _.-]{0,63}$")
MANAGER_RE = re.compile(r"^RagdownFolder (?P<namespace>[a-z0-9.-]{1,253})/(?P<name>[a-z0-9.-]{1,253})$")
MAX_MANAGER = 300
MAX_TITLE = 200  # as the RagdownFolder schema allows
MAX_TOKENS = 100
TOKEN_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# The MCP tools of a folder endpoint: what `disabled_tools` may name (the CRD's enum, pinned in a test).
# The write tools are the ones a read-only folder hides.
FOLDER_WRITE_TOOLS = (
    "ragdown_remember",
    "ragdown_write",
    "ragdown_edit",
    "ragdown_move",
    "ragdown_delete",
    "ragdown_reindex",
)
FOLDER_TOOLS = (
    "ragdown_context",
    "ragdown_recall",
    "ragdown_read_doc",
    "ragdown_backlinks",
    "ragdown_list",
    "ragdown_stats",
    *FOLDER_WRITE_TOOLS,
)


def folder_name_error(name: str) -> str | None:
    if not FOLDER_NAME_RE.match(name) or name != name.strip() or name == "node_modules":
        return (
            f'not a valid folder name: "{shown(name)}" (letters, digits, space, _ . -; up to 64; '
            "not starting with . or -)"
        )
    return None


def managed_refusal(folder: Folder) -> Refusal:
    """What a person is told when they change a folder the operator owns: which resource to edit."""
    where = f"edit {folder.managed_by} instead"
    match = MANAGER_RE.match(folder.managed_by or "")
    if match:
        where += f" (kubectl edit ragdownfolder {match['name']} -n {match['namespace']})"
    return ConflictError(f"folder {folder.name} is managed by {folder.managed_by}: {where}", Code.MANAGED)


def check_manager(folder: Folder, caller: str | None, *, adopting: bool = False) -> None:
    """A managed folder changes only at its manager's request; a manager changes only its own folders
    (or adopts one by naming itself), so releasing or deleting never touches a folder it never held.
    `X-Ragdown-Manager` guards against mistakes, not against a holder of the token."""
    if folder.managed_by is not None and caller != folder.managed_by:
        raise managed_refusal(folder)
    if folder.managed_by is None and caller is not None and not adopting:
        raise ConflictError(
            f"folder {folder.name} is not managed by {caller}: nothing changed", Code.NOT_MANAGED
        )


def _check_manager_value(changes: Mapping[str, Any], caller: str | None) -> None:
    """`managed_by` may only name the caller (adopt) or be removed by it (release)."""
    if "managed_by" in changes and changes["managed_by"] is not None and changes["managed_by"] != caller:
        raise BadRequestError(
            "managed_by must equal the X-Ragdown-Manager header of the request that sets it"
        )


# The layouts a hand-written or generated `.ragdown.json` usually has, tried in turn on the file a change
# replaces; the first that reproduces it exactly writes the new one.
_LAYOUTS: tuple[dict[str, Any], ...] = tuple(
    {"indent": indent, "separators": separators, "ensure_ascii": ascii_only}
    for indent in (2, None, 4, "\t")
    for separators in (None, (",", ":"))
    for ascii_only in (False, True)
)


def _config_bytes(config: Mapping[str, Any], current: bytes | None = None) -> bytes:
    """`config` as the file's new bytes: in the layout of the `current` file when one of the usual
    layouts reproduces it (a one-line file stays one line, its keys in their order), else indented by
    two. A folder kept in git then shows only the setting that changed (docs/design.md#where-state-lives)."""
    if current is not None:
        try:
            text = current.decode("utf-8")
            body = text.rstrip("\r\n")
            parsed = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            parsed = None
        if isinstance(parsed, dict):
            for layout in _LAYOUTS:
                if json.dumps(parsed, **layout) == body:
                    return (json.dumps(config, **layout) + text[len(body) :]).encode()
    return (json.dumps(config, ensure_ascii=False, indent=2) + "\n").encode()


def existing(docs_dir: Path, name: str) -> Folder:
    folder = read_folder(docs_dir, name)
    if folder is None:
        raise NotFoundError(f"no such folder: {shown(name)}")
    return folder


def create_folder(
    docs_dir: Path,
    name: object,
    changes: Mapping[str, Any],
    *,
    created_by: str | None = None,
    caller: str | None = None,
) -> Folder:
    """A new folder with a `.ragdown.json` that always says `mcp`; 409 when the name is taken. A
    manager's folder records it in `created_by` too: only a folder it created may it later delete."""
    _check_manager_value(changes, caller)
    created_by = caller or created_by
    if name is None or name == "":
        raise BadRequestError("name is required")
    if not isinstance(name, str):
        raise BadRequestError("name must be a string")
    error = folder_name_error(name)
    if error:
        raise BadRequestError(error)
    config = _apply(dict(changes), {"mcp": False})
    if created_by:
        config["created_by"] = created_by
    data = _config_bytes(config)  # before the folder exists: nothing half made if this fails
    if not files.make_dir(Root(docs_dir), (name,)):
        raise ConflictError(f"already exists: {name}")
    files.create_file(Root(docs_dir, (name,)), (FOLDER_CONFIG,), data)
    return existing(docs_dir, name)


def patch_folder(
    docs_dir: Path, name: str, changes: Mapping[str, Any], *, caller: str | None, can_rename: bool
) -> tuple[Folder, bool]:
    """The folder after `changes` (title, mcp, hook, read_only, disabled_tools, managed_by, name), and
    whether it was renamed. Everything is validated before anything is written."""
    folder = existing(docs_dir, name)
    _check_manager_value(changes, caller)
    check_manager(folder, caller, adopting=changes.get("managed_by") == caller)
    changes = dict(changes)
    new_name = changes.pop("name", None)
    if new_name is not None and not isinstance(new_name, str):
        raise BadRequestError("name must be a string")
    config = _apply(changes, dict(folder.config))
    renamed = new_name is not None and new_name != name
    if renamed:
        assert isinstance(new_name, str)
        if folder.managed_by is not None:  # its resource names it, and a resource's folder never changes
            raise managed_refusal(folder)
        if not can_rename:
            raise ForbiddenError("The server is read-only (RAGDOWN_READ_ONLY)")
        error = folder_name_error(new_name)
        if error:
            raise BadRequestError(error)
        if files.lstat(Root(docs_dir), (new_name,)) is not None:
            raise ConflictError(f"already exists: {new_name}")
    if renamed:  # first: a failed rename leaves the settings as they were
        assert isinstance(new_name, str)
        try:
            files.rename(Root(docs_dir), (name,), (new_name,))
        except OSError as error:
            raise ConflictError(f"cannot rename {name} to {new_name}: {error.strerror}") from None
        name = new_name
    if config != folder.config:
        files.update(
            Root(docs_dir, (name,)), (FOLDER_CONFIG,), lambda current: _config_bytes(config, current)
        )
    return existing(docs_dir, name), renamed


def delete_folder(docs_dir: Path, name: str, confirm: str | None, *, caller: str | None) -> None:
    """Remove the folder and everything in it; `confirm` must repeat its name exactly."""
    folder = existing(docs_dir, name)
    if confirm != name:
        raise BadRequestError(f"confirm must repeat the folder's name: ?confirm={name}")
    check_manager(folder, caller)
    if caller is not None and folder.config.get("created_by") != caller:
        raise ConflictError(
            f"folder {name} existed before {caller} managed it, so its documents are not deleted: "
            "remove it by hand if that is what you want",
            Code.NOT_CREATED,
        )
    files.remove_tree(Root(docs_dir), (folder.name,))


def _apply(changes: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """`config` with `changes` applied, each validated; unknown `.ragdown.json` keys are kept."""
    unknown = sorted(set(changes) - set(_SETTINGS))
    if unknown:
        raise BadRequestError(f"unknown folder setting: {', '.join(unknown)}")
    for key, setting in _SETTINGS.items():  # in this order, so the first bad one is always the same
        if key in changes:
            value = setting(changes[key], config.get(key))
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
    return config


def _title(value: object, current: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequestError("title must be a string")
    if len(value.strip()) > MAX_TITLE:
        raise BadRequestError(f"title must be at most {MAX_TITLE} characters")
    if control_character(value) is not None:
        raise BadRequestError(
            "title must be plain text: no control characters, line breaks or lone surrogates"
        )
    return value.strip() or None


def _mcp(value: object, current: object) -> bool:
    if not isinstance(value, bool):
        raise BadRequestError("mcp must be true or false")
    return value


def _read_only(value: object, current: object) -> bool | None:
    if not isinstance(value, bool):
        raise BadRequestError("read_only must be true or false")
    return value or None  # kept only when on


def _manager(value: object, current: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and 0 < len(value) <= MAX_MANAGER and value.isprintable():
        return value
    raise BadRequestError(f"managed_by must be a string of 1 to {MAX_MANAGER} printable characters")


# Each folder setting a change may hold: its new value from the change and the current one, or None
# to remove the key from `.ragdown.json` (an empty list or hook is removed too).
_SETTINGS: dict[str, Callable[[object, object], object]] = {
    "title": _title,
    "mcp": _mcp,
    "read_only": _read_only,
    "hook": lambda value, current: merge_hook(value, current) or None,
    "disabled_tools": lambda value, current: _tools(value) or None,
    "tokens": lambda value, current: _tokens(value) or None,
    "managed_by": _manager,
}


def merge_hook(changes: object, current: object) -> dict[str, Any]:
    """Key by key: `null` removes a key, an empty object removes the whole hook."""
    if not isinstance(changes, dict):
        if changes is None:
            return {}
        raise BadRequestError(f"hook must be an object with any of {', '.join(HOOK_KEYS)}")
    if not changes:
        return {}
    hook = dict(current) if isinstance(current, dict) else {}
    for key, value in changes.items():
        if key not in HOOK_KEYS:
            raise BadRequestError(f"unknown hook setting: {key} (one of {', '.join(HOOK_KEYS)})")
        if value is None:
            hook.pop(key, None)
            continue
        error = hook_value_error(key, value)
        if error:
            raise BadRequestError(f"hook.{error}")
        hook[key] = value
    return hook


def _tokens(value: object) -> list[dict[str, str]]:
    """A folder's own agent tokens (docs/security.md): `[{"name", "sha256"}]`, names unique; the
    token itself is never stored (`ragdown token NAME` makes one and prints its entry)."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_TOKENS:
        raise BadRequestError(f"tokens must be a list of at most {MAX_TOKENS} {{name, sha256}} objects")
    names: set[str] = set()
    tokens = []
    for entry in value:
        if not isinstance(entry, dict) or set(entry) != {"name", "sha256"}:
            raise BadRequestError(
                'each token is {"name": …, "sha256": <64 hex of the token>} (ragdown token NAME)'
            )
        name, digest = entry["name"], entry["sha256"]
        if not isinstance(name, str) or not TOKEN_NAME_RE.match(name) or name in names:
            raise BadRequestError("a token name is 1 to 64 letters, digits, _ . - and unique in its folder")
        if not isinstance(digest, str) or not SHA256_RE.match(digest):
            raise BadRequestError(f"token {name}: sha256 must be the 64 hex digits of the token's SHA-256")
        names.add(name)
        tokens.append({"name": name, "sha256": digest.lower()})
    return tokens


def _tools(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise BadRequestError("disabled_tools must be a list of tool names")
    unknown = sorted(set(value) - set(FOLDER_TOOLS))
    if unknown:
        names = ", ".join(FOLDER_TOOLS)
        raise BadRequestError(f"unknown tool in disabled_tools: {', '.join(unknown)} (one of {names})")
    return sorted(set(value))


def config_error(config: Mapping[str, Any]) -> str | None:
    """What is wrong with a `.ragdown.json` as found on disk, by the rules a change must meet (the
    first bad setting), or None; keys the server does not know are kept, so not an error here."""
    known = {key: value for key, value in config.items() if key in _SETTINGS}
    try:
        _apply(known, {})
    except BadRequestError as error:
        return str(error)
    return None
