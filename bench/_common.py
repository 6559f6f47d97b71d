"""Helpers shared by the benchmarks: where the shared data is, timing, memory, and a `ragdown serve`
process with the corpus's headings as queries."""

from __future__ import annotations

import os
import random
import re
import resource
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]


def _shared_bench() -> Path:
    """The shared data beside the repository; from a worktree (/work/wt/<name>) it sits one level higher."""
    for top in REPO.parents:
        if (top / "shared" / "bench").is_dir():
            return top / "shared" / "bench"
    return REPO.parent / "shared" / "bench"


SHARED_BENCH = _shared_bench()
CORPORA = SHARED_BENCH / "corpora"
HEADING = re.compile(r"^## +(.+?)\s*#*\s*$")


def require(path: Path) -> Path:
    if not path.exists():
        sys.exit(f"benchmark data not found: {path} (the shared/bench folder sits beside the repository)")
    return path


def peak_rss_mb() -> float:
    """Peak resident memory of this process, in MB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def commit() -> str:
    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    )
    return result.stdout.strip() or "unknown"


def code_commit(src: Path) -> str:
    """The ragdown code of checkout `src`: its HEAD, the last commit that changed its server/ (the code
    measured), and whether server/ has uncommitted changes."""

    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=src, capture_output=True, text=True, check=False)
        return out.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    server = git("log", "-1", "--format=%h", "--", "server")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "server")
    return f"{head} (server/ as of {server or '?'}{', with uncommitted changes' if dirty else ''})"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def median(values: list[float]) -> float:
    return statistics.median(values)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def headings(root: Path, seed: int) -> list[str]:
    """The `## ` headings of the Markdown under `root` (outside code fences, `{ #anchor }` dropped),
    deduplicated and shuffled with `seed`: real questions a reader of those documents might ask."""
    seen: dict[str, None] = {}
    for path in sorted(root.rglob("*.md")):
        in_code = False
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lstrip().startswith(("```", "~~~")):
                in_code = not in_code
            match = None if in_code else HEADING.match(line)
            if match:
                text = re.sub(r"\s*\{[^}]*\}\s*$", "", match.group(1)).strip()  # `{ #anchor }`
                if text:
                    seen.setdefault(text, None)
    queries = list(seen)
    random.Random(seed).shuffle(queries)
    return queries


class Server:
    """One `ragdown serve` process; its log goes to a file (a full pipe would block it)."""

    def __init__(
        self,
        docs: Path,
        data_dir: Path,
        embedder: str,
        work: Path,
        name: str,
        token: str,
        admin_token: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = work / f"{name}.log"
        env = {
            **os.environ,
            "RAGDOWN_DOCS_DIR": str(docs),
            "RAGDOWN_DATA_DIR": str(data_dir),
            "RAGDOWN_EMBEDDER": embedder,
            "RAGDOWN_TOKEN": token,
            **({"RAGDOWN_ADMIN_TOKEN": admin_token} if admin_token else {}),
            "PORT": str(self.port),
            "RAGDOWN_METRICS_PORT": str(free_port()),
            **(env or {}),
        }
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ragdown.cli", "serve"],
                env=env,
                cwd=work,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def status(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.url}/api/status", timeout=5).json())

    def wait(
        self, ready: Callable[[dict[str, Any]], bool], what: str, timeout: float = 1800
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}):\n{self.tail()}")
            try:
                status = self.status()
                if ready(status):
                    return status
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}:\n{self.tail()}")
            time.sleep(0.5)

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def paired_bootstrap(a: Any, b: Any, unit: str = "queries") -> str:
    """Per-query scores of configurations A and B (numpy arrays): the mean of each, B's gain with its
    95% bootstrap interval (2,000 resamples, seed 0), and on how many queries B wins or loses."""
    import numpy as np

    diff = b - a
    rng = np.random.default_rng(0)
    boots = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(2000)]
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return (
        f"A {a.mean():.4f}  B {b.mean():.4f}  diff {diff.mean():+.4f} (95% CI {lo:+.4f}..{hi:+.4f}); "
        f"B better on {(diff > 0).sum()} {unit}, worse on {(diff < 0).sum()}"
    )
