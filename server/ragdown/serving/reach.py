"""Where a tool call runs (docs/tools.md#root-mcp): what the shared tools ask of it, so each tool is
written once for a folder endpoint (`tools.Endpoint`: a folder, a sub-folder, or the stdio folder)
and for root `/mcp` over every folder the caller reaches (`root.RootEndpoint`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ragdown.engine import Engine
    from ragdown.folders.scope import Scope
    from ragdown.scoped_changes import Place
    from ragdown.serving.metrics import Metrics

# How a reader runs a write tool on the primary: (tool, folder — None for the root endpoint — the
# sub-folder path inside it, arguments) -> (text, is_error), the answer unchanged. The call names a
# folder and a place inside it, never a filesystem path (serving/internal.py).
Forward = Callable[[str, str | None, str, dict[str, Any]], tuple[str, bool]]


class Reach(Protocol):
    """The documents a call covers and how it names them."""

    @property
    def engine(self) -> Engine: ...

    @property
    def scope(self) -> Scope:
        """What searches run inside and paths are shown relative to (the whole docs dir on root)."""

    @property
    def read_only(self) -> bool: ...

    @property
    def local(self) -> bool:
        """stdio: the client is the local user, so server paths may be shown."""

    @property
    def forward(self) -> Forward | None:
        """On a reader: how the primary runs the write tools; None on the primary."""

    @property
    def forward_to(self) -> tuple[str | None, str]:
        """The folder (None: root) and the sub-folder inside it a forwarded call names."""

    @property
    def counts(self) -> Metrics | None:
        """Where its searches and hook calls are counted per folder; None: not counted."""

    @property
    def counted_as(self) -> str:
        """The folder label of those counts ("" for the docs dir served as one folder)."""

    @property
    def source(self) -> str | None:
        """How the hook's block names where it searched (None: the scope's absolute path)."""

    @property
    def caller(self) -> str:
        """The caller kind whose session memory a hook call over several folders keeps."""

    def within(self, tool: str) -> tuple[str, ...] | None:
        """The folder prefixes a search by `tool` is limited to; None inside one scope."""

    def prefixes(self, tool: str | None = None, path_prefix: str = "") -> tuple[str, ...]:
        """The root-relative directory prefixes (each ending in `/`, or "") the call covers, each
        narrowed by `path_prefix`; with `tool`, only where that tool is on."""

    def split(self, path: str) -> tuple[str | None, Scope]:
        """A root-relative path's folder label (None on one folder's endpoint) and the scope its
        path is shown relative to."""

    def place(self) -> Place:
        """The one scope document tools act in."""
