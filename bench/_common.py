"""Helpers shared by the benchmarks: where the shared data is, timing, memory."""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_BENCH = REPO.parent / "shared" / "bench"
CORPORA = SHARED_BENCH / "corpora"


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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def median(values: list[float]) -> float:
    return statistics.median(values)
