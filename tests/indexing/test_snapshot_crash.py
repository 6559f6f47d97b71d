"""A snapshot write cut short never shows (docs/design.md#search-snapshot): a real process writing
snapshots is killed at random points, and every open of the current snapshot, during the writes and
after each kill, finds a complete one (all of one version) or none."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ragdown.indexing.snapshot import read as snapshot_read
from ragdown.indexing.snapshot.read import open_current

pytestmark = pytest.mark.slow

ROWS, DIM = 6000, 384
WRITER = f"""
import sys, numpy as np, pyarrow as pa
from pathlib import Path
from ragdown.indexing.lexicon import Lexicon
from ragdown.indexing.meta import current_meta
from ragdown.indexing.snapshot.write import write_snapshot

data = Path(sys.argv[1])
meta = current_meta("hash-{DIM}", {DIM})
for version in range(int(sys.argv[2]), 10**6):
    ids = [f"doc{{version}}-{{i}}" for i in range({ROWS})]
    rows = pa.table({{"id": ids, "path": [f"v{{version}}.md"] * {ROWS}, "chunk_index": list(range({ROWS}))}})
    vectors = np.full(({ROWS}, {DIM}), version, dtype=np.float32)
    lexicon = Lexicon.build([f"word{{version}} row{{i}}" for i in range({ROWS})])
    write_snapshot(data, meta, version, rows, vectors, lexicon, keep_for_s=0.0)
    print(version, flush=True)
"""


def check(data_dir: Path) -> int | None:
    """The version of the current snapshot, asserting it is whole and of one version."""
    snapshot_read._OPENED.clear()
    opened = open_current(data_dir)
    if opened is None:
        return None
    version = opened.version
    assert opened.rows.num_rows == ROWS
    assert set(opened.rows.column("path").to_pylist()) == {f"v{version}.md"}
    assert np.all(np.asarray(opened.vectors) == version)
    positions, _ = opened.lexicon.top(f"word{version}", 3)
    assert positions.size == 3
    return version


def test_a_killed_writer_leaves_a_whole_snapshot_or_the_previous_one(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    rng = random.Random(7)
    seen: set[int] = set()
    caught = 0  # kills that left a write's temporary directory: cut short mid-write
    start = 1
    rounds = 0
    while rounds < 6 or (caught == 0 and rounds < 30):  # until a kill has landed mid-write
        rounds += 1
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(data_dir), str(start)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        first = writer.stdout.readline()  # one write done: the kill below lands in a later one
        deadline = time.monotonic() + rng.uniform(0.05, 1.5)
        while time.monotonic() < deadline:  # a reader meanwhile: never a part of a snapshot
            found = check(data_dir)
            if found is not None:
                seen.add(found)
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate()
        finished = [int(line) for line in (first + out).split()]
        found = check(data_dir)
        caught += any(e.name.startswith(".tmp-") for e in (data_dir / "snapshot").iterdir())
        # The newest finished write, or one the kill caught after its rename and before its print.
        assert found is not None
        assert found >= finished[-1]
        seen.add(found)
        start = (found or start) + 1
    assert len(seen) >= 2  # the reader saw the snapshot change under it
    assert caught >= 1
