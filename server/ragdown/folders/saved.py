"""Server settings saved from the web UI (docs/web.md#server-settings) in `.ragdown-server.json` at the
top of the docs dir: each wins over its environment variable, at once and after a restart, until it
is cleared (`null`), when the variable's value applies again. The `hook` object there is the layer
between a folder's hook settings and the environment's (hook/settings.py).

The file is read leniently at start (a value that does not validate is skipped with a warning) and
written whole or not at all, through the docs dir's no-symlink walk.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, cast

from pydantic import TypeAdapter, ValidationError

from ragdown.bounds import SERVER_CONFIG, embedder_name_error
from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.errors import BadRequestError, Refusal, plain
from ragdown.folders.config import read_json_object
from ragdown.folders.manage import merge_hook
from ragdown.settings import ServerSettings

log = logging.getLogger(__name__)

# What the UI may change while the server runs; the docs dir, tokens, read-only and the rest stay
# environment-only (they decide who may change anything).
SAVED_KEYS = ("embedder", "watch", "root_mcp", "text_limit", "max_per_document", "follow_links", "query_log")


def _adapter(key: str) -> TypeAdapter[Any]:
    field = ServerSettings.model_fields[key]
    # The field's type with its bounds (ge/le…), checked on its own, without the environment.
    kind = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
    return TypeAdapter(cast(Any, kind))


def check_value(key: str, value: object) -> Any:
    """`value` as the setting `key` takes it, or 400 in plain words (no coercion: `"yes"` is no bool)."""
    if key not in SAVED_KEYS:
        raise BadRequestError(f"unknown server setting: {key} (one of {', '.join((*SAVED_KEYS, 'hook'))})")
    if key == "embedder":
        if not isinstance(value, str):
            raise BadRequestError("embedder must be a string")
        error = embedder_name_error(value, given_by="embedder")
        if error is not None:
            raise BadRequestError(error)
        return value
    try:
        return _adapter(key).validate_python(value, strict=True)
    except ValidationError as error:
        raise BadRequestError(f"{key} {plain(error.errors()[0])}") from None


def read_saved(docs_dir: Path) -> dict[str, Any]:
    """The saved values that still validate (the rest are skipped with a warning), and `hook`."""
    raw = read_json_object(Root(docs_dir), SERVER_CONFIG)
    saved: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "hook":
            if isinstance(value, dict):
                saved["hook"] = value
            continue
        try:
            saved[key] = check_value(key, value)
        except Refusal as refusal:
            log.warning("ignoring %s in %s: %s", key, SERVER_CONFIG, refusal.message)
    return saved


def in_effect(environment: ServerSettings, saved: Mapping[str, Any]) -> ServerSettings:
    """The environment's settings with the saved ones over them."""
    return environment.model_copy(update={k: v for k, v in saved.items() if k in SAVED_KEYS})


def merged(docs_dir: Path, changes: Mapping[str, Any]) -> dict[str, Any]:
    """What the saved file would hold with `changes` (a value, or `null` to clear it; `hook` key by
    key) applied, every value checked (400 for the first that fails); nothing is written."""
    current = read_json_object(Root(docs_dir), SERVER_CONFIG)
    updated = dict(current)
    for key, value in changes.items():
        if key == "hook":
            hook = merge_hook(value, current.get("hook"))
            if hook:
                updated["hook"] = hook
            else:
                updated.pop("hook", None)
        elif value is None:
            if key not in SAVED_KEYS:
                check_value(key, value)  # refuses the unknown key
            updated.pop(key, None)
        else:
            updated[key] = check_value(key, value)
    return updated


def write_saved(docs_dir: Path, saved: Mapping[str, Any]) -> None:
    """The saved file, written whole through the docs dir's no-symlink walk."""
    data = (json.dumps(saved, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    files.update(Root(docs_dir), (SERVER_CONFIG,), lambda _current: data, display=SERVER_CONFIG)


def save_changes(docs_dir: Path, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Apply `changes` to the saved file and return what it holds now; everything is checked before
    anything is written."""
    updated = merged(docs_dir, changes)
    write_saved(docs_dir, updated)
    return updated
