"""Where each server setting comes from (docs/design.md#where-a-setting-comes-from), derived from the
settings model itself: every field of `ServerSettings`, by the variables it reads, so a setting added
there is reported here with no change.

Sources, most specific first: the saved server settings (`.ragdown-server.json`, which `serve` puts
over the environment for its `SAVED_KEYS` and the `hook` object), the environment (naming the variable
actually set: `PORT` or `RAGDOWN_PORT`), the built-in default. A secret is only ever `set` or `not set`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo

from ragdown.bounds import HOOK_KEYS, valid_overrides
from ragdown.folders.saved import SAVED_KEYS
from ragdown.settings import ServerSettings

DEFAULT = "default"
ENVIRONMENT = "environment"
SAVED = "saved server settings"
FOLDER_FILE = ".ragdown.json"

# The table's groups; a field no group names falls in "server" (a new `hook_*` field in "hook").
GROUPS: dict[str, tuple[str, ...]] = {
    "server": (
        "docs_dir", "notes_dir", "host", "port", "token", "admin_token", "secure_local_net",
        "allowed_hosts", "read_only", "disabled_tools", "root_mcp", "max_concurrent", "max_queue",
        "metrics_port", "query_log", "query_log_prompts", "query_log_file",
    ),
    "search": ("embedder", "text_limit", "max_per_document", "follow_links", "abstain", "one_per_section"),
    "hook": tuple(f"hook_{key}" for key in HOOK_KEYS),
    "index/storage": (
        "data_dir", "index_uri", "index_refresh_seconds", "watch", "index_cache_mb", "metadata_cache_mb",
        "cache_home", "models", "models_bundled", "hub_url", "embedding_url", "embedding_api_key",
        "threads", "minilm_quantize",
    ),
    "roles": ("role", "primary_url", "takeover_s", "internal_port", "internal_token"),
}  # fmt: skip
# Read from the environment by LanceDB and the object store, not by the settings model.
EXTRA_VARIABLES: tuple[tuple[str, bool, str], ...] = (  # (variable, secret, shown default)
    ("LANCE_CPU_THREADS", False, "the CPU count, at least 2"),
    ("AWS_ACCESS_KEY_ID", True, ""),
    ("AWS_SECRET_ACCESS_KEY", True, ""),
    ("AWS_SESSION_TOKEN", True, ""),
    ("AWS_ENDPOINT_URL", False, ""),
    ("AWS_REGION", False, ""),
)


@dataclass(frozen=True)
class Setting:
    name: str
    value: Any  # JSON as shown: a secret is "set" or "not set", a path a string
    source: str
    variable: str | None = None  # the environment variable that set it
    group: str = "server"
    default_text: str = ""  # what a null value means ("the embedder's")

    def json(self) -> dict[str, Any]:
        out = {"name": self.name, "value": self.value, "source": self.source}
        return out | ({"variable": self.variable} if self.variable else {})


def group_of(name: str) -> str:
    found = next((group for group, names in GROUPS.items() if name in names), None)
    return found or ("hook" if name.startswith("hook_") else "server")


def variables(name: str, field: FieldInfo) -> list[str]:
    """The environment variables a field reads, in pydantic's order of preference."""
    if isinstance(field.validation_alias, AliasChoices):
        return [str(choice).upper() for choice in field.validation_alias.choices]
    return [(str(ServerSettings.model_config.get("env_prefix", "")) + name).upper()]


def variable_set(name: str, field: FieldInfo, environ: Mapping[str, str]) -> str | None:
    """The variable that gave the field its value (names are case-insensitive, as pydantic reads them)."""
    given = {key.upper() for key in environ}
    return next((v for v in variables(name, field) if v in given), None)


def is_secret(field: FieldInfo) -> bool:
    """A token or key: typed SecretStr, or kept out of the model's repr."""
    return field.repr is False or "SecretStr" in str(field.annotation)


def shown(value: object, secret: bool) -> Any:
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if secret:
        return "set" if value not in (None, "") else "not set"
    if isinstance(value, Path):
        return str(value)
    return value


def shown_default(field: FieldInfo) -> str:
    extra = field.json_schema_extra
    text = extra.get("shown_default") if isinstance(extra, dict) else None
    return str(text).replace("`", "") if isinstance(text, str) else ""


def server_settings(
    settings: ServerSettings,
    environ: Mapping[str, str],
    saved: Mapping[str, Any],
    derived: Mapping[str, Any],
) -> list[Setting]:
    """Every field of the model, in effect as `serve` would run with it: `saved` over the environment,
    and `derived` the defaults computed from elsewhere (the data dir of the docs dir, the CPU count…)."""
    saved_hook = valid_overrides(saved.get("hook"))
    found = []
    for name, field in ServerSettings.model_fields.items():
        secret = is_secret(field)
        value: object = getattr(settings, name)
        variable = variable_set(name, field, environ) if name in settings.model_fields_set else None
        source = ENVIRONMENT if variable else DEFAULT
        hook_key = name.removeprefix("hook_") if name.startswith("hook_") else None
        if name in SAVED_KEYS and name in saved:
            value, source, variable = saved[name], SAVED, None
        elif hook_key is not None and hook_key in saved_hook:
            value, source, variable = saved_hook[hook_key], SAVED, None
        elif source == DEFAULT and value is None and name in derived:
            value = derived[name]
        found.append(
            Setting(name, shown(value, secret), source, variable, group_of(name), shown_default(field))
        )
    return found


def extra_settings(environ: Mapping[str, str]) -> list[Setting]:
    """The variables other libraries read (LanceDB's threads, the object store's credentials)."""
    upper = {key.upper(): value for key, value in environ.items()}
    found = []
    for variable, secret, default in EXTRA_VARIABLES:
        value = upper.get(variable)
        source, named = (ENVIRONMENT, variable) if value is not None else (DEFAULT, None)
        found.append(Setting(variable.lower(), shown(value, secret), source, named, "index/storage", default))
    return found
