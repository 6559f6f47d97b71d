"""The soak of bench/soak.py at CI size: 100 s of readers and writers against a real `ragdown serve`
process with the hash embedder, then the same checks as the benchmark. Timings are never asserted:
the machine is shared and the numbers belong to docs/reliability.md. A quick test first checks the
checker itself on a ledger made by hand."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
DURATION_S = 100


def bench_soak() -> ModuleType:
    """bench/soak.py itself (bench/ is a folder of scripts, not a package)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("soak")


@pytest.mark.parametrize(
    ("scenario", "problem"),
    [
        ("clean", None),
        ("a second replace from the same version", "1 acknowledged replace(s) lost"),
        ("an acknowledged append missing", "acknowledged append apd2n9 is on disk 0 times"),
        ("an append twice", "acknowledged append apd1n3 is on disk 2 times"),
        ("a refused edit on disk", "refused edit edt1n1 is on disk"),
        ("bytes no write answered with", "are no acknowledged write's"),
    ],
)
def test_the_ledger_check_finds_lost_duplicated_and_refused_writes(
    tmp_path: Path, scenario: str, problem: str | None
) -> None:
    soak = bench_soak()
    record = soak.WriteRecord
    path = "scratch/soak.md"
    created = soak.new_document(path)
    text = created.replace("rplsoakroot", "rpl1n2").replace("edtsoakroot", "edt1n1") + "\nappend apd1n3\n"
    ledger = [
        record(path, "create", "", status="acknowledged", hash=soak.short_hash(created.encode())),
        record(path, "edit", "edt1n1", "edtsoakroot", "acknowledged", "a" * 12),
        record(path, "replace", "rpl1n2", "rplsoakroot", "acknowledged", "b" * 12),
        record(path, "append", "apd1n3", "", "acknowledged", soak.short_hash(text.encode())),
    ]
    if scenario == "a second replace from the same version":
        ledger.append(record(path, "replace", "rpl2n8", "rplsoakroot", "acknowledged", "c" * 12))
    elif scenario == "an acknowledged append missing":
        ledger.append(record(path, "append", "apd2n9", "", "acknowledged", "d" * 12))
    elif scenario == "an append twice":
        text += "\nappend apd1n3\n"
        ledger[-1].hash = soak.short_hash(text.encode())
    elif scenario == "a refused edit on disk":
        ledger[1].status = "refused"
    elif scenario == "bytes no write answered with":
        ledger[-1].hash = "e" * 12
    (tmp_path / "scratch").mkdir()
    (tmp_path / path).write_text(text, encoding="utf-8")

    problems, counts = soak.check_ledger(tmp_path, ledger)

    if problem is None:
        assert problems == []
        assert counts == {"files": 1, "replaces": 1, "edits": 1, "appends": 1}
    else:
        assert any(problem in p for p in problems), problems


@pytest.mark.slow
@pytest.mark.timeout(DURATION_S + 400)  # indexing, the checks, and a slow shared machine
def test_a_soak_loses_no_acknowledged_write_and_keeps_the_index_equal_to_the_disk() -> None:
    soak = bench_soak()
    corpus = soak.CORPORA / "rust-book"
    if not corpus.is_dir():
        pytest.skip(f"the shared benchmark data is not beside the repository ({corpus})")
    # Half the clients write (the benchmark's default is a quarter), so that writes collide often
    # enough in 100 s for a lost update to show.
    config = soak.Config(duration=DURATION_S, clients=8, writers=4, embedder="hash", progress=False)
    report = soak.run_soak(config)
    summary = soak.table(report)

    # Only "changed" (a stale base_hash, re-read and retried) and "overloaded" may be refused.
    assert report["unexpected_errors"] == {}, summary
    assert report["consistency"]["ok"], summary
    assert report["server_alive"], summary
    assert soak.failures(report) == []
    # The soak did what it says: every operation succeeded, and every kind of write was checked.
    assert all(row["ok"] > 0 for row in report["operations"].values()), summary
    checked = report["consistency"]["checked"]
    assert min(checked["replaces"], checked["edits"], checked["appends"]) > 0, summary
    assert checked["stats_files"] == checked["list_count"] == checked["disk_files"], summary
