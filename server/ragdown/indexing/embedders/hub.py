"""Models downloaded once from the model hub: a pinned repo, revision and SHA-256 for every file.

A spec is data (`HubModelSpec`): the hub repository, the commit it is pinned to, and each file's
path in the repository with its SHA-256 and size. `load_hub_model` makes sure every file is in the
cache and matches its pin, then loads the ONNX encoder.

- Cache layout: `<RAGDOWN_MODELS>/<repo>/<revision>/<path in repo>`, so an ONNX graph and its
  external-data file stay side by side as the graph expects. `RAGDOWN_MODELS` defaults to
  `$XDG_CACHE_HOME/ragdown/models`, else `~/.cache/ragdown/models`.
- Downloads come from `{hub}/{repo}/resolve/{revision}/{path}`, the hub being `RAGDOWN_HUB_URL`
  (default `https://huggingface.co`), redirects followed. Each file streams into a temporary file
  in its final directory, is hashed on the way, and is renamed into place (`ragdown.atomic`) only when
  its SHA-256 is the pinned one: a crash or a bad download never leaves a file under the final name.
- A cached file is hashed again on every load; one that no longer matches is deleted and refused.
- Without the hub (offline, a firewall), the error names the directory to pre-place the files in.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ragdown.atomic import atomic_file
from ragdown.errors import EmbedderError
from ragdown.indexing.embedders.model_files import bundled_models_dirs, default_models_dir, sha256_file
from ragdown.indexing.embedders.onnx_model import OnnxEmbedder, OnnxModelSpec, default_threads
from ragdown.settings import DEFAULT_HUB_URL, embedder_settings

if TYPE_CHECKING:  # httpx loads only when something must be downloaded
    import httpx

HUB_URL_ENV = "RAGDOWN_HUB_URL"

_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_REVISION_RE = re.compile(r"^[0-9a-f]{40}$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_CHUNK = 1 << 20
_USER_AGENT = "ragdown (model download)"


@dataclass(frozen=True)
class HubFile:
    """One file of a hub repository: its path there, the SHA-256 of its bytes and its size."""

    path: str
    sha256: str
    size: int

    def __post_init__(self) -> None:
        pure = PurePosixPath(self.path)
        if (
            not self.path
            or "\\" in self.path
            or pure.is_absolute()
            or any(part in ("", ".", "..") for part in self.path.split("/"))
        ):
            raise ValueError(f"a hub file path must be a plain relative path, got {self.path!r}")
        if not _SHA256_RE.match(self.sha256):
            raise ValueError(f"{self.path}: sha256 must be 64 lowercase hex digits, got {self.sha256!r}")
        if self.size < 0:
            raise ValueError(f"{self.path}: size must not be negative, got {self.size}")


@dataclass(frozen=True)
class HubModelSpec:
    """A hub model: where its pinned files are, which of them to load, and how to run it.

    `key` is the `RAGDOWN_EMBEDDER` name (used in messages); `encoder.name` is what meta.json
    records. `weights_file` is the file whose digest `model_sha256` reports (default: `model_file`;
    the external-data file when the graph keeps its weights there).
    """

    key: str
    repo: str
    revision: str
    files: tuple[HubFile, ...]
    model_file: str
    tokenizer_file: str
    encoder: OnnxModelSpec
    weights_file: str = ""
    by_path: Mapping[str, HubFile] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _REPO_RE.match(self.repo):
            raise ValueError(f"{self.key}: repo must be 'owner/name', got {self.repo!r}")
        if not _REVISION_RE.match(self.revision):
            raise ValueError(
                f"{self.key}: revision must be a full 40-hex commit, got {self.revision!r} "
                "(a branch name would let the files change under the pin)"
            )
        by_path = {f.path: f for f in self.files}
        if len(by_path) != len(self.files):
            raise ValueError(f"{self.key}: a file is listed twice")
        for role, path in (
            ("model_file", self.model_file),
            ("tokenizer_file", self.tokenizer_file),
            ("weights_file", self.weights_file or self.model_file),
        ):
            if path not in by_path:
                raise ValueError(f"{self.key}: {role} {path!r} is not among the pinned files")
        object.__setattr__(self, "by_path", by_path)

    @property
    def weights_sha256(self) -> str:
        return self.by_path[self.weights_file or self.model_file].sha256


def default_hub_url() -> str:
    """`RAGDOWN_HUB_URL`, else the public Hugging Face hub."""
    return embedder_settings().hub_url.strip() or DEFAULT_HUB_URL


def model_dir(models_dir: Path, spec: HubModelSpec) -> Path:
    """Where the files of `spec` live: `<models_dir>/<repo>/<revision>`."""
    return models_dir.joinpath(*spec.repo.split("/"), spec.revision)


def file_url(hub_url: str, spec: HubModelSpec, hub_file: HubFile) -> str:
    return f"{hub_url.rstrip('/')}/{spec.repo}/resolve/{spec.revision}/{hub_file.path}"


def _cached_path(models_dir: Path, spec: HubModelSpec, hub_file: HubFile) -> Path:
    return model_dir(models_dir, spec).joinpath(*hub_file.path.split("/"))


def _sha256_mismatch(what: str, expected: str, found: str) -> str:
    return f"{what} does not match its pinned SHA-256 (expected {expected}, found {found})"


class _HubUnavailableError(Exception):
    """The hub could not serve a file: unreachable, timed out, or a non-200 answer."""


def _verify_cached(path: Path, spec: HubModelSpec, hub_file: HubFile) -> None:
    """Refuse (and delete) a cached file that no longer matches its pin."""
    found = sha256_file(path)
    if found == hub_file.sha256:
        return
    try:
        path.unlink()
        removed = "it was deleted, so the next start downloads it again"
    except OSError as error:
        removed = f"it could not be deleted ({error}); delete it so it is fetched again"
    raise EmbedderError(
        f"{_sha256_mismatch(f'the cached {spec.key} model file {path}', hub_file.sha256, found)}; {removed}"
    )


def _offline_advice(spec: HubModelSpec, models_dir: Path, hub_url: str) -> str:
    target = model_dir(models_dir, spec).absolute()
    listing = ", ".join(f"{f.path} (sha256 {f.sha256}, {f.size} bytes)" for f in spec.files)
    return (
        f"To run without access to {hub_url}, place the files of {spec.repo} at revision "
        f"{spec.revision} in RAGDOWN_MODELS, under {target}/: {listing}; "
        f"or set {HUB_URL_ENV} to a mirror of the hub that serves them."
    )


def _download(client: httpx.Client, url: str, target: Path, hub_file: HubFile) -> None:
    """Stream `url` into a temporary file beside `target`, check it, then rename it into place
    (docs/design.md#server-files): a short, long or altered download never becomes `target`."""
    import httpx

    try:
        with atomic_file(target) as pending, client.stream("GET", url) as response:
            if response.status_code != 200:
                raise _HubUnavailableError(f"{url} answered {response.status_code} {response.reason_phrase}")
            digest = hashlib.sha256()
            received = 0
            for block in response.iter_bytes(_CHUNK):
                received += len(block)
                if received > hub_file.size:
                    raise EmbedderError(
                        f"the download of {url} is larger than its pinned size of {hub_file.size} "
                        "bytes; it was discarded"
                    )
                digest.update(block)
                pending.write(block)
            found = digest.hexdigest()
            if found != hub_file.sha256:
                raise EmbedderError(
                    f"{_sha256_mismatch(f'the download of {url}', hub_file.sha256, found)} after "
                    f"{received} of {hub_file.size} bytes; it was discarded. A proxy or a mirror may have "
                    "altered it: try again, or pre-place the verified file in RAGDOWN_MODELS"
                )
    except httpx.HTTPError as error:
        raise _HubUnavailableError(f"GET {url} failed ({type(error).__name__}: {error})") from error
    except OSError as error:
        raise EmbedderError(
            f"cannot write the model file {target} ({error}); make RAGDOWN_MODELS writable or "
            "point it at a directory that is"
        ) from error


def ensure_hub_files(
    spec: HubModelSpec,
    models_dir: Path,
    hub_url: str,
    *,
    client: httpx.Client | None = None,
) -> dict[str, Path]:
    """Every pinned file of `spec`, verified, by its path in the repo; missing ones are downloaded."""
    if not hub_url.startswith(("http://", "https://")):
        raise EmbedderError(f"{HUB_URL_ENV} must be an http(s) URL, got {hub_url!r}")
    paths: dict[str, Path] = {}
    missing: list[tuple[HubFile, Path]] = []
    for hub_file in spec.files:
        path = _cached_path(models_dir, spec, hub_file)
        baked = [p for p in (_cached_path(d, spec, hub_file) for d in bundled_models_dirs()) if p.is_file()]
        if baked:  # an image's own copy: verified like any other, never deleted (it is not ours)
            found = sha256_file(baked[0])
            if found != hub_file.sha256:
                what = f"the bundled {spec.key} model file {baked[0]}"
                raise EmbedderError(f"{_sha256_mismatch(what, hub_file.sha256, found)}; rebuild the image")
            paths[hub_file.path] = baked[0]
            continue
        if path.is_file():
            _verify_cached(path, spec, hub_file)
        else:
            missing.append((hub_file, path))
        paths[hub_file.path] = path
    if not missing:
        return paths
    import httpx

    own_client = client is None
    http = client or httpx.Client(
        follow_redirects=True,
        timeout=httpx.Timeout(60.0, connect=10.0),
        headers={"User-Agent": _USER_AGENT},
    )
    try:
        for hub_file, path in missing:
            url = file_url(hub_url, spec, hub_file)
            try:
                _download(http, url, path, hub_file)
            except _HubUnavailableError as error:
                raise EmbedderError(
                    f"could not download the {spec.key} model: {error}. "
                    f"{_offline_advice(spec, models_dir, hub_url)}"
                ) from error
    finally:
        if own_client:
            http.close()
    return paths


class HubEmbedder(OnnxEmbedder):
    """An ONNX encoder whose files came from the hub; reports the pinned digest of its weights."""

    def __init__(self, hub_spec: HubModelSpec, paths: Mapping[str, Path], threads: int) -> None:
        super().__init__(
            hub_spec.encoder, paths[hub_spec.model_file], paths[hub_spec.tokenizer_file], threads
        )
        self.hub_spec = hub_spec

    @property
    def model_sha256(self) -> str:
        return self.hub_spec.weights_sha256


def load_hub_model(
    spec: HubModelSpec,
    models_dir: Path | None = None,
    hub_url: str | None = None,
    threads: int | None = None,
) -> HubEmbedder:
    """Fetch (once) and verify the files of `spec`, then load it. Arguments default to the env."""
    paths = ensure_hub_files(
        spec,
        models_dir if models_dir is not None else default_models_dir(),
        hub_url if hub_url is not None else default_hub_url(),
    )
    return HubEmbedder(spec, paths, threads or default_threads())
