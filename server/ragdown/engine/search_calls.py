"""The search calls every front end makes (docs/design.md#engine), the same on an `Engine` and on a
`SnapshotEngine` that answers from the search snapshot while the index opens: each is handed to the
`searcher`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragdown.engine.searcher import Searcher
from ragdown.folders.scope import Scope
from ragdown.hook.context import ContextFormat, ContextResult
from ragdown.hook.settings import HookSettings
from ragdown.search.filters import SearchFilters
from ragdown.search.hybrid import Hit
from ragdown.search.pipeline import SearchOutcome
from ragdown.search.policy import SearchPolicy
from ragdown.search.query_log import QueryLog


class SearchCalls:
    """Search, recall, the hook, the query log and the warm-up, by way of `searcher`."""

    searcher: Searcher

    @property
    def query_log(self) -> QueryLog | None:
        return self.searcher.query_log

    @property
    def query_log_path(self) -> Path:
        return self.searcher.query_log_path

    def warm(self) -> None:
        """Load what the first search would, before a client's first call (Searcher.warm)."""
        self.searcher.warm()

    def search(
        self,
        query: str,
        limit: int = 10,
        filters: SearchFilters | None = None,
        policy: SearchPolicy | None = None,
    ) -> list[Hit]:
        return self.search_outcome(query, limit, filters, policy).hits

    def search_outcome(
        self,
        query: str,
        limit: int = 10,
        filters: SearchFilters | None = None,
        policy: SearchPolicy | None = None,
    ) -> SearchOutcome:
        return self.searcher.search_outcome(query, limit, filters, policy)

    def recall(
        self,
        query: str,
        limit: int = 10,
        filters: SearchFilters | None = None,
        *,
        scope: Scope | None = None,
        kind: str = "recall",
    ) -> list[Hit]:
        """A search inside `scope` (Searcher.recall), logged when enabled."""
        return self.searcher.recall(query, limit, filters, scope=scope or Scope(), kind=kind)

    def hook_settings(
        self, call: Mapping[str, Any] | None = None, scope: Scope | None = None
    ) -> HookSettings:
        return self.searcher.hook_settings(call, scope)

    def context(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        reset: bool = False,
        output: ContextFormat = "text",
        overrides: Mapping[str, Any] | None = None,
        scope: Scope | None = None,
        within: tuple[str, ...] | None = None,
        source: str | None = None,
        caller: str = "",
    ) -> ContextResult:
        """`ragdown_context` for `scope`: the related sections not yet given to the session, with
        paths relative to the scope and a memory of the scope's own. `source` names the scope in the
        block; by default its absolute path (a local client's own folder). A search over listed
        folders (root /mcp) keeps a memory per `caller` kind, so two teams never share one."""
        return self.searcher.context(
            prompt,
            session_id=session_id,
            reset=reset,
            output=output,
            overrides=overrides,
            scope=scope or Scope(),
            within=within,
            source=source,
            caller=caller,
        )
