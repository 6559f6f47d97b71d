"""Settings files, read leniently: `.ragdown.json` (a folder's own) and `.ragdown-server.json` (saved
server settings). Both are looked at on every request and hook call, so an edit applies to the next
one; a missing, unreadable or malformed file counts as empty rather than breaking the hook. What was
parsed is kept while the file's stat says it is unchanged (docs/design.md#settings-files-in-memory)."""

from __future__ import annotations

import copy
import json
import logging
import stat
import threading
import time
from typing import Any

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.errors import Refusal

log = logging.getLogger(__name__)

# A file changed this recently may change again within the same timestamp tick (a few ms on most
# file systems) and keep its size: it is read again until its change is older than this.
SETTLED_NS = 2_000_000_000
# Settings files whose parsed object is kept (one per folder, and the server's): far more than any
# docs dir holds; past it the cache starts again empty.
MAX_KEPT = 4096

_Stamp = tuple[int, int, int, int, int]
_kept: dict[tuple[str, tuple[str, ...], str], tuple[_Stamp, dict[str, Any]]] = {}
_kept_lock = threading.Lock()


def _stamp(info: Any) -> _Stamp:
    """What tells one version of a file from another without reading it: a rename over it (how every
    settings file is written, atomically) changes the inode, an edit in place the times or size."""
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)


def read_json_object(folder: Root, name: str) -> dict[str, Any]:
    """The file's JSON object, or {} when it is absent, a symlink (at any level), unreadable or not
    an object. Read again only when its stat changed (or it changed within SETTLED_NS); the caller
    gets its own copy."""
    key = (str(folder.base), folder.parts, name)
    try:
        info = files.lstat(folder, (name,))
    except (OSError, Refusal):
        info = None  # the read below says why, or finds nothing
    if info is not None and stat.S_ISREG(info.st_mode):
        stamp = _stamp(info)
        settled = time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > SETTLED_NS
        kept = _kept.get(key)
        if kept is not None and kept[0] == stamp and settled:
            return copy.deepcopy(kept[1])
    data = _read_json_object(folder, name)
    with _kept_lock:
        if info is not None and stat.S_ISREG(info.st_mode):
            if len(_kept) >= MAX_KEPT:
                _kept.clear()
            # Kept under the stat taken before the read: a change after it makes the next stat differ.
            _kept[key] = (_stamp(info), copy.deepcopy(data))
        else:
            _kept.pop(key, None)
    return data


def _read_json_object(folder: Root, name: str) -> dict[str, Any]:
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
