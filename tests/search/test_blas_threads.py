"""Search's matrix-vector products run on one BLAS thread (docs/design.md#blas-threads)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COUNT_THREADS = "import numpy, os; print(len(os.listdir('/proc/self/task')))"


def run(code: str, env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return result.stdout.strip()


@pytest.mark.skipif(
    not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2,
    reason="counts a process's threads in /proc, on a machine with more than one CPU",
)
def test_importing_ragdown_first_leaves_numpy_a_single_blas_thread() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    alone = int(run(COUNT_THREADS, env))
    if alone == 1:
        pytest.skip("this numpy's BLAS starts no threads of its own")
    assert int(run(f"import ragdown; {COUNT_THREADS}", env)) == 1


def test_a_blas_thread_count_the_environment_sets_is_kept() -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    assert run("import os, ragdown; print(os.environ['OPENBLAS_NUM_THREADS'])", env) == "2"
