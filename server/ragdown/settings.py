"""The settings ragdown reads from the environment (docs/design.md#configuration): the server's
(`ServerSettings`, once at start) and those of an embedder made on its own (`embedder_settings()`, the
CLI's or a test's). What each value may be is `bounds.py`.

Each field's description is its row of the README's configuration table: `python -m
ragdown.settings_table README.md` writes the table, and a test fails while the two differ.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic.config import JsonDict
from pydantic_settings import BaseSettings, SettingsConfigDict

from ragdown.bounds import (
    DEFAULT_EMBEDDER,
    DEFAULT_MAX_CHARS,
    DEFAULT_MIN_RATIO,
    DEFAULT_TOP_K,
    MaxChars,
    MinRatio,
    MinScore,
    TopK,
    check_index_uri,
)
from ragdown.documents.paths import notes_dir
from ragdown.errors import ConfigError, plain

DEFAULT_HUB_URL = "https://huggingface.co"
DEFAULT_EMBEDDING_URL = "https://api.openai.com/v1"


def readme_default(default: str) -> JsonDict:
    """A field's default as the README's table says it, where the value itself does not (None, or
    a value another module computes)."""
    return {"shown_default": default}


class EmbedderSettings(BaseSettings):
    """Where models come from and how they run. `ServerSettings` extends this class, so a server
    reads them once; an embedder made on its own (the CLI's, a test's) reads them when it is made."""

    model_config = SettingsConfigDict(env_prefix="RAGDOWN_", extra="ignore")

    threads: int | None = Field(
        default=None, ge=1, json_schema_extra=readme_default("all CPUs"), description="ONNX Runtime threads"
    )
    minilm_quantize: bool = Field(
        default=True,
        description="`false` runs the packaged MiniLM file instead of the int8 build made from it",
    )
    models: Path | None = Field(
        default=None,
        json_schema_extra=readme_default("`~/.cache/ragdown/models`"),
        description="where hub models and the int8 MiniLM build are cached",
    )
    models_bundled: str = Field(
        default="",
        description="read-only folders (`:`-separated) searched first for verified models: the image's "
        'baked ones (`docker build --build-arg BAKE_EMBEDDERS="bge-small"` bakes hub models in too)',
    )
    hub_url: str = Field(
        default=DEFAULT_HUB_URL, description="a mirror of the model hub for `granite-small` / `bge-small`"
    )
    embedding_url: str = Field(
        default=DEFAULT_EMBEDDING_URL,
        validation_alias=AliasChoices("RAGDOWN_EMBEDDING_URL", "RAGDOWN_OPENAI_BASE_URL"),
        description="the OpenAI-compatible endpoint of `openai:<model>`",
    )
    embedding_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "RAGDOWN_EMBEDDING_API_KEY", "RAGDOWN_OPENAI_API_KEY", "OPENAI_API_KEY"
        ),
        description="its API key, sent as a bearer token (never shown)",
    )
    cache_home: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("XDG_CACHE_HOME"),
        json_schema_extra=readme_default("`~/.cache`"),
        description="the user's cache folder: indexes and models live under it by default",
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
        raise ConfigError(f"{setting_name(first['loc'])} {plain(first)}") from None


def setting_name(loc: tuple[int | str, ...]) -> str:
    """The variable a validation problem is about, as the user set it: a field read under another
    name (`PORT`, `SECURE_LOCAL_NET`, `XDG_CACHE_HOME`) is reported by that name, not as RAGDOWN_…"""
    field = str(loc[0]) if loc else ""
    if field in ServerSettings.model_fields:
        return "RAGDOWN_" + "_".join(str(part) for part in loc).upper()
    # pydantic names a field read under other names by the first of them, whichever was set
    given = {name.upper() for name in os.environ}
    for info in ServerSettings.model_fields.values():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices) and field in alias.choices:
            names = [str(choice).upper() for choice in alias.choices]
            return next((name for name in names if name in given), field.upper())
    return field.upper()


def settings_refusal(error: ValidationError) -> ConfigError:
    """Every problem of the environment's settings, in one line."""
    problems = "; ".join(f"{setting_name(e['loc'])} {plain(e)}" for e in error.errors())
    return ConfigError(f"invalid setting: {problems}")


def check_lance_threads() -> None:
    """LANCE_CPU_THREADS, when the user sets it, is a whole number of 1 or more: LanceDB reads it in
    Rust and panics on anything else (docs/design.md#lancedb-threads)."""
    value = os.environ.get("LANCE_CPU_THREADS")
    if value is None or (value.strip().isdigit() and int(value) >= 1):
        return
    raise ConfigError(
        f"invalid setting: LANCE_CPU_THREADS must be a whole number of 1 or more, got {value!r} "
        "(unset it to use every CPU)"
    )


class ServerSettings(EmbedderSettings):
    """The server's settings (`RAGDOWN_*`), read once at start."""

    model_config = SettingsConfigDict(env_prefix="RAGDOWN_", extra="ignore")

    embedder: str | None = Field(
        default=None,
        json_schema_extra=readme_default(f"the index's, else `{DEFAULT_EMBEDDER}`"),
        description="`minilm`, `granite-small`, `bge-small`, `openai:<model>` or `hash`",
    )
    data_dir: Path | None = Field(
        default=None,
        json_schema_extra=readme_default("`~/.cache/ragdown/<hash>`"),
        description="where the index and `meta.json` live",
    )
    index_uri: str | None = Field(
        default=None,
        json_schema_extra=readme_default("the data dir"),
        description="the index on object storage instead: `s3://BUCKET/PREFIX`, `gs://…`, `az://…`; readers "
        "then need no folder (docs/design.md#index-on-object-storage)",
    )
    index_refresh_seconds: float = Field(
        default=1.0, gt=0, le=60, description="on object storage, how soon readers see the primary's commits"
    )
    watch: bool = Field(
        default=True,
        description="watch the folder and sync 750 ms after the last change; `false`: sync only at start "
        "and on request",
    )
    text_limit: int = Field(
        default=2000,
        ge=0,
        description="characters per hit in text output and hook blocks; a cut names the `ragdown_read_doc` "
        "call for the rest; `0` never cuts",
    )
    max_per_document: int = Field(
        default=0,
        ge=0,
        description="most sections of one document before other documents fill in; `0` is no cap",
    )
    follow_links: int = Field(
        default=0, ge=0, description="follow the wikilinks of this many best hits; `0` is off"
    )
    abstain: bool = Field(
        default=True,
        description="no hits for a query the index knows no word of and has no strong vector match for",
    )
    one_per_section: bool = Field(
        default=True,
        description="a section (one file and heading) appears once in the hits, at its best chunk; the "
        "next sections take the slots its other chunks would have filled",
    )
    query_log: bool = Field(
        default=False,
        description="append each search, hook call and read to the query log (paths, lines and scores, "
        "never document text; rotated at 10 MB to one `.1` file)",
    )
    query_log_prompts: bool = Field(
        default=False, description="keep hook prompts in the query log as written; `false`: a hash of each"
    )
    query_log_file: Path | None = Field(
        default=None,
        json_schema_extra=readme_default("`<data dir>/query-log.jsonl`"),
        description="where the query log goes (one file per pod in a cluster)",
    )
    # ragdown_context's defaults (docs/hook.md#settings), bounded as everywhere else (bounds.py).
    hook_top_k: TopK | None = Field(
        default=None,
        json_schema_extra=readme_default(f"`{DEFAULT_TOP_K}`"),
        description="`ragdown_context`: most sections per prompt",
    )
    hook_min_score: MinScore | None = Field(
        default=None,
        json_schema_extra=readme_default("the embedder's"),
        description="`ragdown_context`: lowest cosine (MiniLM 0.35, granite-small 0.8, bge-small 0.7, an "
        "unmeasured `openai:` model 0.8)",
    )
    hook_min_ratio: MinRatio | None = Field(
        default=None,
        json_schema_extra=readme_default("the embedder's"),
        description="`ragdown_context`: lowest share of the best hit's cosine (MiniLM 0.70, others "
        f"{DEFAULT_MIN_RATIO}); `0` disables",
    )
    hook_max_chars: MaxChars | None = Field(
        default=None,
        json_schema_extra=readme_default(f"`{DEFAULT_MAX_CHARS}`"),
        description="`ragdown_context`: most characters per prompt (Claude Code caps hook output at 10,000)",
    )
    # `serve` and `stdio`
    docs_dir: Path | None = Field(
        default=None,
        description="`serve`: the directory of folders (`stdio` takes the folder as its argument)",
    )
    notes_dir: str = Field(default="notes", description="where `ragdown_remember` writes, inside a folder")
    token: str | None = Field(
        default=None,
        repr=False,
        description="the agents' bearer token: `/mcp` only (`serve` refuses to start with no token and no "
        "`SECURE_LOCAL_NET=true`; docs/security.md)",
    )
    admin_token: str | None = Field(
        default=None,
        repr=False,
        description="the admin's bearer token: `/api` (folder settings) and the web UI; unset: `/api` is off",
    )
    internal_token: str | None = Field(
        default=None,
        repr=False,
        json_schema_extra=readme_default("`<data dir>/internal.token`"),
        description="what readers send the primary's internal API; required with `RAGDOWN_INTERNAL_PORT` or "
        "an `http://` primary URL",
    )
    internal_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="the primary's internal listener for readers in a cluster; `0`: only the local socket",
    )
    secure_local_net: bool = Field(
        default=False,
        validation_alias=AliasChoices("SECURE_LOCAL_NET", "RAGDOWN_SECURE_LOCAL_NET"),
        description="no token checks at all: everyone is the admin (only on a network you trust)",
    )
    port: int = Field(
        default=3000,
        ge=1,
        le=65535,
        validation_alias=AliasChoices("PORT", "RAGDOWN_PORT"),
        description="the port `serve` listens on",
    )
    host: str = Field(default="127.0.0.1", description="the address `serve` binds")
    read_only: bool = Field(default=False, description="hide and refuse the write tools")
    disabled_tools: str = Field(
        default="", description="comma-separated tools that are neither listed nor callable"
    )
    allowed_hosts: str = Field(
        default="",
        description="extra `Host` values the server answers to (an ingress host; `name:*` for any port); "
        "`*`: any host, and then only pages from that same host may post",
    )
    root_mcp: bool = Field(
        default=False, description="serve every MCP folder at `/mcp` too, for agents that take one endpoint"
    )
    max_concurrent: int = Field(default=4, ge=1, description="tool calls running at once")
    max_queue: int = Field(
        default=32, ge=0, description='tool calls waiting; past that a call answers "overloaded, retry"'
    )
    role: Literal["auto", "primary", "reader"] = Field(
        default="auto", description="`auto` (the lock decides), `primary` or `reader` (a cluster)"
    )
    primary_url: str | None = Field(
        default=None,
        json_schema_extra=readme_default("`unix://<data dir>/primary.sock`"),
        description="where a reader reaches the primary: `http://…` or `unix://…`",
    )
    takeover_s: float = Field(
        default=30.0, gt=0, description="how often a reader tries to take over from a dead primary"
    )
    metrics_port: int = Field(
        default=9090, ge=0, le=65535, description="Prometheus `/metrics`; `0` turns it off"
    )
    index_cache_mb: int = Field(
        default=64,
        ge=1,
        description="LanceDB's cache of index data (full-text and vector) per process; every write makes "
        "new table versions, so an unbounded cache grows with every write",
    )
    metadata_cache_mb: int = Field(
        default=16, ge=1, description="LanceDB's cache of table manifests per process, bounded likewise"
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
        return check_index_uri(value)

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

    def data_dir_source(self) -> str:
        """Where the data dir comes from, for a refusal to name: RAGDOWN_DATA_DIR, or the default under
        XDG_CACHE_HOME or ~/.cache."""
        if self.data_dir is not None:
            return "RAGDOWN_DATA_DIR"
        return "the data dir (under XDG_CACHE_HOME)" if self.cache_home else "the data dir"

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
