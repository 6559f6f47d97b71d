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
    hook_top_k: int | None = Field(
        default=None, ge=0, description="ragdown_context: most sections per prompt"
    )
    hook_min_score: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="ragdown_context: lowest cosine; default the embedder's",
    )
    hook_min_ratio: float | None = Field(
        default=None, ge=0, le=1, description="ragdown_context: lowest share of the best hit's cosine"
    )
    hook_max_chars: int | None = Field(default=None, ge=0, description="ragdown_context: most characters")

    def hook_layer(self) -> dict[str, float]:
        """The hook values the environment sets, as a settings layer."""
        values = {
            "top_k": self.hook_top_k,
            "min_score": self.hook_min_score,
            "min_ratio": self.hook_min_ratio,
            "max_chars": self.hook_max_chars,
        }
        return {key: value for key, value in values.items() if value is not None}
