"""The `ragdown` command: the JSON forms outside checks rely on, and one-line refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragdown.cli import main
from tests.conftest import WriteDoc, run_cli

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # `ragdown` processes
def test_index_then_search_as_real_processes(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("ops/cache.md", "# Cache\n## Redis eviction\nRedis evicts keys by maxmemory-policy.")
    write("notes/food.md", "---\ntags: [cooking]\n---\n# Pancakes\nFlour, eggs, milk.")
    indexed = run_cli("index", str(docs), "--data-dir", str(data_dir), "--embedder", "hash")
    assert indexed.returncode == 0, indexed.stderr
    report = json.loads(indexed.stdout)
    assert list(report) == ["added", "updated", "removed", "unchanged", "chunks", "reused", "ms", "failed"]
    assert (report["added"], report["chunks"], report["failed"]) == (2, 2, [])

    found = run_cli("search", str(docs), "redis eviction", "--data-dir", str(data_dir), "--top-k", "1")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert len(hits) == 1
    assert list(hits[0]) == [
        "path",
        "title",
        "heading",
        "line_start",
        "line_end",
        "similarity",
        "score",
        "sources",
        "text",
    ]
    assert hits[0]["path"] == "ops/cache.md"
    assert hits[0]["heading"] == "Cache › Redis eviction"
    assert (hits[0]["line_start"], hits[0]["line_end"]) == (3, 3)


def test_search_indexes_a_folder_that_has_no_index(
    docs: Path, data_dir: Path, write: WriteDoc, capsys: pytest.CaptureFixture[str]
) -> None:
    write("a.md", "# Kestrel\nKestrel ingest pipeline")
    assert main(["search", str(docs), "kestrel", "--data-dir", str(data_dir), "--embedder", "hash"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"][0]["path"] == "a.md"


def test_search_filters_by_prefix_and_tag(
    docs: Path, data_dir: Path, write: WriteDoc, capsys: pytest.CaptureFixture[str]
) -> None:
    write("ops/a.md", "---\ntags: [ops/db]\n---\nshared words here")
    write("dev/b.md", "shared words here too")
    base = ["search", str(docs), "shared words", "--data-dir", str(data_dir), "--embedder", "hash"]
    assert main([*base, "--path-prefix", "dev/"]) == 0
    assert [h["path"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["dev/b.md"]
    assert main([*base, "--tag", "ops"]) == 0
    assert [h["path"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["ops/a.md"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["index", "{missing}"], "does not exist"),
        (["index", "{file}"], "is a file, not a folder"),
        (["index", "{docs}", "--embedder", "nope"], "nope"),
        (["search", "{docs}", "x", "--top-k", "0"], "--top-k must be between 1 and 100"),
        (["search", "{docs}", "   "], "the query is empty"),
        (["search", "{docs}", "x", "--tag", "a b", "--embedder", "hash"], "not a valid tag"),
    ],
)
def test_refusals_are_one_line_and_exit_non_zero(
    docs: Path,
    data_dir: Path,
    tmp_path: Path,
    write: WriteDoc,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    file = write("a.md", "alpha")
    values = {"missing": str(tmp_path / "missing"), "file": str(file), "docs": str(docs)}
    code = main([a.format(**values) for a in args] + ["--data-dir", str(data_dir)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("ragdown: ")
    assert message in err
    assert err.count("\n") == 1


def test_an_invalid_environment_setting_is_refused(
    docs: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAGDOWN_THREADS", "zero")
    assert main(["index", str(docs), "--data-dir", str(data_dir), "--embedder", "hash"]) == 2
    # In plain words, not the settings library's.
    assert "RAGDOWN_THREADS must be a whole number, got 'zero'" in capsys.readouterr().err


@pytest.mark.slow  # builds the real MiniLM
def test_another_embedder_says_it_rebuilds_and_does(
    docs: Path, data_dir: Path, write: WriteDoc, capsys: pytest.CaptureFixture[str]
) -> None:
    write("a.md", "alpha beta")
    assert main(["index", str(docs), "--data-dir", str(data_dir), "--embedder", "hash"]) == 0
    capsys.readouterr()
    assert main(["index", str(docs), "--data-dir", str(data_dir), "--embedder", "minilm"]) == 0
    captured = capsys.readouterr()
    assert "the index was built with hash, not minilm; rebuilding the index" in captured.err
    assert json.loads(captured.out)["added"] == 1
    meta = json.loads((data_dir / "meta.json").read_text())
    assert meta["source"] == "minilm"
    assert meta["embedder"].startswith("all-MiniLM-L6-v2")


def test_search_uses_the_embedder_the_index_was_built_with(
    docs: Path, data_dir: Path, write: WriteDoc, capsys: pytest.CaptureFixture[str]
) -> None:
    write("a.md", "alpha beta")
    assert main(["index", str(docs), "--data-dir", str(data_dir), "--embedder", "hash"]) == 0
    capsys.readouterr()
    assert main(["search", str(docs), "alpha", "--data-dir", str(data_dir)]) == 0
    captured = capsys.readouterr()
    assert "rebuilding" not in captured.err
    assert json.loads((data_dir / "meta.json").read_text())["embedder"] == "hash-384"


def test_full_reindexes_everything(
    docs: Path, data_dir: Path, write: WriteDoc, capsys: pytest.CaptureFixture[str]
) -> None:
    write("a.md", "alpha")
    base = ["index", str(docs), "--data-dir", str(data_dir), "--embedder", "hash"]
    assert main(base) == 0
    assert main(base) == 0
    assert main([*base, "--full"]) == 0
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["added"], r["unchanged"]) for r in reports] == [(1, 0), (0, 1), (1, 0)]


@pytest.mark.slow  # indexes the examples with the real MiniLM (the default), building it first
def test_the_bundled_examples_answer_a_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "search",
            str(REPO / "examples/notes"),
            "how do I restore a database backup",
            "--data-dir",
            str(tmp_path / "data"),
            "--top-k",
            "3",
        ]
    )
    assert code == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits[0]["path"] == "ops/postgres-backups.md"
    assert hits[0]["heading"] == "Postgres backups › Restore"


@pytest.mark.slow  # `ragdown` processes
def test_batch_search_answers_each_line_like_a_single_search(
    docs: Path, data_dir: Path, tmp_path: Path, write: WriteDoc
) -> None:
    write("ops/cache.md", "# Cache\n## Redis eviction\nRedis evicts keys by maxmemory-policy.")
    write("ops/backups.md", "# Backups\n## Restore\nRun pg_restore into a fresh database.")
    write("notes/food.md", "# Pancakes\nFlour, eggs, milk.")
    queries = tmp_path / "queries.jsonl"
    lines = [
        {"id": "q1", "query": "redis eviction"},
        {"id": 2, "query": "restore a database"},
        {"id": "q3", "query": "pancake recipe"},
    ]
    queries.write_text("\n".join(json.dumps(q) for q in lines) + "\n\n", encoding="utf-8")
    common = ["--data-dir", str(data_dir), "--embedder", "hash", "--top-k", "2"]
    batch = run_cli("search", str(docs), "--queries", str(queries), *common)
    assert batch.returncode == 0, batch.stderr
    answers = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [a["id"] for a in answers] == ["q1", 2, "q3"]
    assert [list(a) for a in answers] == [["id", "hits"]] * 3
    assert [a["hits"][0]["path"] for a in answers] == ["ops/cache.md", "ops/backups.md", "notes/food.md"]
    single = run_cli("search", str(docs), "restore a database", *common)
    assert json.loads(single.stdout)["hits"] == answers[1]["hits"]


@pytest.mark.slow  # a `ragdown` process
def test_batch_search_reads_stdin(docs: Path, data_dir: Path, write: WriteDoc) -> None:
    write("a.md", "# Kestrel\nKestrel ingest pipeline")
    result = run_cli(
        *("search", str(docs), "--queries", "-", "--data-dir", str(data_dir), "--embedder", "hash"),
        input='{"id": "x", "query": "kestrel ingest"}\n',
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hits"][0]["path"] == "a.md"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": 1, "query": "ok"}\nnot json\n', "line 2 is not JSON"),
        ('{"query": "no id"}\n', 'line 1 must be an object with "id"'),
        ('{"id": 1, "query": 5}\n', 'a string "query"'),
        ('["id", "query"]\n', "must be an object"),
        ('{"id": 1, "query": "  "}\n', "line 1 has an empty query"),
    ],
)
def test_batch_search_refuses_a_bad_queries_file_before_loading_anything(
    docs: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(content, encoding="utf-8")
    assert main(["search", str(docs), "--queries", str(queries), "--data-dir", str(data_dir)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert not data_dir.exists()  # refused before the index was opened


def test_search_wants_a_query_or_a_queries_file_not_both(
    docs: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", str(docs), "--data-dir", str(data_dir)]) == 2
    assert "either a QUERY or --queries FILE" in capsys.readouterr().err
    assert (
        main(["search", str(docs), "x", "--queries", str(tmp_path / "q"), "--data-dir", str(data_dir)]) == 2
    )
    assert "not both" in capsys.readouterr().err
    assert main(["search", str(docs), "--queries", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read the queries file" in capsys.readouterr().err


def test_tail_log_prints_the_log_and_stops_on_sigterm(tmp_path: Path) -> None:
    import signal
    import time

    log = tmp_path / "query-log.jsonl"
    log.write_text('{"kind": "read", "path": "a.md"}\n', encoding="utf-8")
    with subprocess.Popen(
        [sys.executable, "-m", "ragdown.cli", "tail-log", "--file", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:  # its pipes closed on the way out
        try:
            with log.open("a", encoding="utf-8") as handle:
                handle.write('{"kind": "read", "path": "b.md"}\n')
            deadline = time.monotonic() + 60
            seen = ""
            while seen.count("\n") < 2:
                assert time.monotonic() < deadline, seen
                assert process.stdout is not None
                seen += process.stdout.readline()
            assert seen.splitlines() == [
                '{"kind": "read", "path": "a.md"}',
                '{"kind": "read", "path": "b.md"}',
            ]
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    assert process.returncode == 0


def test_tail_log_needs_a_file_or_a_data_dir(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGDOWN_DATA_DIR", raising=False)
    assert main(["tail-log"]) == 2
    assert "pass --file FILE or set RAGDOWN_DATA_DIR" in capsys.readouterr().err
