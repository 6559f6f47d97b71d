"""Session memory (docs/hook.md#session-memory): per-scope keys, an LRU of 200 per folder, forget."""

from __future__ import annotations

from ragdown.hook.session_memory import MAX_SESSIONS, LruSessionMemory, session_key


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

    def key(name: str) -> str:
        return session_key("ops", name)

    for n in range(MAX_SESSIONS):
        memory.add(key(f"s{n}"), [f"chunk{n}"])
    assert memory.seen(key("s0")) == {"chunk0"}  # touching s0 makes s1 the oldest
    memory.add(key("new"), ["x"])
    assert len(memory) == MAX_SESSIONS
    assert key("s1") not in memory
    assert key("s0") in memory
    assert memory.seen(key("s2")) == {"chunk2"}


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


def test_each_folder_has_its_own_pool_of_sessions() -> None:
    """docs/security.md#tenants item 13: a team opening sessions by the thousand evicts only its own."""
    memory = LruSessionMemory()
    memory.add(session_key("teamb", "s1"), ["b1"])
    memory.add(session_key("teamb/sub", "s2"), ["b2"])
    memory.add(session_key("*folder:abc", "s3"), ["r"])
    for n in range(10 * MAX_SESSIONS):
        memory.add(session_key("notes", f"flood{n}"), ["x"])
    assert memory.seen(session_key("teamb", "s1")) == {"b1"}
    assert memory.seen(session_key("teamb/sub", "s2")) == {"b2"}
    assert memory.seen(session_key("*folder:abc", "s3")) == {"r"}
    assert len(memory) == MAX_SESSIONS + 3
    assert session_key("notes", "flood0") not in memory
    assert session_key("notes", f"flood{10 * MAX_SESSIONS - 1}") in memory


def test_the_pools_are_bounded_too() -> None:
    memory = LruSessionMemory(max_pools=3)
    for name in ("a", "b", "c", "d"):
        memory.add(session_key(name, "s"), [name])
    assert len(memory) == 3
    assert session_key("a", "s") not in memory
