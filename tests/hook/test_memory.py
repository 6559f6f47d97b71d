"""Session memory (docs/hook.md#session-memory): per-scope keys, LRU of 200, forget."""

from __future__ import annotations

from ragdown.hook.memory import MAX_SESSIONS, LruSessionMemory, session_key


def test_keys_separate_scopes_and_sessions() -> None:
    keys = {
        session_key("ops", "s1"),
        session_key("ops/db", "s1"),
        session_key("", "s1"),
        session_key("ops", "s2"),
    }
    assert len(keys) == 4


def test_seen_accumulates_and_forget_clears() -> None:
    memory = LruSessionMemory()
    memory.add("k", ["a", "b"])
    memory.add("k", ["c"])
    assert memory.seen("k") == {"a", "b", "c"}
    memory.forget("k")
    assert memory.seen("k") == frozenset()
    memory.forget("never-there")


def test_the_least_recently_used_session_is_evicted_past_the_limit() -> None:
    memory = LruSessionMemory()
    for n in range(MAX_SESSIONS):
        memory.add(f"s{n}", [f"chunk{n}"])
    assert memory.seen("s0") == {"chunk0"}  # touching s0 makes s1 the oldest
    memory.add("new", ["x"])
    assert len(memory) == MAX_SESSIONS
    assert "s1" not in memory
    assert "s0" in memory
    assert memory.seen("s2") == {"chunk2"}


def test_seen_returns_a_snapshot() -> None:
    memory = LruSessionMemory(max_sessions=2)
    snapshot = memory.seen("k")
    memory.add("k", ["a"])
    assert snapshot == frozenset()


def test_a_session_idle_past_its_time_to_live_is_forgotten() -> None:
    now = [1000.0]
    memory = LruSessionMemory(ttl_s=60, clock=lambda: now[0])
    memory.add("old", ["a"])
    now[0] += 30
    memory.add("recent", ["b"])
    now[0] += 40  # "old" idle 70 s, "recent" 40 s
    assert memory.seen("recent") == {"b"}
    assert "old" not in memory
    assert memory.seen("old") == frozenset()  # a fresh, empty memory
