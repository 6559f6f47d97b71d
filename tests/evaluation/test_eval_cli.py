"""`ragdown eval` as a command: the table, `--json`, `--compare`, the bounds' exit 1 with one line per
bound missed, exit 2 with one line for bad input, and the shipped golden set of the examples."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragdown.cli import main
from tests.conftest import WriteDoc, run_cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "notes"

GOLDEN = "\n".join(
    [
        '{"id": "redis", "query": "maxmemory-policy allkeys-lru",'
        ' "expected": ["ops/cache.md#Redis eviction"]}',
        '{"id": "wrong", "query": "pancakes flour eggs milk", "expected": ["ops/cache.md#Sizing"]}',
        '{"id": "noise", "query": "zqxjv wvkpq", "unanswerable": true}',
    ]
)


@pytest.fixture
def folder(docs: Path, write: WriteDoc) -> Path:
    write(
        "ops/cache.md",
        "# Cache\n\n## Redis eviction\n\nRedis evicts keys by maxmemory-policy allkeys-lru.\n\n",
    )
    (docs / "ops/cache.md").write_text(
        (docs / "ops/cache.md").read_text() + "## Sizing\n\nThe node has sixteen gigabytes.\n"
    )
    write("food.md", "# Pancakes\n\nFlour, eggs, milk and a pinch of salt.\n")
    write(".ragdown-golden.jsonl", GOLDEN + "\n")
    return docs


def eval_args(folder: Path, data_dir: Path, *more: str) -> list[str]:
    """GOLDEN, when given, comes first in `more`: right after the folder, as argparse reads it."""
    return ["eval", str(folder), *more, "--embedder", "hash", "--data-dir", str(data_dir)]


def test_the_table_and_the_json(
    folder: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "result.json"
    assert main(eval_args(folder, data_dir, "--json", str(out))) == 0
    table = capsys.readouterr().out
    assert table.startswith(
        f"ragdown eval {folder} · {folder}/.ragdown-golden.jsonl · 2 answerable, 1 unanswerable"
    )
    assert "  hit@1       0.500   1/2\n" in table
    assert "  abstention  1/1 refused, 0 answered anyway\n" in table
    assert "Misses (what came first instead):\n  wrong: " in table
    assert "      first: food.md#Pancakes · " in table
    data = json.loads(out.read_text())
    assert (data["mode"], data["top_k"], data["answerable"], data["unanswerable"]) == ("search", 10, 2, 1)
    assert data["metrics"]["hit@1"] == 0.5
    assert data["metrics"]["abstention"] == 1.0
    assert [q["id"] for q in data["questions"]] == ["redis", "wrong", "noise"]
    assert data["questions"][0]["outcome"] == "rank 1"
    assert "compare" not in data


def test_json_to_stdout_is_json_only(
    folder: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(eval_args(folder, data_dir, "--json", "-")) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["hit@1"] == 0.5


def test_compare_shows_each_metric_and_the_changed_questions(
    folder: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"top_k": 1, "abstain": false}')
    assert main(eval_args(folder, data_dir, "--compare", str(settings), "--json", "-")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["compare"]["settings"] == {"top_k": 1, "abstain": False}
    changed = {c["id"]: c for c in data["compare"]["changed"]}
    assert changed["noise"] == {"id": "noise", "base": "refused", "compared": "answered", "better": False}
    assert "redis" not in changed
    assert main(eval_args(folder, data_dir, "--compare", str(settings))) == 0
    table = capsys.readouterr().out
    assert f"Compared with {settings} (top_k 1, abstain false):" in table
    assert "  hit@1       0.500 → 0.500 (+0.000)\n" in table
    assert "  abstention  1/1 → 0/1 refused\n" in table
    assert "  noise: refused → answered (worse)\n" in table


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ('{"max_per_doc": 1}', 'unknown key "max_per_doc"; the keys are top_k, max_per_document,'),
        ('{"hook": {"top_k": 2}}', '"hook" applies to the hook only; pass --hook'),
        ('{"top_k": 0}', '"top_k" must be greater than or equal to 1; got 0'),
        ('{"abstain": "no"}', '"abstain" must be a valid boolean; got "no"'),
        ("{}", "sets nothing"),
        ("[1]", "not a JSON object"),
    ],
)
def test_bad_settings_are_one_line(
    folder: Path,
    data_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    settings: str,
    message: str,
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(settings)
    assert main(eval_args(folder, data_dir, "--compare", str(path))) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragdown: SETTINGS {path}: ")
    assert err.count("\n") == 1
    assert message in err
    assert not data_dir.exists()  # refused before the engine opened


def test_hook_settings_need_hook_mode_and_know_their_keys(
    folder: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"hook": {"top": 1}}')
    assert main(eval_args(folder, data_dir, "--hook", "--compare", str(path))) == 2
    assert (
        'unknown key "hook.top"; the keys are top_k, min_score, min_ratio, max_chars'
        in capsys.readouterr().err
    )
    path.write_text('{"hook": {"top_k": 0}}')
    assert main(eval_args(folder, data_dir, "--hook", "--compare", str(path), "--json", "-")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "hook"
    assert all(q["refused"] for q in data["compare"]["questions"])


@pytest.mark.slow
def test_bounds_exit_1_with_one_line_per_bound_missed(folder: Path, data_dir: Path) -> None:
    """As a CI job runs it: a real process, its exit code and stderr."""
    done = run_cli(*eval_args(folder, data_dir, "--min-hit1", "0.9", "--min-hit5", "0.5", "--min-mrr", "0.8"))
    assert done.returncode == 1, done.stderr
    missed = [line for line in done.stderr.splitlines() if line.startswith("ragdown eval:")]
    assert missed[0] == "ragdown eval: hit@1 0.500 is below --min-hit1 0.9"
    assert missed[1].startswith("ragdown eval: MRR ")
    assert missed[1].endswith(" is below --min-mrr 0.8")
    assert len(missed) == 2  # hit@5 1.000 meets 0.5
    assert "hit@1       0.500" in done.stdout
    met = run_cli(*eval_args(folder, data_dir, "--min-hit1", "0.5", "--min-ndcg", "0"))
    assert met.returncode == 0, met.stderr


def test_bad_input_exits_2_with_one_line(folder: Path, data_dir: Path, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN + '\n{"id": "x", "query": "q", "expected": ["a.md"], "weight": 1}\n')
    done = run_cli(*eval_args(folder, data_dir, str(golden)))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        'ragdown: GOLDEN line 4: unknown key "weight"; the keys are id, query, expected, unanswerable, note, '
        "source, candidates, draft"
    )


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (["--min-hit5", "1.5"], "ragdown: --min-hit5 must be between 0 and 1, got 1.5"),
        (["--top-k", "0"], "ragdown: --top-k must be between 1 and 100, got 0"),
        (["missing.jsonl", "--top-k", "3"], "ragdown: GOLDEN: no file at missing.jsonl; "),
        (
            ["--hook", "--top-k", "3"],
            "ragdown: --top-k is the search's; under --hook the hook's top_k decides",
        ),
        (
            ["--json", "/nonexistent/r.json"],
            "ragdown: --json /nonexistent/r.json: its directory does not exist",
        ),
    ],
)
def test_refusals_before_the_engine_opens(
    folder: Path, data_dir: Path, capsys: pytest.CaptureFixture[str], more: list[str], message: str
) -> None:
    assert main(eval_args(folder, data_dir, *more)) == 2
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert err.count("\n") == 1
    assert not data_dir.exists()


def test_an_empty_golden_file_and_a_target_not_in_the_folder(
    folder: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / ".ragdown-golden.jsonl").write_text("// nothing yet\n\n")
    assert main(eval_args(folder, data_dir)) == 2
    assert "holds no questions" in capsys.readouterr().err
    (folder / ".ragdown-golden.jsonl").write_text('{"id": "x", "query": "q", "expected": ["gone.md"]}\n')
    assert main(eval_args(folder, data_dir)) == 2
    assert (
        'GOLDEN line 1: "expected" target "gone.md" names no document of the folder'
        in capsys.readouterr().err
    )


def listing(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in sorted(root.rglob("*"))}


def test_the_examples_golden_set_runs_and_writes_nothing_into_the_clone(tmp_path: Path) -> None:
    """`ragdown eval examples/notes` as the README gives it (the index in the cache, not in examples/)."""
    before = listing(EXAMPLES)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "RAGDOWN_EMBEDDER": "hash"}
    done = run_cli("eval", str(EXAMPLES), "--json", "-", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["golden"] == str(EXAMPLES / ".ragdown-golden.jsonl")
    assert 15 <= data["answerable"] + data["unanswerable"] <= 25
    assert data["unanswerable"] >= 2
    assert listing(EXAMPLES) == before
    assert (tmp_path / "cache" / "ragdown").is_dir()


@pytest.mark.slow  # the real MiniLM
def test_the_readme_numbers_of_the_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """README.md's Commands section quotes these: a change to the ranking that moves them updates both."""
    args = [
        "eval",
        str(EXAMPLES),
        "--embedder",
        "minilm",
        "--data-dir",
        str(tmp_path / "data"),
        "--json",
        "-",
    ]
    assert main(args) == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    shown = {key: round(metrics[key], 3) for key in ("hit@1", "hit@5", "MRR", "nDCG@10")}
    assert shown == {"hit@1": 0.895, "hit@5": 1.0, "MRR": 0.939, "nDCG@10": 0.945}
    assert (metrics["refused"], metrics["unanswerable"]) == (2, 3)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "hit@1 0.895 (17/19), hit@5 1.000, MRR 0.939, nDCG@10 0.945" in readme
