"""Settings files, read leniently: `.ragdown.json` (a folder's own) and `.ragdown-server.json` (saved
server settings). Both are re-read on every hook call, so an edit applies to the next prompt; a
missing, unreadable or malformed file counts as empty rather than breaking the hook."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.errors import Refusal

log = logging.getLogger(__name__)

FOLDER_CONFIG = ".ragdown.json"
SERVER_CONFIG = ".ragdown-server.json"
# The hook settings a settings file may hold (BEHAVIOUR §4.1), validated key by key.
HOOK_KEYS = ("top_k", "min_score", "min_ratio", "max_chars")


def read_json_object(folder: Root, name: str) -> dict[str, Any]:
    """The file's JSON object, or {} when it is absent, a symlink (at any level), unreadable or not
    an object."""
    try:
        raw = files.read_file(folder, (name,))
        if raw is None:
            return {}
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, Refusal, UnicodeDecodeError, json.JSONDecodeError) as error:
        log.warning("ignoring %s of %s: %s", name, "/".join(folder.parts) or "the docs folder", error)
        return {}
    return data if isinstance(data, dict) else {}


def hook_layer(folder: Root, name: str) -> dict[str, Any]:
    """The `hook` object of a settings file ({} when it has none or it is not an object)."""
    hook = read_json_object(folder, name).get("hook")
    return hook if isinstance(hook, dict) else {}


def hook_value_error(key: str, value: object) -> str | None:
    """Why `value` cannot be the hook setting `key`, or None when it can."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"{key} must be a number"
    if key == "min_score":
        return None
    if key == "min_ratio":
        return None if 0 <= value <= 1 else f"{key} must be between 0 and 1"
    if isinstance(value, float) and not value.is_integer():
        return f"{key} must be a non-negative integer"
    return None if value >= 0 else f"{key} must be a non-negative integer"
