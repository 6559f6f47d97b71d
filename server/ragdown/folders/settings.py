"""Server settings from the environment (`RAGDOWN_*`), read once at start."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import SettingsConfigDict

from ragdown.documents.paths import notes_dir
from ragdown.errors import ConfigError
from ragdown.hook.settings import MaxChars, MinRatio, MinScore, TopK
from ragdown.indexing.embedders.settings import EmbedderSettings


class ServerSettings(EmbedderSettings):
    model_config = SettingsConfigDict(env_prefix="RAGDOWN_", extra="ignore")

    embedder: str | None = Field(
        default=None,
        description="minilm (default), granite-small, bge-small, "
        "openai:<model> or hash; unset means the one the index was built with",
    )
    data_dir: Path | None = Field(default=None, description="where the index lives; default under ~/.cache")
    watch: bool = Field(default=True, description="false: sync only at start and on request")
    text_limit: int = Field(
        default=2000, ge=0, description="characters per hit in text output; 0: never clip"
    )
    max_per_document: int = Field(
        default=0, ge=0, description="most sections of one document per search; 0: no cap"
    )
    follow_links: int = Field(
        default=0, ge=0, description="follow the wikilinks of this many best hits; 0: off"
    )
    abstain: bool = Field(default=True, description="no hits for a query the index knows no word of")
    query_log: bool = Field(
        default=False, description="log searches, hook calls and reads to query-log.jsonl"
    )
    query_log_prompts: bool = Field(
        default=False, description="keep hook prompts in the query log as written; false: a hash of each"
    )
    query_log_file: Path | None = Field(
        default=None, description="where the query log goes (default <data dir>/query-log.jsonl); one per pod"
    )
    # ragdown_context's defaults (docs/hook.md#settings), bounded as everywhere else (hook/settings.py).
    hook_top_k: TopK | None = Field(default=None, description="ragdown_context: most sections per prompt")
    hook_min_score: MinScore | None = Field(default=None, description="ragdown_context: lowest cosine")
    hook_min_ratio: MinRatio | None = Field(
        default=None, description="ragdown_context: lowest share of the best hit's cosine"
    )
    hook_max_chars: MaxChars | None = Field(default=None, description="ragdown_context: most characters")
    # `serve` and `stdio`
    docs_dir: Path | None = Field(default=None, description="the folders `serve` serves")
    notes_dir: str = Field(default="notes", description="where ragdown_remember writes, inside a folder")
    token: str | None = Field(
        default=None, repr=False, description="agents' bearer token: /mcp only (docs/security.md)"
    )
    admin_token: str | None = Field(
        default=None,
        repr=False,
        description="the admin's bearer token: /api and folder settings; unset: /api is off",
    )
    internal_token: str | None = Field(
        default=None,
        repr=False,
        description="readers' token for the primary's internal listener; unset: a per-data-dir one (local)",
    )
    internal_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="the primary's internal listener port for readers; 0: only <data_dir>/primary.sock",
    )
    secure_local_net: bool = Field(
        default=False,
        validation_alias=AliasChoices("SECURE_LOCAL_NET", "RAGDOWN_SECURE_LOCAL_NET"),
        description="skip auth (only on a network you trust)",
    )
    port: int = Field(default=3000, ge=1, le=65535, validation_alias=AliasChoices("PORT", "RAGDOWN_PORT"))
    host: str = Field(default="127.0.0.1", description="the address `serve` binds")
    read_only: bool = Field(default=False, description="hide and refuse the write tools")
    disabled_tools: str = Field(default="", description="comma-separated tools neither listed nor callable")
    allowed_hosts: str = Field(
        default="", description="extra Host values MCP accepts (an ingress host); * for any"
    )
    root_mcp: bool = Field(default=False, description="serve every MCP folder at /mcp too")
    max_concurrent: int = Field(default=4, ge=1, description="tool calls running at once")
    role: Literal["auto", "primary", "reader"] = Field(
        default="auto", description="auto: the process holding <data_dir>/primary.lock writes, others read"
    )
    primary_url: str | None = Field(default=None, description="a reader's primary: http://… or unix://…")
    takeover_s: float = Field(default=30.0, gt=0, description="how often a reader tries to take over")
    metrics_port: int = Field(default=9090, ge=0, le=65535, description="Prometheus /metrics port; 0: off")
    max_queue: int = Field(default=32, ge=0, description="tool calls waiting; past that: overloaded")
    index_cache_mb: int = Field(
        default=64, ge=1, description="LanceDB's cache of index data (full-text and vector), per process"
    )
    metadata_cache_mb: int = Field(default=16, ge=1, description="LanceDB's cache of table manifests")
    index_uri: str | None = Field(
        default=None,
        description="where the index lives: s3://, gs:// or az:// (or a path); default: the data dir",
    )
    index_refresh_seconds: float = Field(
        default=1.0,
        gt=0,
        le=60,
        description="on object storage, how soon a reader sees the primary's commits (seconds)",
    )

    @field_validator("docs_dir", mode="before")
    @classmethod
    def _no_docs_dir(cls, value: object) -> object:
        """An empty RAGDOWN_DOCS_DIR is none: the chart's object-store readers clear the image's
        default that way (docs/design.md#readers-without-the-folder)."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("index_uri")
    @classmethod
    def _index_uri(cls, value: str | None) -> str | None:
        """A URI no store can serve is refused when the settings load
        (docs/design.md#index-on-object-storage)."""
        if value is None or not value.strip():
            return None
        from ragdown.indexing.location import IndexLocationError, check_index_uri

        try:
            return check_index_uri(value)
        except IndexLocationError as error:
            raise ValueError(str(error)) from None

    @field_validator("notes_dir")
    @classmethod
    def _notes_inside(cls, value: str) -> str:
        """A notes dir outside the folder or in a skipped one is refused when the settings load, not
        at the first ragdown_remember."""
        try:
            notes_dir(value)
        except ConfigError as error:
            raise ValueError(str(error)) from None
        return value

    def disabled_tool_names(self) -> frozenset[str]:
        return frozenset(name.strip() for name in self.disabled_tools.split(",") if name.strip())

    def hook_layer(self) -> dict[str, float]:
        """The hook values the environment sets, as a settings layer."""
        values = {
            "top_k": self.hook_top_k,
            "min_score": self.hook_min_score,
            "min_ratio": self.hook_min_ratio,
            "max_chars": self.hook_max_chars,
        }
        return {key: value for key, value in values.items() if value is not None}
