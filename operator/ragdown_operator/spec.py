"""A RagdownFolder's spec, checked, and what it asks of the indexer (docs/tools.md#folder-routes's folder
body).

The API server already enforces the CRD's schema; this check repeats the rules that matter, so an
object that slipped past (an older CRD, a server without CEL) gets a clear message instead of a
half-applied folder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragdown.bounds import HookOverrides
from ragdown.folders.manage import FOLDER_NAME_RE, FOLDER_TOOLS, TOKEN_NAME_RE, folder_name_error
from ragdown_operator.errors import InvalidSpecError

# One definition each, shared with the server's /api/folders rules.
TOOLS = FOLDER_TOOLS
MAX_TOKENS = 20  # the CRD's maxItems; the indexer takes up to 100
# How Kubernetes spells a Secret's name (a DNS subdomain) and a key of its data.
SECRET_NAME_RE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
SECRET_KEY_RE = r"^[-._a-zA-Z0-9]+$"


class SecretKeyRef(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str = Field(pattern=SECRET_NAME_RE, max_length=253)
    key: str = Field(pattern=SECRET_KEY_RE, max_length=253)


class TokenRef(BaseModel):
    """One of the folder's own agent tokens: its label, and the Secret key (same namespace) holding it."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str = Field(pattern=TOKEN_NAME_RE.pattern)
    secretKeyRef: SecretKeyRef  # noqa: N815


class FolderSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    folder: str = Field(pattern=FOLDER_NAME_RE.pattern)
    title: str = Field(default="", max_length=200)
    mcp: bool = False
    readOnly: bool = False  # noqa: N815
    disabledTools: list[Literal[TOOLS]] = Field(default_factory=list)  # type: ignore[valid-type]  # noqa: N815
    hook: HookOverrides = Field(default_factory=HookOverrides)  # camelCase here: topK, minScore…
    deletionPolicy: Literal["Retain", "Delete"] = "Retain"  # noqa: N815
    # None (left out): the folder's tokens are not the operator's to change; [] removes them.
    tokens: list[TokenRef] | None = Field(default=None, max_length=MAX_TOKENS)

    @field_validator("tokens")
    @classmethod
    def _unique_names(cls, tokens: list[TokenRef] | None) -> list[TokenRef] | None:
        names = [t.name for t in tokens or []]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"token names must be unique, {', '.join(twice)} is listed twice")
        return tokens

    @classmethod
    def of(cls, spec: Mapping[str, Any], name: str) -> FolderSpec:
        """The spec with its defaults (`folder` is the resource's name), or InvalidSpecError."""
        data = {"folder": name, **dict(spec)}
        if isinstance(data.get("title"), str):  # the indexer stores it stripped: compare like with like
            data["title"] = data["title"].strip()
        try:
            parsed = cls.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            where = "spec." + ".".join(str(p) for p in first["loc"])
            # Under tokens the input may be a token pasted into the spec: not repeated in status or log.
            shown = "" if first["loc"][:1] == ("tokens",) else f" (got {first.get('input')!r})"
            raise InvalidSpecError(f"{where}: {first['msg']}{shown}") from None
        refusal = folder_name_error(parsed.folder)
        if refusal:
            raise InvalidSpecError(f"spec.folder: {refusal}")
        return parsed

    def settings(self, manager: str, tokens: list[dict[str, str]] | None = None) -> dict[str, Any]:
        """The `/api/folders` body: every setting stated, so a change made behind our back is undone.
        `tokens` are the `{name, sha256}` entries read from the spec's Secrets (tokens.py); without
        `spec.tokens` the body has none, and the folder keeps its own."""
        body = {
            "title": self.title,
            "mcp": self.mcp,
            "read_only": self.readOnly,
            "disabled_tools": sorted(set(self.disabledTools)),
            # null removes a key: a field dropped from the spec goes back to the server's default
            "hook": self.hook.model_dump(),
            "managed_by": manager,
        }
        if self.tokens is not None:
            if tokens is None or len(tokens) != len(self.tokens):  # never an empty list by mistake
                raise ValueError("spec.tokens lists tokens that were not read: nothing may be sent")
            body["tokens"] = tokens
        return body


def ingress_name(resource: str) -> str:
    """The folder's Ingress, named after its resource (already a DNS name, unique in the namespace)."""
    return resource[:249].rstrip(".-") + "-mcp"
