"""What a user sees when a command cannot start: one line on stderr naming what they set, exit 2, no
traceback, and nothing heavy started first (docs/design.md#refusals-at-start). Run as real processes,
since a traceback or a native abort at exit is only visible there."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import AliasChoices, ValidationError

from ragdown.cli import main
from ragdown.settings import ServerSettings
from tests.conftest import run_cli

CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("RAGDOWN_", "LANCE_")) and k != "PORT"}


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refusal printed, after checking it was one: exit 2, one line, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    assert result.stderr.count("\n") == 1, result.stderr[-3000:]
    assert result.stderr.startswith("ragdown: ")
    return result.stderr.strip()


@pytest.fixture
def taken() -> Iterator[int]:
    """A port another process's socket listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "ops/.ragdown.json").write_text('{"title": "Ops", "mcp": true}', encoding="utf-8")
    (docs / "ops/a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    return docs


def serve_env(docs: Path, data: Path, **extra: str) -> dict[str, str]:
    return {
        **CLEAN,
        "RAGDOWN_DOCS_DIR": str(docs),
        "RAGDOWN_DATA_DIR": str(data),
        "RAGDOWN_EMBEDDER": "hash",
        "RAGDOWN_TOKEN": "refusal-token",
        "RAGDOWN_METRICS_PORT": "0",
        **extra,
    }


# --- a port that cannot be used (issue 28, item 9) ---


@pytest.mark.slow  # a real `ragdown serve` process
@pytest.mark.parametrize("variable", ["PORT", "RAGDOWN_PORT"])
def test_serve_on_a_taken_port_says_so_in_one_line(
    folders: Path, tmp_path: Path, taken: int, variable: str
) -> None:
    data = tmp_path / "data"
    result = run_cli("serve", env=serve_env(folders, data, **{variable: str(taken)}))
    assert refused(result) == (
        f"ragdown: cannot listen on 127.0.0.1:{taken}: the port is taken by another process "
        f"({variable}={taken}); stop that process, or set {variable} to a free port"
    )
    assert "listening on" not in result.stderr
    assert not (data / "lance").exists()  # said before the index opened


@pytest.mark.slow  # a real `ragdown serve` process
def test_a_taken_metrics_port_the_user_set_stops_serve(folders: Path, tmp_path: Path, taken: int) -> None:
    free = free_port()
    result = run_cli(
        "serve", env=serve_env(folders, tmp_path / "data", PORT=str(free), RAGDOWN_METRICS_PORT=str(taken))
    )
    assert refused(result) == (
        f"ragdown: cannot listen on 127.0.0.1:{taken}: the port is taken by another process "
        f"(RAGDOWN_METRICS_PORT={taken}); stop that process, or set RAGDOWN_METRICS_PORT to a free port, "
        "or 0 to turn metrics off"
    )


def test_a_taken_default_metrics_port_costs_the_metrics_in_one_line(
    taken: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragdown.serving.launch import check_metrics_port

    monkeypatch.delenv("RAGDOWN_METRICS_PORT", raising=False)
    assert not check_metrics_port(ServerSettings(metrics_port=taken))
    assert capsys.readouterr().err == (
        f"ragdown: metrics are off: cannot listen on 127.0.0.1:{taken}: the port is taken by another "
        "process (the default RAGDOWN_METRICS_PORT); stop that process, or set RAGDOWN_METRICS_PORT to "
        "a free port, or 0 to turn metrics off\n"
    )


@pytest.mark.slow  # a real `ragdown serve` process
def test_a_taken_internal_port_stops_the_primary(folders: Path, tmp_path: Path, taken: int) -> None:
    env = serve_env(
        folders,
        tmp_path / "data",
        PORT=str(free_port()),
        RAGDOWN_INTERNAL_PORT=str(taken),
        RAGDOWN_INTERNAL_TOKEN="refusal-internal",
    )
    assert refused(run_cli("serve", env=env)) == (
        f"ragdown: cannot listen on 127.0.0.1:{taken}: the port is taken by another process "
        f"(RAGDOWN_INTERNAL_PORT={taken}); stop that process, or set RAGDOWN_INTERNAL_PORT to a free port"
    )
    assert not (tmp_path / "data/lance").exists()


@pytest.mark.slow  # a real `ragdown serve` process
def test_an_address_this_machine_does_not_have(folders: Path, tmp_path: Path) -> None:
    env = serve_env(folders, tmp_path / "data", PORT=str(free_port()), RAGDOWN_HOST="192.0.2.1")
    assert refused(run_cli("serve", env=env)) == (
        f"ragdown: cannot listen on 192.0.2.1:{env['PORT']}: 192.0.2.1 is not an address of this "
        "machine (RAGDOWN_HOST); set RAGDOWN_HOST to one of its addresses (0.0.0.0 for all)"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- a data dir, a setting, an argument that cannot work (issue 28, item 10) ---


@pytest.mark.slow
def test_a_data_dir_that_cannot_be_created(folders: Path, tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x", encoding="utf-8")
    wanted = file / "sub"
    index = run_cli("index", str(folders / "ops"), "--data-dir", str(wanted), "--embedder", "hash", env=CLEAN)
    assert refused(index) == (
        f"ragdown: --data-dir {wanted} cannot be created: {file} is a file, not a directory"
    )
    stdio = run_cli("stdio", str(folders / "ops"), "--data-dir", str(wanted), env=CLEAN, input="")
    assert refused(stdio).startswith(f"ragdown: --data-dir {wanted} cannot be created")


@pytest.mark.slow  # a real `ragdown serve` process
def test_serve_names_a_data_dir_that_cannot_be_created(folders: Path, tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x", encoding="utf-8")
    served = run_cli("serve", env=serve_env(folders, file / "sub", PORT=str(free_port())))
    assert refused(served) == (
        f"ragdown: RAGDOWN_DATA_DIR {file / 'sub'} cannot be created: {file} is a file, not a directory"
    )


def test_serve_on_a_taken_port_refuses_before_opening_anything(
    folders: Path,
    tmp_path: Path,
    taken: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The quick loop's copy of the process test above: the same line, from `main`."""
    for name, value in serve_env(folders, tmp_path / "data", PORT=str(taken)).items():
        monkeypatch.setenv(name, value)
    assert main(["serve"]) == 2
    assert capsys.readouterr().err == (
        f"ragdown: cannot listen on 127.0.0.1:{taken}: the port is taken by another process "
        f"(PORT={taken}); stop that process, or set PORT to a free port\n"
    )
    assert not (tmp_path / "data/lance").exists()


def test_a_bad_lance_cpu_threads_is_refused_before_lancedb_panics(folders: Path, tmp_path: Path) -> None:
    env = {**CLEAN, "LANCE_CPU_THREADS": "abc"}
    result = run_cli(
        "index", str(folders / "ops"), "--data-dir", str(tmp_path / "d"), "--embedder", "hash", env=env
    )
    assert refused(result) == (
        "ragdown: invalid setting: LANCE_CPU_THREADS must be a whole number of 1 or more, got 'abc' "
        "(unset it to use every CPU)"
    )


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("PORT", "abc", "PORT must be a whole number, got 'abc'"),
        ("RAGDOWN_PORT", "abc", "RAGDOWN_PORT must be a whole number, got 'abc'"),
        ("SECURE_LOCAL_NET", "maybe", "SECURE_LOCAL_NET must be true or false, got 'maybe'"),
    ],
)
def test_a_bad_setting_is_named_as_the_user_set_it(
    folders: Path, variable: str, value: str, said: str
) -> None:
    env = {**serve_env(folders, folders.parent / "data"), variable: value}
    assert refused(run_cli("token", "x", env=env)) == f"ragdown: invalid setting: {said}"


def test_search_without_a_query_asks_for_one(folders: Path, tmp_path: Path) -> None:
    result = run_cli("search", str(folders / "ops"), "--data-dir", str(tmp_path / "d"), env=CLEAN)
    assert refused(result) == (
        'ragdown: no query: pass either a QUERY or --queries FILE (JSON lines of {"id", "query"})'
    )


def test_tail_log_of_a_missing_file_says_so_unless_told_to_wait(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    result = run_cli("tail-log", "--file", str(missing), env=CLEAN, timeout=60)
    assert refused(result) == (
        f"ragdown: --file {missing} does not exist; the server writes it with RAGDOWN_QUERY_LOG=true "
        "(--wait follows it once it appears)"
    )
    env = {**CLEAN, "RAGDOWN_DATA_DIR": str(tmp_path)}
    assert refused(run_cli("tail-log", env=env, timeout=60)) == (
        f"ragdown: the query log {tmp_path / 'query-log.jsonl'} (in RAGDOWN_DATA_DIR) does not exist; the "
        "server writes it with RAGDOWN_QUERY_LOG=true (--wait follows it once it appears)"
    )
    assert refused(run_cli("tail-log", "--file", str(tmp_path), env=CLEAN, timeout=60)) == (
        f"ragdown: --file {tmp_path} is a directory; pass the query log file (query-log.jsonl)"
    )


def test_tail_log_wait_follows_a_file_that_appears_later(tmp_path: Path) -> None:
    import signal

    log = tmp_path / "query-log.jsonl"
    with subprocess.Popen(
        [sys.executable, "-m", "ragdown.cli", "tail-log", "--wait", "--file", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=CLEAN,
    ) as process:
        try:
            time.sleep(0.5)
            assert process.poll() is None  # waiting, as a sidecar started before its server must
            log.write_text('{"kind": "read"}\n', encoding="utf-8")
            assert process.stdout is not None
            assert process.stdout.readline() == '{"kind": "read"}\n'
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    assert process.returncode == 0


@pytest.mark.slow  # a real `ragdown serve` process
def test_serve_names_a_docs_dir_that_is_not_there(tmp_path: Path) -> None:
    env = serve_env(tmp_path / "nowhere", tmp_path / "data", PORT=str(free_port()))
    assert refused(run_cli("serve", env=env)) == (
        f"ragdown: RAGDOWN_DOCS_DIR: the folder {tmp_path / 'nowhere'} does not exist; pass a directory "
        "of Markdown files"
    )


@pytest.mark.slow  # a real `ragdown serve` process
def test_a_primary_url_no_client_can_reach_is_refused(folders: Path, tmp_path: Path) -> None:
    env = serve_env(folders, tmp_path / "data", RAGDOWN_ROLE="reader", RAGDOWN_PRIMARY_URL="ftp://x")
    assert refused(run_cli("serve", env=env)) == (
        "ragdown: RAGDOWN_PRIMARY_URL must start with http://, https:// or unix://, got 'ftp://x'"
    )


# --- every setting of the README's table, given a value it cannot take ---


def bad_value(field: str) -> str | None:
    """A value the field refuses (its type, bounds or validator); None for free text."""
    for value in ("abc", "-1", "../outside", "ftp://bucket/x"):
        try:
            ServerSettings.model_validate({field: value})
        except ValidationError:
            return value
    return None


def variables(field: str, info: Any) -> list[str]:
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [f"RAGDOWN_{field.upper()}"]


CASES = [
    (variable, value)
    for field, info in ServerSettings.model_fields.items()
    if (value := bad_value(field)) is not None
    for variable in variables(field, info)
]


def test_the_sweep_covers_the_settings_with_a_type() -> None:
    names = {variable for variable, _ in CASES}
    assert {"PORT", "RAGDOWN_PORT", "RAGDOWN_THREADS", "SECURE_LOCAL_NET", "RAGDOWN_ROLE"} <= names
    assert {
        "RAGDOWN_HOOK_TOP_K",
        "RAGDOWN_INDEX_REFRESH_SECONDS",
        "RAGDOWN_NOTES_DIR",
        "RAGDOWN_INDEX_URI",
    } <= names


@pytest.mark.parametrize(("variable", "value"), CASES)
def test_every_setting_with_a_bad_value_is_one_line_naming_it(
    variable: str, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(os.environ):
        if name.startswith("RAGDOWN_") or name in ("PORT", "SECURE_LOCAL_NET", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name)
    monkeypatch.setenv(variable, value)
    assert main(["token", "sweep"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragdown: invalid setting: {variable} "), err
    assert err.count("\n") == 1


# --- settings whose type takes any text, checked for what they name ---


def in_env(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name in list(os.environ):
        if name.startswith(("RAGDOWN_", "LANCE_")) or name in ("PORT", "SECURE_LOCAL_NET", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def test_a_disabled_tool_that_does_not_exist_is_refused(
    folders: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A misspelt name would otherwise leave the tool it meant turned on, without a word."""
    in_env(
        monkeypatch,
        serve_env(folders, tmp_path / "data", RAGDOWN_DISABLED_TOOLS="ragdown_write,ragdown_wirte"),
    )
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragdown: RAGDOWN_DISABLED_TOOLS names no tool: ragdown_wirte (the tools: ")
    assert err.count("\n") == 1
    assert main(["stdio", str(folders / "ops"), "--data-dir", str(tmp_path / "d")]) == 2
    assert "RAGDOWN_DISABLED_TOOLS names no tool: ragdown_wirte" in capsys.readouterr().err


def test_a_query_log_file_that_cannot_be_written_is_refused(
    folders: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "file"
    file.write_text("x", encoding="utf-8")
    for given, said in [
        (
            file / "q.jsonl",
            f"the folder of RAGDOWN_QUERY_LOG_FILE {file / 'q.jsonl'} cannot be used: {file} is "
            "a file, not a directory",
        ),
        (
            file / "x/q.jsonl",
            f"the folder of RAGDOWN_QUERY_LOG_FILE {file / 'x/q.jsonl'} cannot be created: "
            f"{file} is a file, not a directory",
        ),
        (tmp_path, f"RAGDOWN_QUERY_LOG_FILE {tmp_path} is a directory; name a file in it"),
    ]:
        env = serve_env(
            folders, tmp_path / "data", RAGDOWN_QUERY_LOG="true", RAGDOWN_QUERY_LOG_FILE=str(given)
        )
        in_env(monkeypatch, env)
        assert main(["serve"]) == 2
        assert capsys.readouterr().err == f"ragdown: {said}\n"


def test_a_default_data_dir_under_a_bad_cache_home_names_it(
    folders: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "file"
    file.write_text("x", encoding="utf-8")
    in_env(monkeypatch, {"XDG_CACHE_HOME": str(file)})
    assert main(["index", str(folders / "ops"), "--embedder", "hash"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragdown: the data dir (under XDG_CACHE_HOME) {file}/ragdown/")
    assert err.endswith(f" cannot be created: {file} is a file, not a directory\n")


@pytest.mark.parametrize("variable", ["RAGDOWN_INTERNAL_PORT", "RAGDOWN_METRICS_PORT"])
def test_a_port_given_twice_is_refused(
    folders: Path,
    tmp_path: Path,
    variable: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = serve_env(folders, tmp_path / "data", PORT="3999", RAGDOWN_INTERNAL_TOKEN="i", **{variable: "3999"})
    in_env(monkeypatch, env)
    assert main(["serve"]) == 2
    assert (
        capsys.readouterr().err
        == f"ragdown: {variable} and PORT are both 3999; give each a port of its own\n"
    )
