"""`ragdown_context` through the engine: real LanceDB, the hash embedder, real files (docs/hook.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.errors import ScopeError
from ragdown.folders.scope import Scope
from ragdown.hook.context import CONTEXT_INTRO
from ragdown.search.filters import SearchFilters
from ragdown.search.query_log import prompt_hash
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc

DOCS = {
    "ops/cache.md": "---\ntags: [ops/cache]\n---\n# Cache\n## Redis eviction\n"
    "When redis runs out of memory it evicts keys by maxmemory-policy; use allkeys-lru for redis caches.",
    "ops/backups.md": "---\naliases: [Restores]\n---\n# Backups\n## Restore\n"
    "Run `pg_restore --clean` into a fresh database and compare row counts.",
    "ops/queues.md": "# Queues\n## Redis streams\nRedis streams hold the job queue; trim them nightly.",
    "agent/notes.md": "---\ncreated_by: claude-code\n---\n# Agent notes\n"
    "Redis memory notes written by an agent.",
}
# Gates open (the hash embedder scores unrelated-looking text low), so each test sets the one it checks.
LOOSE = ServerSettings(hook_min_score=0.0, hook_min_ratio=0, watch=False)


@pytest.fixture
def engine(make_engine: Callable[..., Engine], write: WriteDoc) -> Engine:
    for path, text in DOCS.items():
        write(path, text)
    built = make_engine(settings=LOOSE)
    built.sync()
    return built


PROMPT = "how does redis eviction work when memory runs out"


def block_paths(text: str) -> list[str]:
    return [
        line.split(":")[0]
        for line in text.splitlines()
        if " — " in line and line.split(":")[0].endswith(".md")
    ]


def test_the_block_starts_with_the_source_and_holds_headers_and_text(engine: Engine) -> None:
    text = engine.context(PROMPT).text
    assert text.startswith(f'<ragdown-context source="{engine.docs_dir}">\n{CONTEXT_INTRO}\n\n')
    assert text.endswith("\n</ragdown-context>")
    assert "ops/cache.md:" in text
    assert "— Cache › Redis eviction [#ops/cache] (similarity " in text
    assert "maxmemory-policy" in text


def test_a_session_never_gets_a_section_twice_and_a_new_session_starts_fresh(engine: Engine) -> None:
    first = engine.context(PROMPT, session_id="s1", overrides={"top_k": 1})
    second = engine.context(PROMPT, session_id="s1", overrides={"top_k": 1})
    assert first.injected
    assert second.injected
    assert first.injected[0].id != second.injected[0].id
    assert second.dropped[first.injected[0].id] == "seen"
    other = engine.context(PROMPT, session_id="s2", overrides={"top_k": 1})
    assert other.injected[0].id == first.injected[0].id


def test_without_a_session_nothing_is_remembered(engine: Engine) -> None:
    assert engine.context(PROMPT).injected[0].id == engine.context(PROMPT).injected[0].id


def test_reset_forgets_the_session_before_searching(engine: Engine) -> None:
    first = engine.context(PROMPT, session_id="s", overrides={"top_k": 1})
    again = engine.context(PROMPT, session_id="s", reset=True, overrides={"top_k": 1})
    assert again.injected[0].id == first.injected[0].id


@pytest.mark.parametrize("prompt", ["yes", "  go on now ", "/compact keep the redis notes", ""])
def test_short_prompts_and_slash_commands_return_nothing_and_leave_the_session_alone(
    engine: Engine, prompt: str
) -> None:
    engine.context(PROMPT, session_id="s", overrides={"top_k": 1})
    result = engine.context(prompt, session_id="s", reset=False)
    assert (result.text, result.searched) == ("", False)
    assert len(engine.memory.seen("\0s")) == 1


def test_min_score_one_returns_empty_text(engine: Engine) -> None:
    result = engine.context(PROMPT, overrides={"min_score": 1})
    assert result.text == ""
    assert result.searched
    assert set(result.dropped.values()) == {"min_score"}


def test_top_k_one_gives_one_block(engine: Engine) -> None:
    assert len(block_paths(engine.context(PROMPT, overrides={"top_k": 1}).text)) == 1
    assert len(block_paths(engine.context(PROMPT, overrides={"top_k": 3}).text)) == 3


def test_claude_code_format_wraps_the_block(engine: Engine) -> None:
    text = engine.context(PROMPT, output="claude-code").text
    assert text.startswith('{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"')
    payload = json.loads(text)
    assert payload["hookSpecificOutput"]["additionalContext"].startswith("<ragdown-context ")
    assert engine.context("yes", output="claude-code").text == ""


def test_the_budget_always_keeps_the_first_block_and_stops_at_the_first_that_does_not_fit(
    engine: Engine,
) -> None:
    full = engine.context(PROMPT, overrides={"top_k": 3})
    assert len(full.injected) == 3
    tight = engine.context(PROMPT, overrides={"top_k": 3, "max_chars": 10})
    assert len(tight.injected) == 1
    assert [tight.dropped[h.id] for h in full.injected[1:]] == ["max_chars", "max_chars"]
    assert "[clipped: 10 of " in tight.text


def test_text_limit_zero_never_clips(make_engine: Callable[..., Engine], write: WriteDoc) -> None:
    for path, text in DOCS.items():
        write(path, text)
    engine = make_engine(settings=ServerSettings(hook_min_score=0.0, hook_min_ratio=0, text_limit=0))
    engine.sync()
    text = engine.context(PROMPT, overrides={"top_k": 1, "max_chars": 10}).text
    assert "[clipped" not in text
    assert "allkeys-lru for redis caches." in text


def test_an_agent_written_section_says_so(engine: Engine) -> None:
    text = engine.context("redis memory notes written by an agent", overrides={"top_k": 4}).text
    assert "written by an agent with claude-code)" in text


def test_the_quoted_command_bypass_reaches_a_weak_section(engine: Engine) -> None:
    prompt = "what does `pg_restore --clean` do to existing tables?"
    gated = engine.context(prompt, overrides={"min_score": 0.99})
    assert [h.path for h in gated.injected] == ["ops/backups.md"]
    assert (
        engine.context("what does pg_restore do to existing tables?", overrides={"min_score": 0.99}).text
        == ""
    )


def test_the_alias_bypass_reaches_a_weak_section(engine: Engine) -> None:
    result = engine.context("walk me through restores for staging", overrides={"min_score": 0.99})
    assert [h.path for h in result.injected] == ["ops/backups.md"]


def test_folder_settings_are_re_read_on_every_call_and_invalid_ones_skipped(
    engine: Engine, docs: Path
) -> None:
    assert len(engine.context(PROMPT).injected) == 4
    (docs / ".ragdown.json").write_text(json.dumps({"title": "Ops", "hook": {"top_k": 1}}), encoding="utf-8")
    assert len(engine.context(PROMPT).injected) == 1
    assert len(engine.context(PROMPT, overrides={"top_k": 2}).injected) == 2
    (docs / ".ragdown.json").write_text(
        json.dumps({"hook": {"top_k": "one", "max_chars": -5}}), encoding="utf-8"
    )
    assert engine.hook_settings().top_k == 4
    (docs / ".ragdown.json").write_text("{not json", encoding="utf-8")
    assert engine.hook_settings().max_chars == 6000


def test_saved_server_settings_sit_between_the_folder_and_the_environment(
    make_engine: Callable[..., Engine], docs: Path, tmp_path: Path
) -> None:
    saved = tmp_path / ".ragdown-server.json"
    saved.write_text(json.dumps({"hook": {"top_k": 2, "min_ratio": 0.5}}), encoding="utf-8")
    env = ServerSettings(hook_top_k=7, hook_min_ratio=0.1, hook_max_chars=900)
    engine = make_engine(settings=env, server_config=saved)
    (docs / ".ragdown.json").write_text(json.dumps({"hook": {"min_ratio": 0.8}}), encoding="utf-8")
    settings = engine.hook_settings()
    assert (settings.top_k, settings.min_ratio, settings.max_chars) == (2, 0.8, 900)
    assert settings.min_score == engine.embedder.min_score
    saved.unlink()
    assert engine.hook_settings().top_k == 7


def test_the_query_log_records_gates_but_never_text(
    make_engine: Callable[..., Engine], write: WriteDoc
) -> None:
    for path, text in DOCS.items():
        write(path, text)
    engine = make_engine(settings=ServerSettings(hook_min_score=0.0, hook_min_ratio=0, query_log=True))
    engine.sync()
    engine.context(PROMPT, session_id="s", overrides={"top_k": 1})
    engine.recall("redis streams", 3)
    engine.context("ok", session_id="s")  # not searched: not logged
    assert engine.query_log is not None
    lines = [json.loads(line) for line in engine.query_log.path.read_text(encoding="utf-8").splitlines()]
    assert [e["kind"] for e in lines] == ["context", "recall"]
    context, recall = lines
    # A hook prompt is a person's own words: a hash unless RAGDOWN_QUERY_LOG_PROMPTS (below).
    assert context["query"] == prompt_hash(PROMPT)
    assert PROMPT not in engine.query_log.path.read_text(encoding="utf-8")
    assert len(context["injected"]) == 1
    assert {d["reason"] for d in context["dropped"]} == {"top_k"}
    assert set(context["hits"][0]) == {"path", "start", "end", "similarity", "score"}
    assert recall["filters"] == {}
    assert len(recall["hits"]) == 3
    raw = engine.query_log.path.read_text(encoding="utf-8")
    assert "maxmemory-policy" not in raw
    assert "allkeys" not in raw


def test_a_subfolder_scope_searches_only_inside_and_shows_paths_relative_to_it(engine: Engine) -> None:
    scope = Scope("ops")
    hits = engine.recall("redis memory", 10, scope=scope)
    assert hits
    assert all("/" not in h.path for h in hits)  # "cache.md", not "ops/cache.md"
    assert {h.path for h in hits} <= {"cache.md", "backups.md", "queues.md"}
    result = engine.context(PROMPT, scope=scope)
    assert result.text.startswith(f'<ragdown-context source="{engine.docs_dir / "ops"}">')
    assert "\ncache.md:" in result.text
    assert not any(line.startswith("ops/") for line in result.text.splitlines())


def test_each_scope_has_its_own_session_memory(engine: Engine) -> None:
    root = engine.context(PROMPT, session_id="s", overrides={"top_k": 1})
    scoped = engine.context(PROMPT, session_id="s", overrides={"top_k": 1}, scope=Scope("ops"))
    assert root.injected[0].id == scoped.injected[0].id  # the same section, a separate memory
    again = engine.context(PROMPT, session_id="s", overrides={"top_k": 1}, scope=Scope("ops"))
    assert again.injected[0].id != scoped.injected[0].id


def test_a_scoped_path_prefix_is_a_directory_and_cannot_climb_out(engine: Engine) -> None:
    assert engine.recall("redis", 10, SearchFilters(path_prefix="./ops/"))
    assert engine.recall("redis", 10, SearchFilters(path_prefix="op")) == []  # a directory, not a string
    with pytest.raises(ScopeError, match=r"outside the docs folder: \.\./agent"):
        engine.recall("redis", 10, SearchFilters(path_prefix="../agent"), scope=Scope("ops"))


def test_within_limits_a_search_to_listed_folders(engine: Engine) -> None:
    assert {h.path.split("/")[0] for h in engine.recall("redis", 10, SearchFilters(within=("agent/",)))} == {
        "agent"
    }
    assert engine.recall("redis", 10, SearchFilters(within=())) == []


def test_the_query_log_file_can_be_put_elsewhere(
    make_engine: Callable[..., Engine], write: WriteDoc, tmp_path: Path
) -> None:
    for path, text in DOCS.items():
        write(path, text)
    target = tmp_path / "pod-logs" / "query-log.jsonl"
    engine = make_engine(settings=ServerSettings(query_log=True, query_log_file=target))
    engine.sync()
    engine.recall("redis streams", 2)
    assert json.loads(target.read_text(encoding="utf-8").splitlines()[0])["kind"] == "recall"


def test_the_query_log_keeps_prompts_only_when_told(
    make_engine: Callable[..., Engine], write: WriteDoc
) -> None:
    for path, text in DOCS.items():
        write(path, text)
    settings = ServerSettings(hook_min_score=0.0, hook_min_ratio=0, query_log=True, query_log_prompts=True)
    engine = make_engine(settings=settings)
    engine.sync()
    engine.context(PROMPT, session_id="s")
    assert engine.query_log is not None
    (context,) = [json.loads(line) for line in engine.query_log.path.read_text(encoding="utf-8").splitlines()]
    assert context["query"] == PROMPT
    assert prompt_hash(PROMPT) == prompt_hash(PROMPT) != prompt_hash(PROMPT + "!")
