"""One primary and a reader as real processes on one data dir: writes through the reader land on
disk and in both indexes, the hook's memory is shared, and the reader takes over when the primary
is killed."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serving.conftest import call_tool, free_port, start_serve, stop_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TOKEN = "roles-token"
INTERNAL_TOKEN = "roles-internal-token"


def wait_for(check: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
            if value:
                return value
        except (httpx.HTTPError, KeyError, ValueError):
            pass
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def wait_synced(primary: Proc, files: int = 1) -> None:
    """The primary has indexed `files` documents and its sync has ended."""
    wait_for(
        lambda: primary.status()["files"] == files and not primary.status()["syncing"], what="the primary"
    )


def ops_folder(tmp_path: Path, documents: dict[str, str]) -> Path:
    """`<tmp>/docs` holding the MCP folder `ops` with `documents` (name -> text)."""
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "ops/.ragdown.json").write_text(json.dumps({"title": "Ops", "mcp": True}), encoding="utf-8")
    for name, text in documents.items():
        (docs / "ops" / name).write_text(text, encoding="utf-8")
    return docs


class Proc:
    def __init__(self, docs: Path, data_dir: Path, **extra_env: str) -> None:
        self.port = free_port()
        self.metrics_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            "RAGDOWN_TAKEOVER_S": "0.5",
            "RAGDOWN_HOOK_MIN_SCORE": "0",
            "RAGDOWN_HOOK_MIN_RATIO": "0",
            "RAGDOWN_METRICS_PORT": str(self.metrics_port),
            **extra_env,
        }
        quiet, kept = subprocess.DEVNULL, subprocess.PIPE  # stderr kept for a failure message
        self.process = start_serve(docs, data_dir, self.port, TOKEN, stdout=quiet, stderr=kept, **env)
        self.stderr = b""  # what it wrote to stderr, once stopped

    def status(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.url}/api/status", timeout=2).json())

    async def call(self, tool: str, arguments: dict[str, Any], path: str = "/mcp/ops") -> str:
        return await call_tool(f"{self.url}{path}", TOKEN, tool, arguments)

    def stop(self) -> None:
        self.stderr += stop_process(self.process)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Proc, Proc, Path]]:
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "ops/.ragdown.json").write_text(json.dumps({"title": "Ops", "mcp": True}), encoding="utf-8")
    (docs / "ops/redis.md").write_text(
        "# Redis\n\n## Eviction\n\nRedis evicts keys.\n\n## Memory\n\nRedis memory use.\n", encoding="utf-8"
    )
    primary = Proc(docs, tmp_path / "data")
    wait_synced(primary)
    reader = Proc(docs, tmp_path / "data")
    wait_for(lambda: reader.status()["role"] == "reader", what="the reader")
    try:
        yield primary, reader, docs
    finally:
        reader.stop()
        primary.stop()
        for proc in (primary, reader):
            print(proc.stderr.decode(errors="replace")[-3000:])


async def test_a_write_through_the_reader_is_on_disk_and_found_by_both(pair: tuple[Proc, Proc, Path]) -> None:
    primary, reader, docs = pair
    assert primary.status()["role"] == "primary"
    # The local internal API: a socket and a token only this user can use (docs/security.md).
    data = docs.parent / "data"
    assert stat.S_IMODE((data / "primary.sock").stat().st_mode) == 0o600
    assert stat.S_IMODE((data / "internal.token").stat().st_mode) == 0o600
    answer = await reader.call(
        "ragdown_write", {"path": "kafka.md", "text": "# Kafka\n\nKafka topics keep messages."}
    )
    assert answer.startswith("created kafka.md (hash ")
    assert (docs / "ops/kafka.md").exists()
    for proc in (reader, primary):
        found = await proc.call("ragdown_recall", {"query": "kafka topics messages", "top_k": 1})
        assert found.startswith("[1] kafka.md:")
    refused = await reader.call("ragdown_write", {"path": "kafka.md", "text": "# Again"})
    assert (
        "pass the hash ragdown_read_doc returned as base_hash" in refused
    )  # the primary's refusal, unchanged


def maps_lancedb(proc: Proc) -> bool:
    """Whether LanceDB's native library is mapped into the process (imported)."""
    return "_lancedb" in Path(f"/proc/{proc.process.pid}/maps").read_text()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the reader's mappings in /proc")
async def test_a_reader_answers_from_the_snapshot_alone(pair: tuple[Proc, Proc, Path]) -> None:
    """docs/design.md#readers-from-the-snapshot: searches, the hook, lists, reads and stats come from
    the primary's search snapshot; writes made through the reader or beside it are followed; and
    LanceDB is never imported."""
    primary, reader, docs = pair
    found = await reader.call("ragdown_recall", {"query": "how are redis keys evicted", "top_k": 1})
    assert found.startswith("[1] redis.md:")
    assert "redis.md" in await reader.call("ragdown_list", {})
    assert "Redis evicts keys." in await reader.call("ragdown_read_doc", {"path": "redis.md"})
    stats = json.loads(await reader.call("ragdown_stats", {}))
    assert (stats["role"], stats["files"], stats["chunks"]) == ("reader", 1, stats["chunks"])
    assert stats["chunks"] >= 2
    context = await reader.call("ragdown_context", {"prompt": "redis memory use", "session_id": "r"})
    assert context.startswith("<ragdown-context ")
    # A write through the reader: its own next search has it, with no wait by the caller.
    written = await reader.call(
        "ragdown_write", {"path": "kafka.md", "text": "# Kafka\n\nKafka topics keep messages."}
    )
    assert written.startswith("created kafka.md")
    found = await reader.call("ragdown_recall", {"query": "kafka topics messages", "top_k": 1})
    assert found.startswith("[1] kafka.md:"), found
    assert json.loads(await reader.call("ragdown_stats", {}))["files"] == 2
    # A write through the primary reaches the reader within the refresh bound and the snapshot's second.
    await primary.call("ragdown_write", {"path": "otters.md", "text": "# Otters\n\nOtters hold hands."})
    wait_for(
        lambda: reader.status()["files"] == 3, timeout=30, what="the reader to follow the primary's write"
    )
    found = await reader.call("ragdown_recall", {"query": "otters hold hands", "top_k": 1})
    assert found.startswith("[1] otters.md:"), found
    # A person's edit beside both, which the primary's watcher indexes.
    (docs / "ops/redis.md").write_text(
        "# Redis\n\n## Eviction\n\nRedis drops volatile keys first.\n", encoding="utf-8"
    )
    wait_for(
        lambda: (
            "volatile" in rpc(reader, "ragdown_recall", {"query": "volatile keys dropped", "top_k": 3})[0]
        ),
        timeout=30,
        what="the reader to follow a person's edit",
    )
    assert not maps_lancedb(reader)
    assert maps_lancedb(primary)


async def test_hook_memory_is_shared_between_processes(pair: tuple[Proc, Proc, Path]) -> None:
    primary, reader, _ = pair
    prompt = "how does redis handle memory and eviction"
    first = await reader.call("ragdown_context", {"prompt": prompt, "session_id": "s", "top_k": 1})
    second = await primary.call("ragdown_context", {"prompt": prompt, "session_id": "s", "top_k": 1})
    third = await reader.call("ragdown_context", {"prompt": prompt, "session_id": "s", "top_k": 1})
    assert first.startswith("<ragdown-context ")
    assert second.startswith("<ragdown-context ")
    assert first.splitlines()[4] != second.splitlines()[4]
    assert third == ""  # both sections were given already, whichever process answered


async def test_the_reader_takes_over_when_the_primary_is_killed(pair: tuple[Proc, Proc, Path]) -> None:
    primary, reader, docs = pair
    primary.process.send_signal(signal.SIGKILL)
    primary.process.wait(timeout=20)
    wait_for(lambda: reader.status()["role"] == "primary", what="the takeover")
    (docs / "ops/new.md").write_text("# Zebra\n\nZebra crossings are striped.\n", encoding="utf-8")
    deadline = time.monotonic() + 60
    while True:
        found = await reader.call("ragdown_recall", {"query": "zebra crossings striped", "top_k": 1})
        if found.startswith("[1] new.md:"):
            break
        assert time.monotonic() < deadline, found
        time.sleep(0.3)
    # Its metrics say what it is now: build info for the primary, and none left for the reader.
    info = [
        name for name, value in scrape(reader).items() if name.startswith("ragdown_build_info") and value == 1
    ]
    assert len(info) == 1
    assert 'role="primary"' in info[0]


def scrape(proc: Proc) -> dict[str, float]:
    text = httpx.get(f"http://127.0.0.1:{proc.metrics_port}/metrics", timeout=5).text
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith(
            (
                "ragdown_hook_calls_total",
                "ragdown_hook_injections_total",
                "ragdown_build_info",
                "ragdown_tool_calls_total",
            )
        ):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


async def test_a_forwarded_write_is_counted_once_where_the_agent_called(
    pair: tuple[Proc, Proc, Path],
) -> None:
    primary, reader, _ = pair
    ok = 'ragdown_tool_calls_total{outcome="ok",tool="ragdown_write"}'
    before = (scrape(primary)[ok], scrape(reader)[ok])
    await reader.call("ragdown_write", {"path": "counted.md", "text": "# Counted"})
    after = (scrape(primary)[ok], scrape(reader)[ok])
    assert (after[0] - before[0], after[1] - before[1]) == (0, 1)


async def test_a_readers_metrics_count_hook_calls_and_health_answers(pair: tuple[Proc, Proc, Path]) -> None:
    _, reader, _ = pair

    before = scrape(reader)
    assert before['ragdown_hook_calls_total{folder="ops"}'] == 0  # pre-created, so rates exist at once
    assert any('role="reader"' in name for name in before)
    await reader.call("ragdown_context", {"prompt": "how does redis evict keys", "session_id": "m"})
    await reader.call("ragdown_context", {"prompt": "how does redis evict keys", "session_id": "m"})
    after = scrape(reader)
    assert after['ragdown_hook_calls_total{folder="ops"}'] == 2
    assert after['ragdown_hook_injections_total{folder="ops"}'] >= 1
    assert httpx.get(f"{reader.url}/healthz", timeout=5).json() == {"ok": True}
    ready = httpx.get(f"{reader.url}/readyz", timeout=5).json()
    assert ready == {"ready": True, "role": "reader", "primary_reachable": True}


async def test_a_reader_follows_the_primary_to_another_embedder(tmp_path: Path) -> None:
    docs = ops_folder(tmp_path, {"redis.md": "# Redis\n\n## Eviction\n\nRedis evicts keys by policy.\n"})
    data = tmp_path / "data"
    primary = Proc(docs, data)
    reader: Proc | None = None
    replacement: Proc | None = None
    try:
        wait_synced(primary)
        reader = Proc(docs, data, RAGDOWN_TAKEOVER_S="1000")
        wait_for(lambda: reader.status()["role"] == "reader", what="the reader")
        assert json.loads(await reader.call("ragdown_stats", {}))["embedder"] == "hash-384"
        primary.stop()
        replacement = Proc(docs, data, RAGDOWN_EMBEDDER="minilm")
        # Searches through the reader never fail: the old index serves until the new one is
        # complete, then the reader follows the switch.
        searches = 0
        deadline = time.monotonic() + 300
        while True:
            found = await reader.call("ragdown_recall", {"query": "how are redis keys evicted", "top_k": 1})
            assert found.startswith("[1] redis.md:"), found
            searches += 1
            embedder = json.loads(await reader.call("ragdown_stats", {}))["embedder"]
            if embedder.startswith("all-MiniLM"):
                break
            assert time.monotonic() < deadline, "the reader never followed the rebuild"
            time.sleep(0.2)
        assert searches >= 1
        assert replacement.status()["embedder"].startswith("all-MiniLM")
    finally:
        for proc in (reader, replacement, primary):
            if proc is not None:
                proc.stop()


async def test_two_readers_see_each_others_writes_through_the_primary(pair: tuple[Proc, Proc, Path]) -> None:
    _primary, reader_a, docs = pair
    reader_b = Proc(docs, docs.parent / "data")
    try:
        wait_for(lambda: reader_b.status()["role"] == "reader", what="the second reader")
        answer = await reader_a.call(
            "ragdown_write", {"path": "otters.md", "text": "# Otters\n\nOtters hold hands."}
        )
        assert answer.startswith("created otters.md")
        written = time.monotonic()
        while True:
            found = await reader_b.call("ragdown_recall", {"query": "otters hold hands", "top_k": 1})
            if found.startswith("[1] otters.md:"):
                break
            assert time.monotonic() - written < 2.0, "reader B did not see the write within 2 s"
        # One session alternating between the two readers never gets a section twice.
        prompt = "how does redis handle memory and eviction"
        given = []
        for reader in (reader_a, reader_b, reader_a):
            block = await reader.call("ragdown_context", {"prompt": prompt, "session_id": "alt", "top_k": 1})
            given.append(block.splitlines()[4] if block else "")
        assert given[0]
        assert given[1]
        assert given[0] != given[1]
        assert given[2] not in given[:2]
    finally:
        reader_b.stop()


def cluster_primary(docs: Path, data: Path, **env: str) -> tuple[Proc, int]:
    """A primary as the chart's indexer runs it: readers reach it on an internal port of its own."""
    internal = free_port()
    primary = Proc(
        docs,
        data,
        RAGDOWN_ROLE="primary",
        RAGDOWN_INTERNAL_PORT=str(internal),
        RAGDOWN_INTERNAL_TOKEN=INTERNAL_TOKEN,
        **env,
    )
    return primary, internal


def cluster_reader(docs: Path, data: Path, internal: int, **env: str) -> Proc:
    return Proc(
        docs,
        data,
        RAGDOWN_ROLE="reader",
        RAGDOWN_PRIMARY_URL=f"http://127.0.0.1:{internal}",
        RAGDOWN_INTERNAL_TOKEN=INTERNAL_TOKEN,
        **env,
    )


async def test_cluster_roles_reach_the_primary_over_http(tmp_path: Path) -> None:
    docs = ops_folder(tmp_path, {"a.md": "# A\n\nalpha\n"})
    data = tmp_path / "data"
    primary, internal = cluster_primary(docs, data)
    reader: Proc | None = None
    try:
        wait_synced(primary)
        assert not (data / "primary.sock").exists()  # in a cluster the primary is reached by URL
        # The internal API is on its own port, with its own token; the public port has none of it.
        public = httpx.get(f"{primary.url}/internal/ping", headers={"Authorization": f"Bearer {TOKEN}"})
        assert public.status_code == 404
        with_agent_token = httpx.get(
            f"http://127.0.0.1:{internal}/internal/ping", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert with_agent_token.status_code == 401
        reader = cluster_reader(docs, data, internal)
        wait_for(lambda: reader.status()["role"] == "reader", what="the reader")
        answer = await reader.call(
            "ragdown_remember", {"title": "Cluster note", "content": "Written via HTTP."}
        )
        assert answer.startswith("saved notes/")
        found = await reader.call("ragdown_recall", {"query": "written via http cluster note", "top_k": 1})
        assert found.startswith("[1] notes/")
        primary.stop()
        refused = await reader.call("ragdown_write", {"path": "late.md", "text": "# Late"})
        assert "cannot be reached, so nothing was written; retry in a moment" in refused
        assert not (docs / "ops/late.md").exists()
        found = await reader.call("ragdown_recall", {"query": "alpha", "top_k": 1})
        assert found.startswith("[1] a.md:")  # searches still answer without the primary
        ready = httpx.get(f"{reader.url}/readyz", timeout=5).json()
        assert ready == {"ready": True, "role": "reader", "primary_reachable": False}
    finally:
        for proc in (reader, primary):
            if proc is not None:
                proc.stop()


async def test_root_mcp_on_a_reader_sends_writes_to_the_primary(pair: tuple[Proc, Proc, Path]) -> None:
    primary, _reader, docs = pair
    root_reader = Proc(docs, docs.parent / "data", RAGDOWN_ROOT_MCP="true")
    try:
        wait_for(lambda: root_reader.status()["role"] == "reader", what="the root reader")
        answer = await root_reader.call(
            "ragdown_write",
            {"path": "via-root.md", "text": "# Root\n\nVia the root.", "folder": "ops"},
            "/mcp",
        )
        assert answer.startswith("created via-root.md (hash ")
        assert (docs / "ops/via-root.md").exists()
        found = await primary.call("ragdown_recall", {"query": "via the root", "top_k": 1})
        assert found.startswith("[1] via-root.md:")  # indexed by the primary, which wrote it
    finally:
        root_reader.stop()


async def test_create_folder_on_a_reader_is_done_by_the_primary(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "ops/a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    data = tmp_path / "data"
    primary, internal = cluster_primary(docs, data, RAGDOWN_ROOT_MCP="true")
    reader: Proc | None = None
    try:
        wait_for(lambda: primary.status()["files"] == 1, what="the primary")
        reader = cluster_reader(docs, data, internal, RAGDOWN_ROOT_MCP="true")
        wait_for(lambda: reader.status()["role"] == "reader", what="the reader")
        answer = await reader.call("ragdown_create_folder", {"name": "team", "title": "Team"}, "/mcp")
        assert answer == "created folder team (/mcp/team)"
        config = json.loads((docs / "team/.ragdown.json").read_text(encoding="utf-8"))
        assert config == {"title": "Team", "mcp": True, "created_by": "ragdown_create_folder"}
        primary.stop()
        refused = await reader.call("ragdown_create_folder", {"name": "later"}, "/mcp")
        assert "cannot be reached, so nothing was written" in refused
        assert not (docs / "later").exists()  # the reader never writes itself
    finally:
        for proc in (reader, primary):
            if proc is not None:
                proc.stop()


def rpc(proc: Proc, tool: str, arguments: dict[str, Any], timeout: float = 15.0) -> tuple[str, bool]:
    """One tool call as plain JSON-RPC, with a client timeout: a reader that hung on its primary would
    fail this call rather than the test waiting on it."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
    answer = httpx.post(f"{proc.url}/mcp/ops", json=body, headers=headers, timeout=timeout).json()["result"]
    return "".join(c.get("text", "") for c in answer["content"]), bool(answer.get("isError"))


@pytest.mark.parametrize("how", ["stopped", "killed"])
def test_a_reader_degrades_while_its_primary_is_stopped_or_killed(tmp_path: Path, how: str) -> None:
    """The indexer of a cluster is away (a `helm upgrade` of its one replica, or hung): readers keep
    searching, the hook keeps answering without its shared memory, /readyz stays ready and says so,
    and writes are refused with a retryable message — nothing hangs on the primary."""
    docs = ops_folder(tmp_path, {"redis.md": "# Redis\n\n## Eviction\n\nRedis evicts keys by policy.\n"})
    data = tmp_path / "data"
    primary, internal = cluster_primary(docs, data)
    reader: Proc | None = None
    try:
        wait_synced(primary)
        reader = cluster_reader(docs, data, internal)
        wait_for(lambda: reader.status()["role"] == "reader", what="the reader")
        assert rpc(reader, "ragdown_write", {"path": "before.md", "text": "# Before"})[1] is False
        if how == "stopped":
            primary.process.send_signal(signal.SIGSTOP)  # it accepts connections and never answers
        else:
            primary.process.kill()
            primary.process.wait()

        def unready_primary() -> bool:
            ready: dict[str, object] = httpx.get(f"{reader.url}/readyz", timeout=5).json()
            return ready == {"ready": True, "role": "reader", "primary_reachable": False}

        wait_for(unready_primary, timeout=30, what="the reader to notice")
        hook, hook_error = rpc(reader, "ragdown_context", {"prompt": "redis eviction", "session_id": "s1"})
        assert not hook_error
        assert "redis.md" in hook  # answered without the primary's memory
        found, _ = rpc(reader, "ragdown_recall", {"query": "redis eviction", "top_k": 1})
        assert found.startswith("[1] redis.md:")
        refused, is_error = rpc(reader, "ragdown_write", {"path": "late.md", "text": "# Late"})
        assert is_error
        assert "cannot be reached, so nothing was written; retry in a moment" in refused
        assert not (docs / "ops/late.md").exists()
        if how == "stopped":
            primary.process.send_signal(signal.SIGCONT)
            wait_for(
                lambda: httpx.get(f"{reader.url}/readyz", timeout=5).json()["primary_reachable"],
                timeout=30,
                what="the reader to see the primary back",
            )
            text, is_error = rpc(reader, "ragdown_write", {"path": "after.md", "text": "# After"})
            assert not is_error, text
            assert (docs / "ops/after.md").exists()
    finally:
        if how == "stopped" and primary.process.poll() is None:
            primary.process.send_signal(signal.SIGCONT)
        for proc in (reader, primary):
            if proc is not None:
                proc.stop()


def test_a_reader_waits_for_the_docs_folder_instead_of_exiting(tmp_path: Path) -> None:
    """On a fresh volume the readers (read-only mounts) can start before the indexer made the docs
    folder: they wait for it rather than exit and crash-loop."""
    docs = tmp_path / "docs"
    data = tmp_path / "data"
    internal = free_port()
    reader = cluster_reader(docs, data, internal)
    primary: Proc | None = None
    try:
        time.sleep(2)  # long enough for a reader that would refuse the missing folder to have exited
        assert reader.process.poll() is None
        (docs / "ops").mkdir(parents=True)
        (docs / "ops/.ragdown.json").write_text(json.dumps({"title": "Ops", "mcp": True}), encoding="utf-8")
        (docs / "ops/a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
        primary = Proc(
            docs,
            data,
            RAGDOWN_ROLE="primary",
            RAGDOWN_INTERNAL_PORT=str(internal),
            RAGDOWN_INTERNAL_TOKEN=INTERNAL_TOKEN,
        )
        wait_for(lambda: reader.status()["role"] == "reader", what="the reader")
        found, _ = rpc(reader, "ragdown_recall", {"query": "alpha", "top_k": 1})
        assert found.startswith("[1] a.md:")
    finally:
        for proc in (reader, primary):
            if proc is not None:
                proc.stop()


def test_an_unreachable_local_primary_is_reported_without_the_servers_paths() -> None:
    from ragdown.errors import PrimaryUnreachableError

    local = PrimaryUnreachableError(
        "unix:///srv/data/primary.sock", httpx.ConnectError("[Errno 2] /srv/data")
    )
    assert "/srv" not in str(local)
    assert str(local) == (
        "the primary cannot be reached, so nothing was written; retry in a moment (ConnectError)"
    )
    remote = PrimaryUnreachableError("http://indexer:3001", httpx.ConnectTimeout("timed out"))
    assert "(http://indexer:3001)" in str(remote)
