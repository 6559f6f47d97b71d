"""Searches as the front ends ask them (docs/design.md#engine): the pipeline over the index searches
use now, recall inside a scope, the hook, and the query log of both."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragdown.folders.scope import Scope
from ragdown.hook.context import ContextFormat, ContextResult, build_context
from ragdown.hook.session_memory import ROOT_KEY_PREFIX, LruSessionMemory, SessionMemory, session_key
from ragdown.hook.settings import HookSettings
from ragdown.hook.settings import layers as hook_layers
from ragdown.hook.settings import resolve as resolve_hook
from ragdown.indexing.searched import SearchedIndex
from ragdown.search.filters import SearchFilters, filter_fields
from ragdown.search.hybrid import Hit
from ragdown.search.pipeline import SearchOutcome, run_search
from ragdown.search.policy import SearchPolicy
from ragdown.search.query_log import LOG_NAME, QueryLog
from ragdown.settings import ServerSettings

log = logging.getLogger(__name__)


class Searcher:
    """Searches of `index` under `policy`; `ready` is called before a recall or a hook call (the wait
    for a first sync, a reader following a rebuild). `memory` is the hook's session memory."""

    def __init__(
        self,
        index: SearchedIndex,
        docs_dir: Path,
        data_dir: Path,
        settings: ServerSettings,
        *,
        ready: Callable[[], None],
        folders_mode: bool,
        policy: SearchPolicy | None,
        memory: SessionMemory | None,
        server_config: Path | None,
    ) -> None:
        self.index = index
        self.docs_dir = docs_dir
        self.ready = ready
        self.folders_mode = folders_mode
        self.server_config = server_config
        self.settings = settings
        self.policy = policy or SearchPolicy(
            max_per_document=settings.max_per_document,
            follow_links=settings.follow_links,
            abstain=settings.abstain,
            one_per_section=settings.one_per_section,
        )
        self.memory: SessionMemory = memory or LruSessionMemory()
        self.query_log_path = settings.query_log_file or data_dir / LOG_NAME
        self.query_log = (
            QueryLog(self.query_log_path, include_prompts=settings.query_log_prompts)
            if settings.query_log
            else None
        )

    def apply_settings(self, settings: ServerSettings) -> None:
        """Search rules, hit size and the query log from `settings`, from the next call on."""
        self.settings = settings
        self.policy = replace(
            self.policy, max_per_document=settings.max_per_document, follow_links=settings.follow_links
        )
        if not settings.query_log:
            self.query_log = None
        elif self.query_log is None:
            self.query_log = QueryLog(self.query_log_path, include_prompts=settings.query_log_prompts)

    def search_outcome(
        self,
        query: str,
        limit: int = 10,
        filters: SearchFilters | None = None,
        policy: SearchPolicy | None = None,
    ) -> SearchOutcome:
        """The hits with what the pipeline decided (routed, abstained), under this policy unless
        `policy` overrides it."""
        store, embedder = self.index.searched()
        return run_search(
            store, embedder, query, limit, filters, policy or self.policy, folders_mode=self.folders_mode
        )

    def search(self, query: str, limit: int = 10, filters: SearchFilters | None = None) -> list[Hit]:
        return self.search_outcome(query, limit, filters).hits

    def recall(
        self, query: str, limit: int, filters: SearchFilters | None, *, scope: Scope, kind: str
    ) -> list[Hit]:
        """A search as an agent or person asks it, inside `scope`: `filters.path_prefix` is read
        relative to the scope and hit paths come back relative to it. Logged when enabled."""
        self.ready()
        started = time.perf_counter()
        asked = filters or SearchFilters()
        effective = replace(asked, path_prefix=scope.search_prefix(asked.path_prefix))
        hits = [replace(h, path=scope.relative(h.path)) for h in self.search(query, limit, effective)]
        if self.query_log is not None:
            elapsed = (time.perf_counter() - started) * 1000
            self.query_log.search(kind, scope.dir, query, filter_fields(filters), elapsed, hits)
        return hits

    def hook_settings(
        self, call: Mapping[str, Any] | None = None, scope: Scope | None = None
    ) -> HookSettings:
        """Argument > the folder's `.ragdown.json` > saved server settings > environment > the
        embedder's own values; the files are re-read on every call. The folder is the scope's
        top-level directory (the docs dir itself when it is served as one folder)."""
        top = scope.dir.split("/")[0] if scope and scope.dir else ""
        below = hook_layers(self.docs_dir, top, self.server_config, self.settings.hook_layer())
        embedder = self.index.embedder
        return resolve_hook(call or {}, below, embedder.min_score, embedder.min_ratio)

    def context(
        self,
        prompt: str,
        *,
        session_id: str | None,
        reset: bool,
        output: ContextFormat,
        overrides: Mapping[str, Any] | None,
        scope: Scope,
        within: tuple[str, ...] | None,
        source: str | None,
        caller: str,
    ) -> ContextResult:
        """`ragdown_context` for `scope` (Engine.context says how each argument is used)."""
        self.ready()
        started = time.perf_counter()
        filters = SearchFilters(path_prefix=scope.search_prefix(), within=within)
        result = build_context(
            prompt,
            recall=lambda query, limit: [
                replace(h, path=scope.relative(h.path)) for h in self.search(query, limit, filters)
            ],
            settings=self.hook_settings(overrides, scope),
            memory=self.memory,
            # A search limited to listed folders (root /mcp) keeps a memory of its own.
            key=session_key(ROOT_KEY_PREFIX + caller if within is not None else scope.dir, session_id)
            if session_id
            else None,
            source=source or str(self.docs_dir / scope.dir if scope.dir else self.docs_dir),
            text_limit=self.settings.text_limit,
            max_per_document=self.policy.max_per_document,
            reset=reset,
            output=output,
        )
        if self.query_log is not None and result.searched:
            elapsed = (time.perf_counter() - started) * 1000
            self.query_log.context(
                scope.dir, prompt.strip(), elapsed, result.candidates, result.dropped, result.injected
            )
        return result

    def warm(self) -> None:
        """Load what the first search would (the model's session, the BM25 index, the in-memory
        vectors) by running one search that nobody logs, so a client's first call is answered at the
        speed of the others (docs/design.md#start-up), and start building the rows' BM25 postings
        (docs/search.md#bm25-from-memory). A failure here is the first call's."""
        try:
            self.search_outcome("ragdown warm-up", 1)
            self.index.searched()[0].start_lexicon()
        except Exception as error:  # the first real call reports it with the caller's context
            log.debug("warm-up search failed: %s", error)
