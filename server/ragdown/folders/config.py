"""Settings files, read leniently: `.ragdown.json` (a folder's own) and `.ragdown-server.json` (saved
server settings). Both are re-read on every hook call, so an edit applies to the next prompt; a
missing, unreadable or malformed file counts as empty rather than breaking the hook."""

from __future__ import annotations

import json
import logging
from typing import Any

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.errors import Refusal

log = logging.getLogger(__name__)


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
