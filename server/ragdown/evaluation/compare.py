"""`--compare SETTINGS.json`: the same golden set under a second set of search settings
(docs/evaluation.md#comparing-settings), and what changed per metric and per question.

The settings are those that change what a search returns: the ranking rules of `SearchPolicy`
(docs/search.md), the number of hits, and under `--hook` the hook's gates (docs/hook.md#gates).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragdown.bounds import HookOverrides
from ragdown.errors import CliError
from ragdown.evaluation.options import MAX_TOP_K

if TYPE_CHECKING:
    from ragdown.engine import Engine
    from ragdown.evaluation.run import QuestionResult, RunResult

# The keys of `SearchPolicy` a settings file may set (the rest of the file's keys are not policy).
POLICY_KEYS = (
    "max_per_document",
    "follow_links",
    "abstain",
    "one_per_section",
    "score_evidence",
    "route_identifiers",
    "alias_boost",
    "heading_boost",
    "routed_gap",
)


class CompareSettings(BaseModel):
    """What a settings file may set; every key is optional and the rest stay as the first run had them."""

    model_config = ConfigDict(extra="forbid", strict=True)

    top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K)] | None = None
    max_per_document: Annotated[int, Field(ge=0)] | None = None
    follow_links: Annotated[int, Field(ge=0)] | None = None
    abstain: bool | None = None
    one_per_section: bool | None = None
    score_evidence: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    route_identifiers: bool | None = None
    alias_boost: bool | None = None
    heading_boost: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    routed_gap: bool | None = None
    text_limit: Annotated[int, Field(ge=0)] | None = None
    hook: HookOverrides | None = None

    def given(self) -> dict[str, Any]:
        """The keys the file sets, as it set them."""
        return self.model_dump(exclude_none=True, by_alias=False)

    def described(self) -> str:
        """`max_per_document 1, hook.min_ratio 0.9`: what a table says was compared."""
        given = self.given()
        flat = {k: v for k, v in given.items() if k != "hook"}
        flat.update({f"hook.{k}": v for k, v in given.get("hook", {}).items()})
        return ", ".join(f"{k} {json.dumps(v)}" for k, v in flat.items())


def _refusal(source: str, error: ValidationError) -> CliError:
    first = error.errors()[0]
    loc = [str(p) for p in first["loc"]]
    key = ".".join(loc)
    if first["type"] == "extra_forbidden":
        keys = (
            ", ".join(CompareSettings.model_fields)
            if len(loc) == 1
            else "top_k, min_score, min_ratio, max_chars"
        )
        return CliError(f'SETTINGS {source}: unknown key "{key}"; the keys are {keys}')
    got = json.dumps(first.get("input"))[:80]
    said = first["msg"].replace("Input should be", "must be")
    return CliError(f'SETTINGS {source}: "{key}" {said}; got {got}')


def read_settings(path: Path, hook_mode: bool) -> CompareSettings:
    """The settings file, checked whole before the engine loads; each problem is one line (exit 2)."""
    source = str(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CliError(f"SETTINGS {source}: cannot read it ({e.strerror}); check the path") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CliError(f"SETTINGS {source}: not a JSON object ({e}); write one object of settings") from e
    if not isinstance(raw, dict):
        raise CliError(f"SETTINGS {source}: not a JSON object; write one object of settings")
    try:
        settings = CompareSettings.model_validate(raw)
    except ValidationError as e:
        raise _refusal(source, e) from e
    if not settings.given():
        raise CliError(f"SETTINGS {source}: sets nothing; name at least one setting to compare")
    if settings.hook is not None and not hook_mode:
        raise CliError(
            f'SETTINGS {source}: "hook" applies to the hook only; pass --hook to evaluate through it'
        )
    if settings.top_k is not None and hook_mode:
        raise CliError(
            f'SETTINGS {source}: "top_k" is the search\'s; under --hook set "hook": {{"top_k": …}}'
        )
    return settings


@contextmanager
def applied(engine: Engine, settings: CompareSettings) -> Iterator[None]:
    """The engine's searches under `settings` inside the block, as they were after it. The searcher
    holds the policy and the settings every search reads (engine/searcher.py)."""
    searcher = engine.searcher
    policy, server_settings = searcher.policy, searcher.settings
    given = settings.given()
    searcher.policy = replace(policy, **{k: v for k, v in given.items() if k in POLICY_KEYS})
    if settings.text_limit is not None:
        searcher.settings = server_settings.model_copy(update={"text_limit": settings.text_limit})
    try:
        yield
    finally:
        searcher.policy, searcher.settings = policy, server_settings


@dataclass(frozen=True)
class Change:
    """A question whose outcome differs between the two runs."""

    id: str
    base: str
    compared: str
    better: bool | None  # None: neither better nor worse (an answered question at another miss)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "base": self.base, "compared": self.compared, "better": self.better}


def _goodness(result: QuestionResult) -> float:
    """Higher is better: 1/rank for an answerable question, 1 refused / 0 answered otherwise."""
    if result.line.unanswerable:
        return 1.0 if result.refused else 0.0
    return 1 / result.rank if result.rank is not None else 0.0


def changes(base: RunResult, compared: RunResult) -> list[Change]:
    """The questions whose outcome changed, in file order."""
    found: list[Change] = []
    for a, b in zip(base.results, compared.results, strict=True):
        if a.outcome == b.outcome:
            continue
        before, after = _goodness(a), _goodness(b)
        found.append(Change(a.line.id, a.outcome, b.outcome, None if before == after else after > before))
    return found
