"""Server settings from the environment (`RAGDOWN_*`), read once at start."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ServerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RAGDOWN_", extra="ignore")

    embedder: str | None = Field(
        default=None,
        description="minilm (default), granite-small, bge-small, "
        "openai:<model> or hash; unset means the one the index was built with",
    )
    data_dir: Path | None = Field(default=None, description="where the index lives; default under ~/.cache")
    watch: bool = Field(default=True, description="false: sync only at start and on request")
    threads: int | None = Field(default=None, ge=1, description="ONNX Runtime threads; default all CPUs")


def cache_home() -> Path:
    configured = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(configured) if configured else Path.home() / ".cache"


def default_data_dir(docs_dir: Path, *, folders_mode: bool = False) -> Path:
    """`~/.cache/ragdown/<16 hex>`: `serve` (folders) and single-folder modes never share an index."""
    key = ("folders\0" if folders_mode else "") + str(docs_dir.resolve())
    return cache_home() / "ragdown" / hashlib.sha256(key.encode()).hexdigest()[:16]
