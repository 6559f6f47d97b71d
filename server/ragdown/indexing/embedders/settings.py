"""Where models come from and how they run, read from the environment here and nowhere else
(docs/design.md#configuration). `ServerSettings` extends this class, so a server reads them once; an
embedder made on its own (the CLI's, a test's) reads them when it is made."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from ragdown.errors import ConfigError, plain

DEFAULT_HUB_URL = "https://huggingface.co"
DEFAULT_EMBEDDING_URL = "https://api.openai.com/v1"


class EmbedderSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RAGDOWN_", extra="ignore")

    threads: int | None = Field(default=None, ge=1, description="ONNX Runtime threads; default all CPUs")
    minilm_quantize: bool = Field(
        default=True, description="run the int8 build of MiniLM (made once from the packaged model)"
    )
    models: Path | None = Field(
        default=None, description="where hub models and the int8 build are kept; default under the cache"
    )
    models_bundled: str = Field(
        default="", description="read-only folders searched first for verified models (os.pathsep-separated)"
    )
    hub_url: str = Field(default=DEFAULT_HUB_URL, description="the model hub, or a mirror of it")
    # mcp-ragdown's names first, so its configurations keep working; the OPENAI_ ones are aliases.
    embedding_url: str = Field(
        default=DEFAULT_EMBEDDING_URL,
        validation_alias=AliasChoices("RAGDOWN_EMBEDDING_URL", "RAGDOWN_OPENAI_BASE_URL"),
        description="the OpenAI-compatible endpoint of openai:<model>",
    )
    embedding_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "RAGDOWN_EMBEDDING_API_KEY", "RAGDOWN_OPENAI_API_KEY", "OPENAI_API_KEY"
        ),
        description="its API key (never shown)",
    )
    cache_home: Path | None = Field(
        default=None, validation_alias=AliasChoices("XDG_CACHE_HOME"), description="the user's cache folder"
    )

    def models_dir(self) -> Path:
        """RAGDOWN_MODELS, else `<cache>/ragdown/models`."""
        return (self.models or self.cache() / "ragdown" / "models").expanduser()

    def bundled_dirs(self) -> list[Path]:
        return [Path(part).expanduser() for part in self.models_bundled.split(os.pathsep) if part.strip()]

    def cache(self) -> Path:
        """`$XDG_CACHE_HOME`, else `~/.cache`: where indexes and models live by default."""
        return self.cache_home.expanduser() if self.cache_home else Path.home() / ".cache"

    def cpu_threads(self) -> int:
        """RAGDOWN_THREADS, else every CPU this process may use."""
        if self.threads is not None:
            return self.threads
        try:
            return len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            return os.cpu_count() or 1


def embedder_settings() -> EmbedderSettings:
    """The environment's settings now; a value that cannot be used is a refusal naming it."""
    try:
        return EmbedderSettings()
    except ValidationError as error:
        first = error.errors()[0]
        name = "RAGDOWN_" + "_".join(str(p) for p in first["loc"]).upper()
        raise ConfigError(f"{name} {plain(first)}") from None
