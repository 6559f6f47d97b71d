"""Concurrent writes are linearizable, with real `ragdown serve` processes: racing replaces with one
base_hash acknowledge exactly one, racing appends and edits lose nothing, whether the racers go to
one process, to a primary and its reader, or to two primaries on one docs dir; and a SIGKILL in the
middle of a burst leaves every file a whole version, which a restarted server indexes as it is.

The racers speak MCP JSON-RPC over plain HTTP: the endpoints are stateless with JSON responses, so
one POST per tool call needs no session, and 30 threads cost little.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from tests.serving.conftest import free_port, start_serve, stop_process, wait_ready

pytestmark = pytest.mark.slow
TOKEN = "races-token"
FOLDER = "ops"
# Within one process's waiting line (4 running + 32 queued), so "overloaded" stays the exception.
RACERS = 30
OVERLOADED = "ragdown is overloaded"
HASH_RE = re.compile(r"hash ([0-9a-f]{12})\b")
# Today's lost update needs two racers between the hash check and the rename, which one round
# catches about half the time: several rounds, and a long text whose write holds that window open.
REPLACE_ROUNDS = 8
LONG = "A long document takes a while to write.\n" * 1600
# The folder is never empty, so a server is ready once it has indexed something.
SEED = "# Seed\n\nAlways here.\n"


def sha12(text: str) -> str:
    """The short hash a tool shows for a file holding `text` (docs/documents.md#hashes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Answer:
    text: str
    is_error: bool


class Server:
    """One `ragdown serve` process (hash embedder, no watcher), called tool by tool over HTTP."""

    def __init__(self, docs: Path, data: Path, log: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        # A file, not a pipe: nobody reads a pipe while a burst runs, and a full one would stall the server.
        self._log_file: IO[bytes] = log.open("ab")
        self.process = start_serve(
            docs,
            data,
            self.port,
            TOKEN,
            stdout=subprocess.DEVNULL,
            stderr=self._log_file.fileno(),
            RAGDOWN_WATCH="false",
            **env,
        )
        self.http = httpx.Client(
            base_url=self.url,
            headers={
                "Authorization": f"Bearer {TOKEN}",
                "Accept": "application/json, text/event-stream",
            },
            timeout=120,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=64),
        )
        self._ids = itertools.count(1)

    def status(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.url}/api/status", timeout=5).json())

    def ready(self) -> None:
        wait_ready(self.url, self.process)

    def call(self, tool: str, arguments: dict[str, Any]) -> Answer:
        """One `tools/call`; an "overloaded" answer is sent again, since the call never ran."""
        for _ in range(600):
            request = {
                "jsonrpc": "2.0",
                "id": next(self._ids),
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
            response = self.http.post(f"/mcp/{FOLDER}", json=request)
            response.raise_for_status()
            body = response.json()
            assert "result" in body, body  # a protocol error means the test sent a bad call
            text = "".join(c.get("text", "") for c in body["result"]["content"])
            answer = Answer(text, bool(body["result"].get("isError")))
            if not (answer.is_error and text.startswith(OVERLOADED)):
                return answer
            time.sleep(0.1)
        return answer

    def read_hash(self, path: str) -> str:
        answer = self.call("ragdown_read_doc", {"path": path})
        assert not answer.is_error, answer.text
        found = HASH_RE.search(answer.text.splitlines()[0])
        assert found is not None, answer.text
        return found.group(1)

    def stop(self) -> None:
        self.http.close()
        stop_process(self.process)
        self._log_file.close()

    def log_tail(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-3000:]


def make_docs(docs: Path) -> Path:
    """A docs dir with the MCP folder and its seed document; returns the folder's directory."""
    folder = docs / FOLDER
    folder.mkdir(parents=True)
    (folder / ".ragdown.json").write_text(json.dumps({"title": "Ops", "mcp": True}), encoding="utf-8")
    (folder / "seed.md").write_bytes(SEED.encode("utf-8"))
    return folder


@dataclass
class Cluster:
    """The processes a scenario's racers are spread over, and the directory its documents are in."""

    servers: list[Server]
    folder: Path
    subdir: str  # the documents' directory inside the MCP folder, as tool paths name it

    def server(self, racer: int) -> Server:
        return self.servers[racer % len(self.servers)]

    def path(self, name: str) -> str:
        return f"{self.subdir}/{name}"

    def file(self, name: str) -> Path:
        return self.folder / self.subdir / name


@dataclass
class Processes:
    """All the processes the race scenarios use, on one docs dir, started once for the module."""

    folder: Path
    primary: Server  # on data dir A
    reader: Server  # on data dir A too, so it forwards its writes to `primary`
    other: Server  # a second primary, on data dir B: only the docs dir is shared with `primary`


@pytest.fixture(scope="module")
def processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Processes]:
    root = tmp_path_factory.mktemp("races")
    docs = root / "docs"
    folder = make_docs(docs)
    started: list[Server] = []

    def start(data: str, **env: str) -> Server:
        server = Server(docs, root / data, root / f"{data}-{len(started)}.log", **env)
        started.append(server)
        return server

    try:
        # The two primaries start side by side; the reader only once data dir A has an index.
        primary = start("data-a")
        other = start("data-b", RAGDOWN_ROLE="primary")
        primary.ready()
        other.ready()
        reader = start("data-a")  # auto role: it finds the primary's socket
        reader.ready()
        roles = [server.status()["role"] for server in (primary, reader, other)]
        assert roles == ["primary", "reader", "primary"]
        yield Processes(folder, primary, reader, other)
    finally:
        for server in reversed(started):
            server.stop()


TOPOLOGIES = ["one-process", "primary-and-reader", "two-primaries"]


@pytest.fixture(params=TOPOLOGIES)
def cluster(request: pytest.FixtureRequest, processes: Processes) -> Cluster:
    servers = {
        "one-process": [processes.primary],
        "primary-and-reader": [processes.primary, processes.reader],
        "two-primaries": [processes.primary, processes.other],
    }[request.param]
    # A directory per test, so no scenario sees another's documents.
    name = f"{request.function.__name__.removeprefix('test_racing_').split('_')[0]}-{request.param}"
    (processes.folder / name).mkdir()
    return Cluster(servers, processes.folder, name)


def race(count: int, go: Callable[[int], Answer]) -> list[Answer]:
    """`go(0)` … `go(count - 1)` in as many threads, released together so their calls overlap."""
    barrier = threading.Barrier(count)

    def run(racer: int) -> Answer:
        barrier.wait()
        return go(racer)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def read_hashes(cluster: Cluster, path: str) -> list[str]:
    """The hash each racer reads through its own server, as an agent does before writing."""
    with ThreadPoolExecutor(max_workers=RACERS) as pool:
        return list(pool.map(lambda racer: cluster.server(racer).read_hash(path), range(RACERS)))


def replace_round(cluster: Cluster, round_: int) -> tuple[list[str], list[Answer]]:
    """Every racer reads the same fresh version of plan.md, then all replace it from that hash at once.

    plan.md is the user's (written here, no created_by), so a replace stores the text exactly as sent.
    """
    initial = f"# Plan\n\nVersion {round_}, the one every racer read.\n"
    cluster.file("plan.md").write_bytes(initial.encode("utf-8"))
    hashes = read_hashes(cluster, cluster.path("plan.md"))
    assert set(hashes) == {sha12(initial)}
    texts = [f"# Plan\n\nRacer {racer:02d} replaced version {round_}.\n{LONG}" for racer in range(RACERS)]
    answers = race(
        RACERS,
        lambda racer: cluster.server(racer).call(
            "ragdown_write",
            {"path": cluster.path("plan.md"), "text": texts[racer], "base_hash": hashes[racer]},
        ),
    )
    return texts, answers


def test_racing_replaces_with_one_base_hash_acknowledge_exactly_one(cluster: Cluster) -> None:
    winners: list[int] = []
    for round_ in range(REPLACE_ROUNDS):
        texts, answers = replace_round(cluster, round_)
        won = [racer for racer, answer in enumerate(answers) if not answer.is_error]
        winners.append(len(won))
        # Every loser is told its base version is gone, and nothing else.
        assert [a.text for a in answers if a.is_error and "changed" not in a.text] == []
        disk = cluster.file("plan.md").read_bytes().decode("utf-8")
        holder = texts.index(disk) if disk in texts else None
        assert len(won) == 1, (
            f"round {round_}: racers {won} were all told they wrote, the file holds racer {holder}'s text "
            f"(acknowledged per round of {RACERS}: {winners})"
        )
        assert disk == texts[won[0]]  # the acknowledged one is the one that stayed
        assert answers[won[0]].text == f"wrote {cluster.path('plan.md')} (hash {sha12(disk)})"


def test_racing_appends_are_all_kept_once_each(cluster: Cluster) -> None:
    initial = "# Journal\n\nEntries follow.\n"
    cluster.file("journal.md").write_bytes(initial.encode("utf-8"))
    markers = [f"entry {racer:02d} appended by racer {racer:02d}" for racer in range(RACERS)]

    answers = race(
        RACERS,
        lambda racer: cluster.server(racer).call(
            "ragdown_write", {"path": cluster.path("journal.md"), "text": markers[racer], "append": True}
        ),
    )

    assert [a.text for a in answers if a.is_error and "changed" not in a.text] == []
    acked = {markers[racer] for racer, answer in enumerate(answers) if not answer.is_error}
    assert all(
        a.text.startswith(f"wrote {cluster.path('journal.md')} (hash ") for a in answers if not a.is_error
    )
    disk = cluster.file("journal.md").read_bytes().decode("utf-8")
    present = [line for line in disk.split("\n") if line in markers]
    assert len(present) == len(set(present)), "an append landed twice"
    # Not torn: exactly the docs/documents.md#write append rule applied once per present marker, in the file's
    # order.
    assert disk == initial.rstrip("\n") + "".join(f"\n\n{m}" for m in present) + "\n"
    lost = acked - set(present)
    assert not lost, f"{len(acked)} of {RACERS} appends acknowledged, {len(lost)} of them lost"
    assert set(present) <= acked, "a refused append is in the file"
    # An append without base_hash has no version to be stale against: every one must succeed.
    assert len(acked) == RACERS, f"only {len(acked)} of {RACERS} appends acknowledged"


def test_racing_edits_of_different_lines_are_all_kept(cluster: Cluster) -> None:
    items = [f"- item {racer:02d}: open" for racer in range(RACERS)]
    done = [f"- item {racer:02d}: closed by racer {racer:02d}" for racer in range(RACERS)]
    initial = "# Checklist\n\n" + "\n".join(items) + "\n"
    cluster.file("checklist.md").write_bytes(initial.encode("utf-8"))

    answers = race(
        RACERS,
        lambda racer: cluster.server(racer).call(
            "ragdown_edit",
            {
                "path": cluster.path("checklist.md"),
                "edits": [{"old_text": items[racer], "new_text": done[racer]}],
            },
        ),
    )

    assert [a.text for a in answers if a.is_error and "changed" not in a.text] == []
    acked = [racer for racer, answer in enumerate(answers) if not answer.is_error]
    assert all(
        a.text.startswith(f"edited {cluster.path('checklist.md')} (replaced 1, hash ")
        for a in answers
        if not a.is_error
    )
    disk = cluster.file("checklist.md").read_bytes().decode("utf-8")
    kept = [racer for racer in range(RACERS) if done[racer] in disk.split("\n")]
    lost = sorted(set(acked) - set(kept))
    assert not lost, f"{len(acked)} of {RACERS} edits acknowledged, {len(lost)} of them lost: {lost}"
    assert set(kept) <= set(acked), "a refused edit is in the file"
    # Different lines never conflict, and without base_hash an edit applies to the current text.
    assert len(acked) == RACERS, f"only {len(acked)} of {RACERS} edits acknowledged"
    assert disk == "# Checklist\n\n" + "\n".join(done) + "\n"


# --- A SIGKILL in the middle of a burst ---------------------------------------------------------
#
# Each file has one writer, which sends its versions one after another, so the versions a file can
# hold are exactly known: the last acknowledged one or the one in flight when the server died.
# Every version names itself in a word of its own and is longer than the one before (so the
# sync's mtime+size shortcut never mistakes one for another); anything torn matches none of them.

REWRITTEN = ["rewrite-0.md", "rewrite-1.md", "rewrite-2.md"]
APPENDED = ["log-0.md", "log-1.md"]
CREATOR = "created"
# A create over HTTP with the agents' token is stamped so (docs/documents.md#provenance, no session given).
CREATE_STAMP = "---\ncreated_by: ragdown_write (agent token)\n---\n"


def word(name: str, number: int) -> str:
    """A word only version `number` of `name` holds: fixed width, so no word is inside another."""
    return f"{re.sub(r'[^a-z0-9]', '', name.removesuffix('.md'))}v{number:04d}"


def rewrite_text(name: str, number: int) -> str:
    return (
        f"# {name} version {number}\n\n{word(name, number)} names this version.\n\n"
        f"{'padding ' * number}\n\nend of {name} version {number}\n"
    )


def log_line(name: str, number: int) -> str:
    return f"{word(name, number)} appended"


def log_text(name: str, count: int) -> str:
    """A log after `count` appends, by the docs/documents.md#write append rule."""
    head = f"# {name}\n\nThe first line.\n"
    if not count:
        return head
    return head.rstrip("\n") + "".join(f"\n\n{log_line(name, n)}" for n in range(1, count + 1)) + "\n"


def created_name(number: int) -> str:
    return f"{CREATOR}-{number:04d}.md"


def created_text(number: int) -> str:
    return f"# Created {number}\n\n{word(CREATOR, number)} is in this document alone.\n"


@dataclass
class Chain:
    """One writer's versions: how many it sent and how many were acknowledged, in order."""

    sent: int = 0
    acked: int = 0
    refusals: list[str] = field(default_factory=list)


def write_chain(chain: Chain, stop: threading.Event, step: Callable[[int], Answer]) -> None:
    """`step(1)`, `step(2)`, … until `stop`, a refusal, or the server dying with a call in flight."""
    while not stop.is_set():
        chain.sent += 1
        try:
            answer = step(chain.sent)
        except httpx.TransportError:
            return
        if answer.is_error:
            chain.refusals.append(answer.text)
            return
        chain.acked = chain.sent


def burst_then_kill(server: Server) -> dict[str, Chain]:
    """A writer per file (replaces, appends, and creates of new files), all at once; SIGKILL once
    each is a few versions in, when each has a call in flight. Returns each writer's chain."""
    chains = {name: Chain() for name in [*REWRITTEN, *APPENDED, CREATOR]}
    bases = {name: sha12(rewrite_text(name, 0)) for name in REWRITTEN}

    def rewrite(name: str, number: int) -> Answer:
        answer = server.call(
            "ragdown_write", {"path": name, "text": rewrite_text(name, number), "base_hash": bases[name]}
        )
        found = HASH_RE.search(answer.text)
        if not answer.is_error and found is not None:
            bases[name] = found.group(1)
        return answer

    def append(name: str, number: int) -> Answer:
        return server.call("ragdown_write", {"path": name, "text": log_line(name, number), "append": True})

    def create(number: int) -> Answer:
        return server.call("ragdown_write", {"path": created_name(number), "text": created_text(number)})

    steps: dict[str, Callable[[int], Answer]] = {
        **{name: functools.partial(rewrite, name) for name in REWRITTEN},
        **{name: functools.partial(append, name) for name in APPENDED},
        CREATOR: create,
    }
    stop = threading.Event()
    writers = [threading.Thread(target=write_chain, args=(chains[n], stop, steps[n])) for n in chains]
    for writer in writers:
        writer.start()
    try:
        deadline = time.monotonic() + 120
        while min(c.acked for c in chains.values()) < 3 and not any(c.refusals for c in chains.values()):
            assert time.monotonic() < deadline, f"the burst stalled: {chains}\n{server.log_tail()}"
            time.sleep(0.01)
        server.process.kill()
        server.process.wait(timeout=30)
    finally:
        stop.set()
        for writer in writers:
            writer.join(timeout=150)
    return chains


def text_of(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def versions_on_disk(folder: Path, chains: dict[str, Chain]) -> dict[str, str | None]:
    """Checks every file is one whole version, no older than its last acknowledged one, and maps
    every version's word to the file holding it now (None: replaced, or never written)."""
    holders: dict[str, str | None] = {}
    for name in REWRITTEN:
        chain = chains[name]
        allowed = {rewrite_text(name, n): n for n in range(chain.acked, chain.sent + 1)}
        disk = text_of(folder / name)
        assert disk in allowed, f"{name} is not version {chain.acked}..{chain.sent}:\n{disk!r}"
        holders |= {word(name, n): name if n == allowed[disk] else None for n in range(chain.sent + 1)}
    for name in APPENDED:
        chain = chains[name]
        allowed = {log_text(name, n): n for n in range(chain.acked, chain.sent + 1)}
        disk = text_of(folder / name)
        assert disk in allowed, f"{name} does not hold {chain.acked}..{chain.sent} appends:\n{disk!r}"
        holders |= {word(name, n): name if n <= allowed[disk] else None for n in range(1, chain.sent + 1)}
    creates = chains[CREATOR]
    for number in range(1, creates.sent + 1):
        path = folder / created_name(number)
        if number > creates.acked and not path.exists():
            holders[word(CREATOR, number)] = None  # the create in flight did not happen
            continue
        assert text_of(path) == CREATE_STAMP + created_text(number), f"{path.name} is torn"
        holders[word(CREATOR, number)] = path.name
    return holders


def wait_for_first_sync(server: Server) -> dict[str, Any]:
    """`ragdown_stats` once the restarted process has finished its own start-up sync."""
    deadline = time.monotonic() + 120
    while True:
        answer = server.call("ragdown_stats", {"include_files": True})
        assert not answer.is_error, answer.text
        stats: dict[str, Any] = json.loads(answer.text)
        if stats["last_sync"] is not None and not stats["syncing"]:
            return stats
        assert time.monotonic() < deadline, f"no sync finished:\n{server.log_tail()}"
        time.sleep(0.1)


def test_a_sigkill_mid_burst_leaves_whole_versions_that_a_restart_indexes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    folder = make_docs(docs)
    for name in REWRITTEN:
        (folder / name).write_bytes(rewrite_text(name, 0).encode("utf-8"))
    for name in APPENDED:
        (folder / name).write_bytes(log_text(name, 0).encode("utf-8"))
    server = Server(docs, tmp_path / "data", tmp_path / "killed.log")
    restarted: Server | None = None
    try:
        server.ready()
        chains = burst_then_kill(server)
        assert {n: c.refusals for n, c in chains.items() if c.refusals} == {}

        holders = versions_on_disk(folder, chains)
        on_disk = sorted(p.name for p in folder.glob("*.md") if not p.name.startswith("."))
        assert on_disk == sorted({"seed.md", *filter(None, holders.values())})  # no stray document

        # A restart on the same data dir indexes exactly the disk: nothing the killed process left
        # half-done (a temp file) is listed, each surviving version's word is found in its file
        # alone, and no replaced or unwritten version's word is found at all.
        restarted = Server(docs, tmp_path / "data", tmp_path / "restarted.log")
        restarted.ready()
        stats = wait_for_first_sync(restarted)
        assert sorted(f["path"] for f in stats["file_list"]) == on_disk
        listed = restarted.call("ragdown_list", {"limit": 1000}).text.splitlines()
        assert listed[0] == f"documents: {len(on_disk)}"
        assert sorted(line.split(" — ")[0] for line in listed[1:]) == on_disk
        for searched, holder in holders.items():
            answer = restarted.call("ragdown_recall", {"query": searched, "top_k": 10, "format": "json"})
            assert not answer.is_error, answer.text
            found = [
                h["path"] for h in json.loads(answer.text)["hits"] if re.search(rf"\b{searched}\b", h["text"])
            ]
            assert found == ([holder] if holder else []), f"{searched} found in {found}, not {holder}"
    finally:
        for running in (restarted, server):
            if running is not None:
                running.stop()
