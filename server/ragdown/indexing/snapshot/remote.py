"""The search snapshot beside an index on object storage (docs/design.md#search-snapshot-on-object-storage).

The primary writes each snapshot under its own data dir as on disk, then copies it to
`<index URI>/snapshot/<name>/` (the manifest last) and only then replaces `<index URI>/snapshot/CURRENT`
by one PUT. A reader whose table reaches the version CURRENT names copies that snapshot into its own
data dir once (a local copy per version), then maps it like any other. Everything read from the store
is checked before it is written locally: the snapshot's name and every file name against what a
snapshot holds, and every file's length against the manifest's. A bucket someone else writes to can
make a reader scan the table as before, never write outside its snapshot directory.
"""

from __future__ import annotations

import logging
import re
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragdown.atomic import sync_dir, write_atomic
from ragdown.errors import IndexStorageError
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.snapshot.layout import (
    CURRENT,
    MANIFEST,
    SNAPSHOT_DIR,
    CurrentSnapshot,
    SnapshotManifest,
    current_json,
    read_current,
    snapshot_root,
)
from ragdown.indexing.snapshot.write import TEMP_PREFIX, remove_old
from ragdown.modes import make_private_dir, private_files

log = logging.getLogger(__name__)

# What a snapshot's name and its files' names look like (snapshot/write.py): nothing else from the
# store becomes a local path.
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}-v[0-9]{1,20}-[0-9a-f]{8}")
_FILE = re.compile(r"[a-z0-9][a-z0-9.-]{0,40}")
_CHUNK = 1 << 20
# Reading from the store: each read of a stream is a request of its own, so large ones (1 MB reads
# took 5x as long as 16 MB reads), and the files side by side.
_READ = 16 << 20
_FILES_AT_ONCE = 4


class _Retired:
    """When this process stopped naming each snapshot in the store's CURRENT (monotonic time), and
    when it first named one: a snapshot it never named stopped being current before that."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.since: dict[str, float] = {}
        self.first_put: float | None = None


_RETIRED: dict[str, _Retired] = {}
_RETIRED_LOCK = threading.Lock()


def _retired(location: IndexLocation) -> _Retired:
    with _RETIRED_LOCK:
        return _RETIRED.setdefault(str(location), _Retired())


def _path(location: IndexLocation, *parts: str) -> tuple[Any, str]:
    return location.store_path("/".join((SNAPSHOT_DIR, *parts)))


def read_remote_current(location: IndexLocation) -> CurrentSnapshot | None:
    """The store's CURRENT, None when missing or not one (a name that is not a snapshot's included)."""
    fs, path = _path(location, CURRENT)
    try:
        with fs.open_input_stream(path) as stream:
            current = CurrentSnapshot.model_validate_json(stream.read(4096))
    except (FileNotFoundError, ValueError, ValidationError):
        return None
    except OSError as error:
        raise location.refused(error) from error
    if not _NAME.fullmatch(current.name) or not _NAME.fullmatch(f"{current.lance_dir}-v0-00000000"):
        log.warning("ignoring the snapshot pointer on %s: it names %r", location, current.name)
        return None
    return current


def publish(location: IndexLocation, data_dir: Path, name: str, keep_for_s: float) -> None:
    """Copy the local snapshot `name` to the store, unless there already, and make it the store's
    current one; then remove the store's snapshots no longer current for more than `keep_for_s`."""
    local = read_current(data_dir)
    if local is None or local.name != name:
        return
    remote = read_remote_current(location)
    if remote == local:
        return
    directory = snapshot_root(data_dir) / name
    if remote is None or remote.name != name:
        fs, _ = _path(location)
        manifest = directory / MANIFEST
        for entry in sorted(directory.iterdir(), key=lambda e: e == manifest):  # the manifest last
            _, target = _path(location, name, entry.name)
            with entry.open("rb") as source, fs.open_output_stream(target) as sink:
                while chunk := source.read(_CHUNK):
                    sink.write(chunk)
    _put_current(location, local, remote)
    remove_old_remote(location, keep_for_s)


def repoint_remote(location: IndexLocation, lance_dir: str, old_version: int, new_version: int) -> None:
    """After a compaction: the store's current snapshot of `old_version` answers for `new_version`."""
    remote = read_remote_current(location)
    if remote is None or (remote.lance_dir, remote.table_version) != (lance_dir, old_version):
        return
    _put_current(location, remote.model_copy(update={"table_version": new_version}), remote)


def _put_current(location: IndexLocation, current: CurrentSnapshot, previous: CurrentSnapshot | None) -> None:
    fs, path = _path(location, CURRENT)
    with fs.open_output_stream(path) as stream:  # one PUT: the object is replaced whole
        stream.write(current_json(current))
    retired = _retired(location)
    with retired.lock:
        now = time.monotonic()
        retired.first_put = retired.first_put if retired.first_put is not None else now
        retired.since.pop(current.name, None)
        if previous is not None and previous.name != current.name:
            retired.since.setdefault(previous.name, now)


def remove_old_remote(location: IndexLocation, keep_for_s: float) -> None:
    """Remove the store's snapshots that stopped being current more than `keep_for_s` ago (a reader
    may still be copying one). One this process never named stopped before its first PUT."""
    import pyarrow.fs as pafs

    current = read_remote_current(location)
    retired = _retired(location)
    fs, root = _path(location)
    try:
        infos = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
    except OSError as error:
        log.debug("could not list the snapshots on %s: %s", location, error)
        return
    now = time.monotonic()
    for info in infos:
        name = Path(info.path).name
        if info.type != pafs.FileType.Directory or (current is not None and name == current.name):
            continue
        with retired.lock:
            since = retired.since.get(name, retired.first_put)
        if since is None or now - since < keep_for_s:
            continue
        try:
            fs.delete_dir(info.path)
        except OSError as error:  # left for the next publish
            log.debug("could not remove the old snapshot %s on %s: %s", name, location, error)
            continue
        with retired.lock:
            retired.since.pop(name, None)


def fetch(location: IndexLocation, data_dir: Path, lance_dir: str, version: int, keep_for_s: float) -> bool:
    """Make the store's current snapshot this process's local one when it answers for `lance_dir` at
    `version`, copying it unless a local copy is there; False when the store has none for it or the
    copy does not check out (the table is then read as before)."""
    try:
        current = read_remote_current(location)
        if current is None or (current.lance_dir, current.table_version) != (lance_dir, version):
            return False
        root = snapshot_root(data_dir)
        with private_files():
            make_private_dir(root)
            if not (root / current.name).is_dir():
                _copy_down(location, root, current.name)
            write_atomic(root / CURRENT, current_json(current), mode=0o600)
        remove_old(data_dir, keep_for_s)
        return True
    except (OSError, ValueError, IndexStorageError) as error:
        log.info("not using the snapshot on %s: %s", location, error)
        return False


def _copy_down(location: IndexLocation, root: Path, name: str) -> None:
    """Copy the store's snapshot `name` into `root/name`, whole or not at all."""
    fs, _ = _path(location)
    staging = root / f"{TEMP_PREFIX}{name}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(mode=0o700)
    try:
        _, manifest_path = _path(location, name, MANIFEST)
        with fs.open_input_stream(manifest_path) as stream:
            body = stream.read(1 << 20)
        manifest = SnapshotManifest.model_validate_json(body)
        for file in manifest.sizes:
            if file == MANIFEST or not _FILE.fullmatch(file):
                raise ValueError(f"its manifest names a file {file!r} no snapshot holds")

        def copy(file: str, size: int) -> None:
            _, source_path = _path(location, name, file)
            with fs.open_input_stream(source_path) as source, (staging / file).open("wb") as sink:
                left = size
                while chunk := source.read(min(_READ, left + 1)):
                    left -= len(chunk)
                    if left < 0:
                        raise ValueError(f"{file} is longer than its manifest records")
                    sink.write(chunk)
            if left:
                raise ValueError(f"{file} is shorter than its manifest records")

        with ThreadPoolExecutor(_FILES_AT_ONCE, thread_name_prefix="ragdown-snapshot-copy") as pool:
            for done in [pool.submit(copy, file, size) for file, size in manifest.sizes.items()]:
                done.result()
        (staging / MANIFEST).write_bytes(body)
        staging.rename(root / name)
        sync_dir(root)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
