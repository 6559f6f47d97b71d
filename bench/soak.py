"""Soak: one `ragdown serve` process under a steady mix of readers and writers for minutes, then a
check that every acknowledged write is on disk and that the index agrees with the disk.

    .venv/bin/python bench/soak.py [--duration 300] [--clients 8] [--writers N] [--embedder minilm|hash]
                                   [--corpus rust-book] [--seed 7] [--json PATH]

The served folder is built at run time in a temporary directory: a copy of a real doc set from
shared/bench/corpora plus `scratch/`, where the writers work. Clients are asyncio tasks in this one
process, each with its own HTTP connection, calling back to back until `--duration` has passed:

- `recall`: `ragdown_recall` with a `## ` heading of the corpus as the query (text or JSON);
- `context`: `ragdown_context` with a heading as the prompt, under a session id that changes every
  5–20 calls, and `reset: true` on one call in ten;
- `read_doc`: `ragdown_read_doc` of a random corpus document (whole, or a random line range),
  checked line for line against the file;
- writers (`--writers`, a quarter of the clients by default): create a scratch document, replace
  one whole (with `base_hash` from a fresh read), append a marker line to one, or edit one passage
  (`ragdown_edit`, with `base_hash`). Replaces and edits go to four shared files half the time and
  appends to the newest files with room, so writers collide; a "changed" refusal is re-read and
  retried, as an agent would. Every answered write goes into a ledger.

Each scratch document carries a `replace: <token>` line, an `edit: <token>` line and the appended
`append <token>` lines; a replace rewrites the document as read with a new replace token, so it keeps
what was appended before it. After the run the ledger is checked against the disk:

- the replace (and edit) tokens of a file form one chain, each acknowledged write starting from the
  token the one before it left, and the chain ends at the token on disk: an acknowledged replace
  that is not on that chain was lost;
- every acknowledged append marker is on disk exactly once; no refused write's marker is;
- each file's bytes are those some acknowledged write answered with (its hash);
- `ragdown_stats` (its file list) and `ragdown_list` count exactly the Markdown files on disk, and a
  search for each scratch file's current tokens finds that file's fresh text.

MCP goes over httpx as plain JSON-RPC (`tools/call` POSTs; the server is stateless and answers JSON,
so no `initialize` is needed; one is sent to check the protocol version). The official client cost
about as much CPU per call (1.35 ms against 1.2 ms, measured), but hides the HTTP status and the
JSON-RPC error behind exceptions, which the error counts need.

Reported: per operation the calls, successes, successes per second, latency p50/p95/p99 (ms, over
successful calls), errors by kind (changed and overloaded are expected under contention; any other
tool error, HTTP status, JSON-RPC error or transport exception is not), the server's RSS after
warm-up, at the end and at its peak (VmRSS sampled every second; VmHWM), server and client CPU, and
the consistency checks. Exits 1 on any unexpected error, any failed check, or a dead server.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from _common import CORPORA, Server, commit, cpu_seconds, headings, percentile, require

FOLDER = "soak"
SCRATCH = "scratch"
TOKEN = "bench-soak"
PROTOCOL = "2025-06-18"
SHARED = 4  # scratch files every writer replaces and edits: where the collisions happen
# A changed file is re-embedded whole, so unbounded logs would turn the soak into an embedding
# benchmark: after this many appends a file takes no more, and appends move to a newer file.
APPEND_CAP = 60
MAX_FILES = 64  # creates stop here (appends still open a file when none has room)
MAX_ATTEMPTS = 100  # a write retried this many times on "changed" is given up (and counted)
RETRY_AFTER_S = 1.0  # what an "overloaded" answer asks for
WRITES = {"create": 0.1, "replace": 0.3, "append": 0.35, "edit": 0.25}
OPERATIONS = (
    "recall",
    "context",
    "read_doc",
    "writer_read",
    "write_create",
    "write_replace",
    "write_append",
    "edit",
)
EXPECTED = ("changed", "overloaded")
# The refusals of a stale base hash (save, edit, delete): "… was changed on disk since it was
# opened", "… was deleted since it was opened", "… changed since it was read".
CHANGED = re.compile(r"\b(changed|deleted)\b.*\bsince it was (opened|read)\b")
READ_HEADER = re.compile(
    r"^(?P<path>.+?):(?P<start>\d+)-(?P<end>\d+) of (?P<total>\d+) \(hash (?P<hash>[0-9a-f]{12})"
)
ANSWER_HASH = re.compile(r"\(.*hash (?P<hash>[0-9a-f]{12})\)$")
LINE_BREAK = re.compile(r"\r?\n")


def classify(text: str) -> str:
    """The kind of a tool error: `changed` and `overloaded` are the retryable ones."""
    if CHANGED.search(text):
        return "changed"
    if "overloaded" in text:
        return "overloaded"
    return "other"


def doc_lines(text: str) -> list[str]:
    """A document's lines as `ragdown_read_doc` numbers them (a final line break ends the last line)."""
    lines = LINE_BREAK.split(text)
    return lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines


def short_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def markdown_files(folder: Path) -> set[str]:
    """Folder-relative paths of the files the indexer takes: Markdown, no dot-entries or node_modules."""
    found = set()
    for path in folder.rglob("*"):
        parts = path.relative_to(folder).parts
        if any(p.startswith(".") or p == "node_modules" for p in parts) or path.is_symlink():
            continue
        if path.is_file() and path.suffix.lower() in (".md", ".markdown"):
            found.add("/".join(parts))
    return found


def proc_memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (the kernel's high-water mark) of a process, in MB."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


# --- calls and their statistics ----------------------------------------------------------------


@dataclass
class OpStats:
    calls: int = 0
    ok: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)


@dataclass
class Recorder:
    """Every call's outcome by operation, and a few samples of the unexpected ones."""

    ops: dict[str, OpStats] = field(default_factory=lambda: {op: OpStats() for op in OPERATIONS})
    samples: list[str] = field(default_factory=list)

    def record(self, op: str, kind: str, text: str, began: float) -> Outcome:
        stats = self.ops.setdefault(op, OpStats())
        stats.calls += 1
        if kind == "ok":
            stats.ok += 1
            stats.latencies_ms.append((time.perf_counter() - began) * 1000)
        else:
            stats.errors[kind] += 1
            if kind not in EXPECTED and len(self.samples) < 20:
                self.samples.append(f"{op}: {kind}: {text[:300]}")
        return Outcome(kind, text)


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok, changed, overloaded, other, "http <status>", "jsonrpc <code>", "transport <error>"
    text: str

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    @property
    def uncertain(self) -> bool:
        """No answer came back: the server may or may not have done it."""
        return self.kind.startswith("transport")


Check = Callable[[str], str | None]  # the problem with a successful answer, or None


class Mcp:
    """MCP `tools/call` as plain JSON-RPC over one HTTP connection."""

    def __init__(self, url: str, recorder: Recorder) -> None:
        self.url = url
        self.recorder = recorder
        self.ids = 0
        self.http = httpx.AsyncClient(
            headers={
                "Authorization": f"Bearer {TOKEN}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "MCP-Protocol-Version": PROTOCOL,
            },
            timeout=httpx.Timeout(120, connect=10),
            limits=httpx.Limits(max_connections=1),
        )

    async def close(self) -> None:
        await self.http.aclose()

    async def initialize(self) -> str:
        """The protocol version the server answers with (stateless: nothing is kept between calls)."""
        params = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"},
        }
        response = await self.http.post(
            self.url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        )
        response.raise_for_status()
        return str(response.json()["result"]["protocolVersion"])

    async def call(
        self, op: str, tool: str, arguments: dict[str, Any], check: Check | None = None
    ) -> Outcome:
        self.ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        began = time.perf_counter()
        try:
            response = await self.http.post(self.url, json=body)
        except httpx.HTTPError as error:
            return self.recorder.record(op, f"transport {type(error).__name__}", str(error), began)
        if response.status_code != 200:
            return self.recorder.record(op, f"http {response.status_code}", response.text, began)
        try:
            message = response.json()
            if "error" in message:
                failure = message["error"]
                return self.recorder.record(op, f"jsonrpc {failure.get('code')}", str(failure), began)
            result = message["result"]
            text = "".join(part.get("text", "") for part in result["content"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return self.recorder.record(op, "other", f"not an MCP answer: {response.text}", began)
        if result.get("isError"):
            return self.recorder.record(op, classify(text), text, began)
        problem = check(text) if check else None
        if problem:
            return self.recorder.record(op, "other", problem, began)
        return self.recorder.record(op, "ok", text, began)


# --- what the run shares ---------------------------------------------------------------------


@dataclass
class Corpus:
    queries: list[str]
    lines: dict[str, list[str]]  # folder-relative path -> its lines, for checking reads


@dataclass
class WriteRecord:
    """One write as a writer asked for it, and what became of it."""

    path: str
    kind: str  # create, replace, append, edit
    token: str  # the marker this write puts in the file
    prev: str = ""  # replace and edit: the token the write replaced (from the read it was made from)
    status: str = "pending"  # acknowledged, refused (changed until given up, or an error), uncertain
    hash: str = ""  # of the file as written, from the answer
    attempts: int = 0


@dataclass
class Files:
    """The scratch documents writers know of (acknowledged creates), and appends per file."""

    shared: list[str] = field(default_factory=list)
    all: list[str] = field(default_factory=list)
    appends: Counter[str] = field(default_factory=Counter)  # acknowledged or in flight

    def add(self, path: str, shared: bool = False) -> None:
        self.all.append(path)
        if shared:
            self.shared.append(path)


@dataclass
class Run:
    corpus: Corpus
    deadline: float = float("inf")
    stopped: bool = False
    files: Files = field(default_factory=Files)
    ledger: list[WriteRecord] = field(default_factory=list)

    def running(self) -> bool:
        return not self.stopped and time.monotonic() < self.deadline


def root_tokens(path: str) -> tuple[str, str]:
    """The replace and edit tokens a scratch document is created with (derived from its name)."""
    slug = re.sub(r"[^a-z0-9]", "", Path(path).stem.lower())
    return f"rpl{slug}root", f"edt{slug}root"


def new_document(path: str) -> str:
    replace, edit = root_tokens(path)
    return f"# Soak {Path(path).stem}\n\nreplace: {replace}\n\nedit: {edit}\n\n## Log\n"


def line_token(text: str, name: str) -> str | None:
    match = re.search(rf"^{name}: (\S+)$", text, re.MULTILINE)
    return match.group(1) if match else None


def answer_hash(text: str) -> str:
    match = ANSWER_HASH.search(text)
    return match.group("hash") if match else ""


# --- clients ---------------------------------------------------------------------------------


async def recall_client(run: Run, mcp: Mcp, rng: random.Random) -> None:
    def is_json(text: str) -> str | None:
        try:
            return None if isinstance(json.loads(text)["hits"], list) else "no hits list"
        except (ValueError, KeyError, TypeError):
            return f"not the JSON hits answer: {text[:200]}"

    while run.running():
        arguments: dict[str, Any] = {"query": rng.choice(run.corpus.queries), "top_k": rng.choice((5, 8, 10))}
        as_json = rng.random() < 0.5
        if as_json:
            arguments["format"] = "json"
        outcome = await mcp.call("recall", "ragdown_recall", arguments, is_json if as_json else None)
        if outcome.kind == "overloaded":
            await asyncio.sleep(RETRY_AFTER_S)


async def context_client(run: Run, mcp: Mcp, rng: random.Random, name: str) -> None:
    def is_block(text: str) -> str | None:
        return (
            None if not text or text.startswith("<ragdown-context") else f"not a context block: {text[:200]}"
        )

    session, left = 0, 0
    while run.running():
        if left == 0:
            session, left = session + 1, rng.randint(5, 20)
        left -= 1
        arguments = {
            "prompt": rng.choice(run.corpus.queries),
            "session_id": f"{name}-{session}",
            "reset": rng.random() < 0.1,
        }
        outcome = await mcp.call("context", "ragdown_context", arguments, is_block)
        if outcome.kind == "overloaded":
            await asyncio.sleep(RETRY_AFTER_S)


async def read_client(run: Run, mcp: Mcp, rng: random.Random) -> None:
    paths = sorted(run.corpus.lines)
    while run.running():
        path = rng.choice(paths)
        lines = run.corpus.lines[path]
        arguments: dict[str, Any] = {"path": path}
        start, end = 1, len(lines)
        if rng.random() < 0.5 and len(lines) > 1:
            start = rng.randint(1, len(lines))
            end = rng.randint(start, min(len(lines), start + 80))
            arguments |= {"start_line": start, "end_line": end}

        def same_as_disk(text: str, path: str = path, start: int = start, end: int = end) -> str | None:
            header, _, body = text.partition("\n")
            match = READ_HEADER.match(header)
            if not match or match["path"] != path or (int(match["start"]), int(match["end"])) != (start, end):
                return f"unexpected header for {path}:{start}-{end}: {header[:200]}"
            if body.split("\n") != run.corpus.lines[path][start - 1 : end]:
                return f"{path}:{start}-{end} differs from the file on disk"
            return None

        outcome = await mcp.call("read_doc", "ragdown_read_doc", arguments, same_as_disk)
        if outcome.kind == "overloaded":
            await asyncio.sleep(RETRY_AFTER_S)


class Writer:
    """Creates, replaces, appends and edits scratch documents, retrying "changed" as an agent would."""

    def __init__(self, number: int, run: Run, mcp: Mcp, rng: random.Random) -> None:
        self.number = number
        self.run = run
        self.mcp = mcp
        self.rng = rng
        self.count = 0

    def token(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.number}n{self.count}"

    async def loop(self) -> None:
        kinds, weights = list(WRITES), list(WRITES.values())
        while self.run.running():
            kind = self.rng.choices(kinds, weights)[0]
            if kind == "create" and len(self.run.files.all) >= MAX_FILES:
                kind = "append"
            await getattr(self, kind)()

    def pick(self) -> str:
        files = self.run.files
        return self.rng.choice(files.shared if self.rng.random() < 0.5 else files.all)

    async def create(self, path: str | None = None, shared: bool = False) -> str | None:
        if path is None:
            self.count += 1
            path = f"{SCRATCH}/w{self.number}-{self.count}.md"
        record = WriteRecord(path, "create", "")
        arguments = {"path": path, "text": new_document(path)}
        if await self.attempt(record, "write_create", "ragdown_write", arguments):
            self.run.files.add(path, shared)
            return path
        return None

    async def append(self) -> None:
        files = self.run.files
        roomy = [p for p in files.all if files.appends[p] < APPEND_CAP][-SHARED:]
        path = self.rng.choice(roomy) if roomy else await self.create()
        if path is None:
            return
        record = WriteRecord(path, "append", self.token("apd"))
        arguments: dict[str, Any] = {"path": path, "text": f"append {record.token}", "append": True}
        if self.rng.random() < 0.5:
            arguments["heading"] = "Log"  # the last section: the same place, through the heading path
        files.appends[path] += 1
        if not await self.attempt(record, "write_append", "ragdown_write", arguments):
            files.appends[path] -= 1

    async def replace(self) -> None:
        await self.read_then_write("replace", "rpl", "write_replace")

    async def edit(self) -> None:
        await self.read_then_write("edit", "edt", "edit")

    async def read_then_write(self, kind: str, prefix: str, op: str) -> None:
        """A fresh read, the write made from it with its hash as `base_hash`; again on "changed"."""
        path = self.pick()
        record = WriteRecord(path, kind, self.token(prefix))

        def has_line(text: str) -> str | None:
            header, _, body = text.partition("\n")
            if READ_HEADER.match(header) and line_token(body, kind):
                return None
            return f"no {kind} line in {path}: {text[:200]}"

        while True:
            read = await self.mcp.call("writer_read", "ragdown_read_doc", {"path": path}, has_line)
            if read.kind == "overloaded":
                await asyncio.sleep(RETRY_AFTER_S)
                continue
            if not read.ok:
                if record.attempts:
                    record.status = "refused"  # its last try was refused as changed
                return
            header, _, text = read.text.partition("\n")
            base_hash = READ_HEADER.match(header)["hash"]  # type: ignore[index]  # has_line saw it
            previous = line_token(text, kind) or ""
            record.prev = previous
            if kind == "replace":
                new_text = text.replace(f"replace: {previous}\n", f"replace: {record.token}\n", 1)
                arguments: dict[str, Any] = {"path": path, "text": new_text, "base_hash": base_hash}
                tool = "ragdown_write"
            else:
                edits = [{"old_text": f"edit: {previous}\n", "new_text": f"edit: {record.token}\n"}]
                arguments = {"path": path, "edits": edits, "base_hash": base_hash}
                tool = "ragdown_edit"
            if await self.once(record, op, tool, arguments) is not None:
                return
            # None: refused as changed (or overloaded): read again and make the write anew

    async def attempt(self, record: WriteRecord, op: str, tool: str, arguments: dict[str, Any]) -> bool:
        """The same write until it is answered with something other than "changed"."""
        while True:
            outcome = await self.once(record, op, tool, arguments)
            if outcome is not None:
                return outcome.ok

    async def once(
        self, record: WriteRecord, op: str, tool: str, arguments: dict[str, Any]
    ) -> Outcome | None:
        """One try; None when it should be tried again. The ledger gets the final word."""
        if record.attempts == 0:
            self.run.ledger.append(record)
        record.attempts += 1
        outcome = await self.mcp.call(op, tool, arguments)
        if outcome.ok:
            record.status, record.hash = "acknowledged", answer_hash(outcome.text)
            return outcome
        if outcome.kind == "overloaded":
            await asyncio.sleep(RETRY_AFTER_S)
            return None
        if outcome.kind == "changed" and record.attempts < MAX_ATTEMPTS:
            await asyncio.sleep(self.rng.uniform(0, 0.05))  # so two writers do not collide in step
            return None
        record.status = "uncertain" if outcome.uncertain else "refused"
        return outcome


# --- the checks after the run ----------------------------------------------------------------


def check_ledger(folder: Path, ledger: list[WriteRecord]) -> tuple[list[str], dict[str, int]]:
    """Problems found comparing the acknowledged writes with the files on disk, and the counts checked."""
    problems: list[str] = []
    counts: Counter[str] = Counter()
    by_path: dict[str, list[WriteRecord]] = {}
    for record in ledger:
        by_path.setdefault(record.path, []).append(record)
    for path, records in sorted(by_path.items()):
        created = any(r.kind == "create" and r.status == "acknowledged" for r in records)
        full = folder / path
        if not full.is_file():
            if created:
                problems.append(f"{path}: acknowledged create, but the file is not on disk")
            continue
        data = full.read_bytes()
        text = data.decode("utf-8", errors="replace")
        counts["files"] += 1
        uncertain = {r.token for r in records if r.status == "uncertain"}
        for kind, root in zip(("replace", "edit"), root_tokens(path), strict=True):
            on_disk = line_token(text, kind)
            acknowledged = [r for r in records if r.kind == kind and r.status == "acknowledged"]
            counts[f"{kind}s"] += len(acknowledged)
            previous = {r.token: r.prev for r in records if r.kind == kind and r.status != "refused"}
            chain: set[str] = set()
            token = on_disk
            while token in previous and token not in chain:
                chain.add(token)
                token = previous[token]
            if token != root:
                problems.append(f"{path}: its {kind} line ({on_disk}) does not lead back to the created one")
            lost = [r.token for r in acknowledged if r.token not in chain]
            if lost:
                problems.append(
                    f"{path}: {len(lost)} acknowledged {kind}(s) lost (not on the chain ending at "
                    f"{on_disk}): {', '.join(lost[:5])}"
                )
        for record in records:
            if record.kind == "append" and record.status == "acknowledged":
                counts["appends"] += 1
                found = len(re.findall(rf"\b{record.token}\b", text))
                if found != 1:
                    problems.append(f"{path}: acknowledged append {record.token} is on disk {found} times")
            if (
                record.kind != "create"
                and record.status == "refused"
                and re.search(rf"\b{record.token}\b", text)
            ):
                problems.append(f"{path}: refused {record.kind} {record.token} is on disk")
        answered = {r.hash for r in records if r.status == "acknowledged"}
        if not uncertain and short_hash(data) not in answered:
            problems.append(f"{path}: its bytes (hash {short_hash(data)}) are no acknowledged write's")
    return problems, dict(counts)


async def check_index(mcp: Mcp, folder: Path) -> tuple[list[str], dict[str, Any]]:
    """Problems found comparing what the server's index says with the disk, and what it said."""
    problems: list[str] = []
    deadline = time.monotonic() + 120
    while True:  # a sync the watcher started after the last write may still be running
        outcome = await mcp.call("final", "ragdown_stats", {"include_files": True})
        if not outcome.ok:
            return [f"ragdown_stats failed: {outcome.kind}: {outcome.text[:300]}"], {}
        stats = json.loads(outcome.text)
        if not stats["syncing"] or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    disk = markdown_files(folder)
    indexed = {entry["path"] for entry in stats["file_list"]}
    if stats["files"] != len(disk):
        problems.append(f"ragdown_stats counts {stats['files']} files, the disk holds {len(disk)}")
    if indexed != disk:
        problems.append(
            f"index and disk differ: missing {sorted(disk - indexed)[:5]}, extra {sorted(indexed - disk)[:5]}"
        )
    listed = await mcp.call("final", "ragdown_list", {"limit": 1000})
    match = re.match(r"documents: (?:\d+ of )?(\d+)", listed.text)
    listed_count = int(match.group(1)) if listed.ok and match else -1
    if listed_count != len(disk):
        problems.append(f"ragdown_list counts {listed_count} documents, the disk holds {len(disk)}")
    stale = 0
    searched = 0
    for path in sorted(p for p in disk if p.startswith(f"{SCRATCH}/")):
        text = (folder / path).read_text(encoding="utf-8", errors="replace")
        appended = re.findall(r"^append (\S+)$", text, re.MULTILINE)
        tokens = [t for t in (line_token(text, "replace"), line_token(text, "edit")) if t] + appended[-1:]
        for token in tokens:
            searched += 1
            arguments = {"query": token, "path_prefix": SCRATCH, "top_k": 5, "format": "json"}
            found = await mcp.call("final", "ragdown_recall", arguments)
            hits = json.loads(found.text)["hits"] if found.ok else []
            if not any(h["path"] == path and token in h["text"] for h in hits):
                stale += 1
                if stale <= 5:
                    problems.append(f"a search for {token} does not find it in {path}: the index is stale")
    if stale > 5:
        problems.append(f"… {stale} stale tokens in all")
    seen = {"stats_files": stats["files"], "list_count": listed_count, "disk_files": len(disk)}
    return problems, seen | {"tokens_searched": searched, "tokens_stale": stale}


# --- the run ---------------------------------------------------------------------------------


@dataclass
class Config:
    duration: float = 300.0
    clients: int = 8
    writers: int | None = None  # a quarter of the clients (at least one) when not given
    embedder: str = "minilm"
    corpus: str = "rust-book"
    seed: int = 7
    progress: bool = True  # a line on stderr every 30 s

    def roles(self) -> list[str]:
        writers = self.writers if self.writers is not None else max(1, self.clients // 4)
        readers = ("recall", "context", "read_doc")
        return ["writer"] * writers + [readers[i % 3] for i in range(self.clients - writers)]


def say(config: Config, message: str) -> None:
    if config.progress:
        print(message, file=sys.stderr, flush=True)


def load_corpus(folder: Path, seed: int) -> Corpus:
    lines = {
        path: doc_lines((folder / path).read_text(encoding="utf-8", errors="surrogateescape"))
        for path in markdown_files(folder)
    }
    return Corpus(headings(folder, seed), lines)


async def soak(config: Config, server: Server, folder: Path, corpus: Corpus) -> dict[str, Any]:
    url = f"{server.url}/mcp/{FOLDER}"
    pid = server.process.pid
    setup = Mcp(url, Recorder())
    protocol = await setup.initialize()
    run = Run(corpus)
    rng = random.Random(config.seed)
    for _ in range(3):  # warm-up: the first searches load and compile what later ones reuse
        await setup.call("warm", "ragdown_recall", {"query": rng.choice(corpus.queries)})
        await setup.call("warm", "ragdown_context", {"prompt": rng.choice(corpus.queries)})
        await setup.call("warm", "ragdown_read_doc", {"path": rng.choice(sorted(corpus.lines))})
    founder = Writer(0, run, setup, rng)
    for n in range(SHARED):
        await founder.create(f"{SCRATCH}/shared-{n}.md", shared=True)
    warm_errors = {op: dict(s.errors) for op, s in setup.recorder.ops.items() if s.errors}
    if warm_errors:
        raise RuntimeError(f"warm-up and setup failed: {warm_errors}: {setup.recorder.samples}")

    recorder = Recorder()
    roles = config.roles()
    clients = [Mcp(url, recorder) for _ in roles]
    memory_start = proc_memory_mb(pid)
    cpu_start, client_start = cpu_seconds(pid), time.process_time()
    began = time.monotonic()
    run.deadline = began + config.duration
    tasks = []
    writers = 0
    for i, (role, mcp) in enumerate(zip(roles, clients, strict=True)):
        client_rng = random.Random(config.seed * 1000 + i)
        if role == "writer":
            writers += 1
            tasks.append(Writer(writers, run, mcp, client_rng).loop())
        elif role == "recall":
            tasks.append(recall_client(run, mcp, client_rng))
        elif role == "context":
            tasks.append(context_client(run, mcp, client_rng, f"c{i}"))
        else:
            tasks.append(read_client(run, mcp, client_rng))

    peak = memory_start["VmRSS"]
    series: list[tuple[int, float]] = [(0, round(peak, 1))]

    async def watch() -> None:
        nonlocal peak
        next_line = 30.0
        while run.running():
            await asyncio.sleep(1)
            if server.process.poll() is not None:
                run.stopped = True  # nothing left to soak; the report says the server died
                return
            elapsed = time.monotonic() - began
            rss = proc_memory_mb(pid)["VmRSS"]
            peak = max(peak, rss)
            if elapsed >= len(series) * 10:
                series.append((round(elapsed), round(rss, 1)))
            if elapsed >= next_line:
                next_line += 30
                calls = sum(s.calls for s in recorder.ops.values())
                acked = sum(r.status == "acknowledged" for r in run.ledger)
                say(config, f"{elapsed:5.0f} s: {calls} calls, {acked} writes acknowledged, RSS {rss:.0f} MB")

    await asyncio.gather(watch(), *tasks)
    elapsed = time.monotonic() - began
    alive = server.process.poll() is None
    memory_end = proc_memory_mb(pid) if alive else {}
    server_cpu = cpu_seconds(pid) - cpu_start if alive else None
    client_cpu = time.process_time() - client_start
    for mcp in clients:
        await mcp.close()

    ledger_problems, ledger_counts = check_ledger(folder, run.ledger)
    if alive:
        index_problems, index_seen = await check_index(setup, folder)
    else:
        index_problems, index_seen = [f"the server died (exit {server.process.returncode})"], {}
    alive = alive and server.process.poll() is None
    await setup.close()

    writes: dict[str, Counter[str]] = {}
    for record in run.ledger:
        writes.setdefault(record.kind, Counter())[record.status] += 1
    operations = {}
    for op, stats in recorder.ops.items():
        latencies = stats.latencies_ms
        operations[op] = {
            "calls": stats.calls,
            "ok": stats.ok,
            "ok_per_s": round(stats.ok / elapsed, 2),
            "p50_ms": round(percentile(latencies, 0.5), 1) if latencies else None,
            "p95_ms": round(percentile(latencies, 0.95), 1) if latencies else None,
            "p99_ms": round(percentile(latencies, 0.99), 1) if latencies else None,
            "errors": dict(stats.errors),
        }
    unexpected: Counter[str] = Counter()
    for op, stats in recorder.ops.items():
        for kind, n in stats.errors.items():
            if kind not in EXPECTED:
                unexpected[f"{op}: {kind}"] += n
    return {
        "protocol": protocol,
        "roles": dict(Counter(roles)),
        "elapsed_s": round(elapsed, 1),
        "calls": sum(s.calls for s in recorder.ops.values()),
        "ok_per_s": round(sum(s.ok for s in recorder.ops.values()) / elapsed, 2),
        "operations": operations,
        "unexpected_errors": dict(unexpected),
        "error_samples": recorder.samples,
        "writes": {kind: dict(c) for kind, c in writes.items()},
        "write_attempts": sum(r.attempts for r in run.ledger),
        "scratch_files": len(run.files.all),
        "server_alive": alive,
        "rss_mb": {
            "after_warmup": round(memory_start["VmRSS"], 1),
            "end": round(memory_end["VmRSS"], 1) if memory_end else None,
            "peak_during_run": round(peak, 1),
            "hwm_lifetime": round(memory_end["VmHWM"], 1) if memory_end else None,
            "every_10_s": series,
        },
        "cpu_cores": {
            "server": round(server_cpu / elapsed, 2) if server_cpu is not None else None,
            "client": round(client_cpu / elapsed, 2),
        },
        "consistency": {
            "ok": not ledger_problems and not index_problems,
            "checked": ledger_counts | index_seen,
            "problems": ledger_problems + index_problems,
        },
    }


def run_soak(config: Config) -> dict[str, Any]:
    """Build the folder, start the server, soak, check, stop; the report as JSON-ready data."""
    source = require(Path(config.corpus) if "/" in config.corpus else CORPORA / config.corpus)
    with tempfile.TemporaryDirectory(prefix="ragdown-soak-") as tmp:
        work = Path(tmp)
        docs = work / "docs"
        folder = docs / FOLDER
        shutil.copytree(source, folder, symlinks=False)
        (folder / ".ragdown.json").write_text(json.dumps({"title": "Soak", "mcp": True}), encoding="utf-8")
        corpus = load_corpus(folder, config.seed)
        load = os.getloadavg()
        server = Server(docs, work / "data", config.embedder, work, "soak", TOKEN)
        try:
            began = time.monotonic()
            status = server.wait(lambda s: not s["syncing"] and s["files"] > 0, "the first sync")
            say(
                config,
                f"serving {status['files']} files, {status['chunks']} chunks ({status['embedder']}) after "
                f"{time.monotonic() - began:.0f} s; soaking for {config.duration:g} s",
            )
            report = asyncio.run(soak(config, server, folder, corpus))
        except BaseException:
            print(server.tail(), file=sys.stderr)
            raise
        finally:
            server.stop()
        if report["error_samples"] or not report["server_alive"]:
            report["server_log_tail"] = server.tail(2000)
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "config": asdict(config),
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load]},
        "corpus": {"files": len(corpus.lines), "chunks": status["chunks"], "embedder": status["embedder"]},
        "queries": len(corpus.queries),
        **report,
    }


def failures(report: dict[str, Any]) -> list[str]:
    """Why the run failed: unexpected errors, failed checks, a dead server (empty when it passed)."""
    found = [f"{n} unexpected error(s): {kind}" for kind, n in report["unexpected_errors"].items()]
    found += report["consistency"]["problems"]
    if not report["server_alive"]:
        found.append("the server process is not alive at the end")
    return found


def table(report: dict[str, Any]) -> str:
    def cell(value: Any) -> str:
        return "—" if value is None else str(value)

    corpus = report["corpus"]
    lines = [
        f"Soak — {report['date']}, commit {report['commit']}: {report['config']['corpus']} "
        f"({corpus['files']} files, {corpus['chunks']} chunks, {corpus['embedder']}), "
        f"{report['elapsed_s']} s, clients {report['roles']}; {report['machine']['cpus']} CPUs, "
        f"load average at the start {report['machine']['load_average_at_start']}",
        "",
        "| operation | calls | ok | ok/s | p50 ms | p95 ms | p99 ms "
        "| changed | overloaded | other | HTTP | transport |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for op, row in report["operations"].items():
        errors = row["errors"]
        other = sum(n for k, n in errors.items() if k == "other" or k.startswith("jsonrpc"))
        http = sum(n for k, n in errors.items() if k.startswith("http"))
        transport = sum(n for k, n in errors.items() if k.startswith("transport"))
        lines.append(
            f"| `{op}` | {row['calls']} | {row['ok']} | {row['ok_per_s']} | {cell(row['p50_ms'])} | "
            f"{cell(row['p95_ms'])} | {cell(row['p99_ms'])} | {errors.get('changed', 0)} | "
            f"{errors.get('overloaded', 0)} | {other} | {http} | {transport} |"
        )
    rss, cpu, consistency = report["rss_mb"], report["cpu_cores"], report["consistency"]
    writes = ", ".join(f"{kind} {dict(sorted(c.items()))}" for kind, c in report["writes"].items())
    lines += [
        "",
        f"- throughput: {report['ok_per_s']} successful calls/s ({report['calls']} calls)",
        f"- server RSS: {rss['after_warmup']} MB after warm-up, {cell(rss['end'])} MB at the end, "
        f"{rss['peak_during_run']} MB peak during the run "
        f"(VmHWM {cell(rss['hwm_lifetime'])} MB, indexing included)",
        f"- CPU (cores busy on average): server {cpu['server']}, client {cpu['client']}",
        f"- writes: {writes}; {report['write_attempts']} attempts; {report['scratch_files']} scratch files",
        f"- consistency: {'ok' if consistency['ok'] else 'FAILED'}; checked {consistency['checked']}",
        f"- server alive at the end: {'yes' if report['server_alive'] else 'NO'}",
    ]
    lines += [f"  - {problem}" for problem in consistency["problems"][:20]]
    if report["error_samples"]:
        lines += ["", "Unexpected errors (samples):", *(f"- {s}" for s in report["error_samples"][:10])]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of load (default 300)")
    parser.add_argument(
        "--clients", type=int, default=8, help="concurrent clients, writers included (default 8)"
    )
    parser.add_argument("--writers", type=int, help="how many of the clients write (default a quarter)")
    parser.add_argument("--embedder", default="minilm", help="minilm (default) or hash for quick runs")
    parser.add_argument(
        "--corpus", default="rust-book", help="a folder under shared/bench/corpora, or a path"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON ('-': stdout)")
    args = parser.parse_args()
    if args.writers is not None and not 0 <= args.writers <= args.clients:
        parser.error("--writers must be between 0 and --clients")
    config = Config(args.duration, args.clients, args.writers, args.embedder, args.corpus, args.seed)
    report = run_soak(config)
    print(table(report), file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json:
        text = json.dumps(report, indent=2)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")
    problems = failures(report)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
