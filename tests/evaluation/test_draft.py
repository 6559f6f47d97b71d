"""`ragdown eval --draft-from-log` (docs/evaluation.md#a-draft-from-the-query-log): the distinct
questions of one folder gathered from the log, and a draft file that the golden parser accepts."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ragdown.engine import Engine
from ragdown.evaluation.draft import NOTE_HOOK, gather, line_id
from ragdown.evaluation.golden import Target, read_golden
from ragdown.folders.scope import Scope
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc, run_cli

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def search(query: str, ts: str, folder: str = "ops", kind: str = "recall") -> dict[str, Any]:
    return {"ts": ts, "kind": kind, "folder": folder, "query": query, "hits": []}


def hook(query: str, injected: list[Any]) -> dict[str, Any]:
    ts = "2026-12-02T14:00:00Z"
    return {"ts": ts, "kind": "context", "folder": "ops", "query": query, "injected": injected}


def test_gather_counts_normalised_queries_most_asked_then_most_recent() -> None:
    log = [
        search("Restore the dump", "2026-12-01T10:00:00Z"),
        search("rotate  the KEYS", "2026-12-01T11:00:00Z"),
        search("restore the   dump", "2026-12-02T10:00:00Z", folder="ops/db"),
        search("who is on call", "2026-12-02T12:00:00Z", kind="api"),
        search("elsewhere", "2026-12-02T12:00:00Z", folder="sales"),
        search("no folder", "2026-12-02T13:00:00Z", folder="", kind="cli"),
        hook("sha256:0011", []),
        hook("cat", []),
        hook("hit", [{}]),
        {"ts": "2026-12-02T15:00:00Z", "kind": "read", "path": "ops/a.md"},
    ]
    gathered = gather(log, "ops", since_days=None, now=NOW)
    assert [(a.query, a.count, a.searched) for a in gathered.asked] == [
        ("restore the dump", 2, True),  # the latest wording, whitespace folded
        ("cat", 1, False),
        ("no folder", 1, True),
        ("who is on call", 1, True),
        ("rotate the KEYS", 1, True),
    ]
    assert gathered.hashed == 1
    recent = gather(log, "ops", since_days=1, now=datetime(2026, 12, 3, 11, 0, tzinfo=UTC))
    assert [a.query for a in recent.asked] == ["cat", "no folder", "who is on call"]


def test_ids_are_readable_and_unique() -> None:
    taken = {"restore-the-dump"}
    assert line_id("Restore the dump?", taken) == "restore-the-dump-2"
    assert line_id("¿¿", taken) == "query"
    assert len(line_id("word " * 40, taken)) <= 48


DOCS = {
    "ops/postgres.md": "# Postgres\n\n## Restore\n\nRestore last night's dump with pg_restore from the "
    "backup bucket.\n\n## Vacuum\n\nVacuum runs nightly on every table.\n",
    "ops/keys.md": "# Keys\n\n## Rotation\n\nRotate the signing keys every ninety days with the vault CLI.\n",
}


@pytest.mark.slow
def test_a_draft_from_logged_searches_is_accepted_by_the_golden_parser(
    make_engine: Callable[..., Engine], write: WriteDoc, docs: Path, data_dir: Path, tmp_path: Path
) -> None:
    for path, text in DOCS.items():
        write(path, text)
    server = make_engine(settings=ServerSettings(query_log=True, query_log_prompts=True), folders_mode=True)
    server.sync()
    for query in ("restore last night's dump", "Restore  last night's DUMP", "rotate the signing keys"):
        server.recall(query, 5, None, scope=Scope("ops"))
    empty = server.context("zebra giraffe pelican", scope=Scope("ops"), session_id="s1")
    assert not empty.injected
    log = data_dir / "query-log.jsonl"
    out = tmp_path / "draft.jsonl"
    env = {**os.environ, "RAGDOWN_EMBEDDER": "hash"}
    env.pop("RAGDOWN_DATA_DIR", None)
    args = ["eval", str(docs / "ops"), "--draft-from-log", "--log", str(log)]
    args += ["--data-dir", str(tmp_path / "eval-data"), "--out", str(out)]
    done = run_cli(*args, env=env)
    assert done.returncode == 0, done.stderr
    assert "drafted 3 lines from 3 distinct questions" in done.stderr

    restore, prompt, rotate = read_golden(out)  # most asked, then most recent
    assert restore.query == "Restore last night's DUMP"  # asked twice: first
    assert restore.expected == (Target("postgres.md", "Restore"),)
    assert restore.candidates[0] == restore.expected[0]
    assert len(set(restore.candidates)) == len(restore.candidates) <= 5
    assert restore.draft
    assert not restore.unanswerable
    assert restore.source == f"query log {datetime.now(UTC).date().isoformat()}"
    assert rotate.expected == (Target("keys.md", "Rotation"),)
    assert prompt.query == "zebra giraffe pelican"
    assert prompt.unanswerable
    assert prompt.expected == ()
    assert prompt.note == NOTE_HOOK
    assert prompt.draft
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [
        "restore-last-night-s-dump",
        "zebra-giraffe-pelican",
        "rotate-the-signing-keys",
    ]

    # `ragdown eval` scores the draft as it stands (its proposals taken as answers), drafts counted.
    scored = run_cli("eval", str(docs / "ops"), str(out), "--data-dir", str(tmp_path / "eval-data"), env=env)
    assert scored.returncode == 0, scored.stderr
    assert "2 answerable, 1 unanswerable, 3 drafts" in scored.stdout + scored.stderr

    # An existing --out is kept unless --force; --limit cuts the draft.
    again = run_cli(*args, "--limit", "1", env=env)
    assert again.returncode == 2
    assert again.stderr.strip() == f"ragdown: {out} exists: pass --force to replace it, or name another --out"
    forced = run_cli(*args, "--limit", "1", "--force", env=env)
    assert forced.returncode == 0, forced.stderr
    assert [line.id for line in read_golden(out)] == ["restore-last-night-s-dump"]

    # Questions already in the folder's golden file are not drafted again.
    (docs / "ops" / ".ragdown-golden.jsonl").write_text(out.read_text(), encoding="utf-8")
    rest = run_cli(*args[:-2], env=env)
    assert rest.returncode == 0, rest.stderr
    assert [json.loads(line)["id"] for line in rest.stdout.splitlines()] == [
        "zebra-giraffe-pelican",
        "rotate-the-signing-keys",
    ]


def test_a_log_without_the_folder_is_one_line(tmp_path: Path, docs: Path) -> None:
    (docs / "ops").mkdir()
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(search("q", "2026-12-01T10:00:00Z", folder="sales")) + "\n")
    done = run_cli("eval", str(docs / "ops"), "--draft-from-log", "--log", str(log))
    assert done.returncode == 2
    assert done.stderr.startswith(f"ragdown: the query log ({log}) holds no searches of the folder ops")
    assert len(done.stderr.strip().splitlines()) == 1


def test_options_of_scoring_and_of_drafting_do_not_mix(docs: Path, tmp_path: Path) -> None:
    (docs / "ops").mkdir()
    drafting = run_cli("eval", str(docs / "ops"), "--draft-from-log", "--min-hit5", "0.5")
    assert drafting.returncode == 2
    assert drafting.stderr == "ragdown: --min-hit5 scores a golden set; --draft-from-log only drafts one\n"
    scoring = run_cli("eval", str(docs / "ops"), "--out", str(tmp_path / "x.jsonl"))
    assert scoring.returncode == 2
    assert scoring.stderr == "ragdown: --out goes with --draft-from-log; without it eval scores GOLDEN\n"
