"""Server settings from the environment (`RAGDOWN_*`), read once at start."""

from __future__ import annotations

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
