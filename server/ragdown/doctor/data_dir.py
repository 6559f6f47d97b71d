"""The data dir: writable by the server, and nothing in it readable by others, since it holds every
folder's text (docs/security.md#tenants: 0700 and 0600; docs/doctor.md#data-dir)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ragdown.doctor.report import Check, fail, first_few, ok, warn
from ragdown.doctor.target import Target

DATA_DIR = "data dir"
MODES = "data dir modes"
# The walk stops after this many entries: the index's own files are many, and one open one says enough.
MAX_ENTRIES = 100_000


def check_writable(target: Target) -> Check:
    data = target.data_dir
    if target.settings.index_uri and "://" in target.settings.index_uri:
        where = f"the index is at {target.settings.index_uri}; "
    else:
        where = ""
    if not data.exists():
        return warn(DATA_DIR, f"{where}{data} does not exist yet", "the first index run makes it (0700)")
    if not data.is_dir():
        return fail(DATA_DIR, f"{data} is a file", "point RAGDOWN_DATA_DIR at a directory")
    if not os.access(data, os.W_OK | os.X_OK):
        if target.settings.role == "reader":
            return ok(DATA_DIR, f"{where}{data} is read-only, as a reader may mount it")
        return fail(
            DATA_DIR,
            f"{data} is not writable by this user",
            "chown it to the server's user (or fix its mount)",
        )
    return ok(DATA_DIR, f"{where}{data} is writable")


def open_entries(data: Path) -> list[str]:
    """Entries under `data` (itself included) that group or others may read, write or enter; symlinks
    are not followed."""
    found = []
    seen = 0
    for path in [data, *_walk(data)]:
        seen += 1
        if seen > MAX_ENTRIES:
            break
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if not stat.S_ISLNK(mode) and mode & 0o077:
            found.append(f"{path} ({stat.S_IMODE(mode):04o})")
    return found


def _walk(data: Path) -> list[Path]:
    out: list[Path] = []
    for directory, dirs, names in os.walk(data):
        out += [Path(directory, name) for name in (*dirs, *names)]
        if len(out) > MAX_ENTRIES:
            break
    return out


def check_modes(target: Target) -> Check:
    data = target.data_dir
    if not data.is_dir():
        return ok(MODES, f"{data} does not exist yet")
    found = open_entries(data)
    if found:
        return fail(
            MODES,
            f"{len(found)} entr(ies) in the data dir are open to others: {first_few(found)}",
            f"run `chmod -R go-rwx {data}` (ragdown serve also tightens them at start)",
        )
    return ok(MODES, f"{data} and its files are the owner's only")
