"""A RagdownFolder's spec, checked, and what it asks of the indexer (docs/tools.md#folder-routes's folder
body).

The API server already enforces the CRD's schema; this check repeats the rules that matter, so an
object that slipped past (an older CRD, a server without CEL) gets a clear message instead of a
half-applied folder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragdown.folders.manage import FOLDER_NAME_RE, FOLDER_TOOLS, folder_name_error
from ragdown.hook.settings import HookOverrides

# One definition each, shared with the server's /api/folders rules.
TOOLS = FOLDER_TOOLS


class InvalidSpecError(ValueError):
    """The spec cannot be applied; the message says which field and what to change."""


class FolderSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    folder: str = Field(pattern=FOLDER_NAME_RE.pattern)
    title: str = Field(default="", max_length=200)
    mcp: bool = False
    readOnly: bool = False  # noqa: N815
    disabledTools: list[Literal[TOOLS]] = Field(default_factory=list)  # type: ignore[valid-type]  # noqa: N815
    hook: HookOverrides = Field(default_factory=HookOverrides)  # camelCase here: topK, minScore…
    deletionPolicy: Literal["Retain", "Delete"] = "Retain"  # noqa: N815

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
            raise InvalidSpecError(f"{where}: {first['msg']} (got {first.get('input')!r})") from None
        refusal = folder_name_error(parsed.folder)
        if refusal:
            raise InvalidSpecError(f"spec.folder: {refusal}")
        return parsed

    def settings(self, manager: str) -> dict[str, Any]:
        """The `/api/folders` body: every setting stated, so a change made behind our back is undone."""
        return {
            "title": self.title,
            "mcp": self.mcp,
            "read_only": self.readOnly,
            "disabled_tools": sorted(set(self.disabledTools)),
            # null removes a key: a field dropped from the spec goes back to the server's default
            "hook": self.hook.model_dump(),
            "managed_by": manager,
        }


def ingress_name(resource: str) -> str:
    """The folder's Ingress, named after its resource (already a DNS name, unique in the namespace)."""
    return resource[:249].rstrip(".-") + "-mcp"
