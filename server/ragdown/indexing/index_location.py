"""Where the index lives: a directory on disk (the default) or an object store named by
`RAGDOWN_INDEX_URI` (`s3://`, `gs://`, `az://`; docs/design.md#index-on-object-storage).

Both hold the same things: `meta.json`, which names the table directory in use, and the table
directories (`lance`, and `lance-<id>` beside it during a rebuild). On disk, meta.json is written
whole by a rename; on an object store, by one PUT, which replaces the object whole. Readers of an
object store see a commit within `refresh` (`RAGDOWN_INDEX_REFRESH_SECONDS`): LanceDB checks for a
new table version at most that often, and meta.json is read again at most that often.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ragdown.bounds import check_index_uri
from ragdown.errors import IndexStorageError
from ragdown.indexing.meta import META_FILE, IndexMeta, meta_json, read_meta, write_meta

if TYPE_CHECKING:
    from ragdown.settings import ServerSettings


class IndexLocation:
    """The index's root: `data_dir` itself, or an object-store URI."""

    def __init__(self, data_dir: Path, uri: str | None = None, refresh_s: float = 1.0) -> None:
        self.data_dir = data_dir
        self.uri = check_index_uri(uri) if uri else None
        if self.uri is not None and "://" not in self.uri:  # a path given as the URI
            self.data_dir, self.uri = Path(self.uri), None
        self.refresh = timedelta(seconds=refresh_s if self.uri else 0)
        self._meta: tuple[float, IndexMeta | None] | None = None
        self._lock = threading.Lock()

    @property
    def remote(self) -> bool:
        return self.uri is not None

    def __str__(self) -> str:
        return self.uri or str(self.data_dir)

    def table_uri(self, lance_dir: str) -> str:
        return f"{self.uri}/{lance_dir}" if self.uri else str(self.data_dir / lance_dir)

    def storage_options(self) -> dict[str, str]:
        """LanceDB's options for the store: an S3-compatible endpoint (MinIO, moto) from the AWS
        SDK's own `AWS_ENDPOINT_URL`; everything else (keys, region, workload identity) LanceDB
        reads from the providers' standard variables itself."""
        if self.uri is None or not self.uri.startswith("s3://"):
            return {}
        options: dict[str, str] = {}
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        if endpoint:
            options["aws_endpoint"] = endpoint
            if endpoint.startswith("http://"):
                options["allow_http"] = "true"
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if region:
            options["aws_region"] = region
        return options

    # --- meta.json -----------------------------------------------------------------------------

    def read_meta(self, *, fresh: bool = False) -> IndexMeta | None:
        """The recorded meta (None when missing or malformed). From an object store it is read again
        at most every `refresh`, unless `fresh`."""
        if self.uri is None:
            return read_meta(self.data_dir)
        now = time.monotonic()
        cached = self._meta
        if not fresh and cached is not None and now - cached[0] < self.refresh.total_seconds():
            return cached[1]
        fs, path = self.store_path(META_FILE)
        meta: IndexMeta | None = None
        try:
            with fs.open_input_stream(path) as stream:
                meta = IndexMeta.model_validate_json(stream.read())
        except (FileNotFoundError, ValueError):  # missing, or not a meta (ValidationError is a ValueError)
            pass
        except OSError as error:
            raise self.refused(error) from error
        with self._lock:
            self._meta = (now, meta)
        return meta

    def write_meta(self, meta: IndexMeta) -> None:
        if self.uri is None:
            write_meta(self.data_dir, meta)
            return
        body = meta_json(meta)
        fs, path = self.store_path(META_FILE)
        try:
            with fs.open_output_stream(path) as stream:  # one PUT: the object is replaced whole
                stream.write(body)
        except OSError as error:
            raise self.refused(error) from error
        with self._lock:
            self._meta = (time.monotonic(), meta)

    # --- table directories ---------------------------------------------------------------------

    def table_dirs(self) -> list[str]:
        """The names of the directories under the root."""
        if self.uri is None:
            if not self.data_dir.is_dir():
                return []
            return sorted(e.name for e in self.data_dir.iterdir() if e.is_dir() and not e.is_symlink())
        import pyarrow.fs as pafs

        fs, path = self.store_path("")
        try:
            infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        except OSError as error:
            raise self.refused(error) from error
        return sorted(Path(i.path).name for i in infos if i.type == pafs.FileType.Directory)

    def remove_dir(self, name: str) -> None:
        """Remove a table directory and everything under it; a missing one is not an error."""
        if self.uri is None:
            shutil.rmtree(self.data_dir / name, ignore_errors=True)
            return
        fs, path = self.store_path(name)
        try:
            fs.delete_dir(path)
        except FileNotFoundError:
            return
        except OSError as error:
            raise self.refused(error) from error

    def store_path(self, name: str) -> tuple[Any, str]:
        """pyarrow's filesystem and the path of `name` (a `/` path) under the URI."""
        try:
            fs, root = self.filesystem()
        except (OSError, ValueError) as error:
            raise IndexStorageError(f"cannot reach the index at {self}: {error}") from error
        return fs, f"{root}/{name}" if name else root

    def refused(self, error: OSError) -> IndexStorageError:
        return IndexStorageError(f"the index at {self} refused a request: {error}")

    def filesystem(self) -> tuple[Any, str]:
        """pyarrow's filesystem for the URI and the root path within it."""
        import pyarrow.fs as pafs

        assert self.uri is not None
        parsed = urlparse(self.uri)
        root = f"{parsed.netloc}{parsed.path}".rstrip("/")
        if parsed.scheme == "s3":
            options = self.storage_options()
            endpoint = options.get("aws_endpoint")
            kwargs: dict[str, Any] = {}
            if endpoint:
                endpoint_url = urlparse(endpoint)
                kwargs["endpoint_override"] = endpoint_url.netloc
                kwargs["scheme"] = endpoint_url.scheme or "https"
            if "aws_region" in options:
                kwargs["region"] = options["aws_region"]
            return pafs.S3FileSystem(**kwargs), root
        filesystem, path = pafs.FileSystem.from_uri(self.uri)
        return filesystem, path.rstrip("/")


def index_location(data_dir: Path, settings: ServerSettings) -> IndexLocation:
    """Where the index lives: `RAGDOWN_INDEX_URI`, else the data dir
    (docs/design.md#index-on-object-storage)."""
    return IndexLocation(data_dir, settings.index_uri, settings.index_refresh_seconds)
