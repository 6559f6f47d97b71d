"""`ragdown status`: every setting in effect with its source (docs/design.md#where-a-setting-comes-from),
run as a real process over a docs dir with saved server settings and folders' own `.ragdown.json`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ragdown.cli import main
from ragdown.folders.registry import token_digest
from ragdown.settings import ServerSettings
from ragdown.status.sources import GROUPS
from tests.conftest import run_cli

OTHER = ("PORT", "SECURE_LOCAL_NET", "OPENAI_API_KEY", "XDG_CACHE_HOME", "LANCE_CPU_THREADS")
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("RAGDOWN_", "AWS_")) and k not in OTHER}
FOLDER_TOKEN = "Zq81mWv3kP0yTf6c"
SECRETS = {
    "RAGDOWN_TOKEN": "Hq2Jw9xPqA7sLd3e",
    "RAGDOWN_ADMIN_TOKEN": "Lk5Vb7nMeR2uGh8w",
    "RAGDOWN_INTERNAL_TOKEN": "Tf4Rd6sYuC9oNb1x",
    "OPENAI_API_KEY": "Pw3Ce8qRzE5iKj2v",
    "AWS_ACCESS_KEY_ID": "Xy7Q2mUw4Fz8Hs6a",
    "AWS_SECRET_ACCESS_KEY": "Nm6Gh1kLwB3tYp9r",
    "AWS_SESSION_TOKEN": "Bv9Jt4pXsD6gWq2n",
}
MANAGER = "RagdownFolder team-ns/ops"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A docs dir with saved server settings, a folder a RagdownFolder manages and a plain one."""
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "plain").mkdir()
    ops = {
        "mcp": True,
        "disabled_tools": ["ragdown_remember"],
        "hook": {"top_k": 9, "max_chars": "lots"},  # an invalid value falls through to the next layer
        "tokens": [{"name": "team", "sha256": token_digest(FOLDER_TOKEN)}],
        "managed_by": MANAGER,
    }
    (docs / "ops/.ragdown.json").write_text(json.dumps(ops), encoding="utf-8")
    saved = {"text_limit": 500, "watch": False, "hook": {"min_score": 0.5}}
    (docs / ".ragdown-server.json").write_text(json.dumps(saved), encoding="utf-8")
    return docs


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**CLEAN, "XDG_CACHE_HOME": str(tmp_path / "cache"), **extra}


def status_json(*args: str, env: dict[str, str]) -> dict[str, Any]:
    result = run_cli("status", *args, "--json", env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def by_name(settings: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {setting["name"]: setting for setting in settings}


def test_each_source_is_named(tmp_path: Path, docs: Path) -> None:
    env = environment(
        tmp_path,
        PORT="4100",
        RAGDOWN_SECURE_LOCAL_NET="true",
        RAGDOWN_TEXT_LIMIT="900",  # the saved 500 wins, as `serve` applies it
        RAGDOWN_HOOK_TOP_K="6",
        RAGDOWN_READ_ONLY="true",
        RAGDOWN_DISABLED_TOOLS="ragdown_reindex",
        LANCE_CPU_THREADS="3",
    )
    data = status_json(str(docs), env=env)
    server = by_name(data["settings"])
    assert server["port"] == {"name": "port", "value": 4100, "source": "environment", "variable": "PORT"}
    assert server["secure_local_net"]["variable"] == "RAGDOWN_SECURE_LOCAL_NET"
    assert server["text_limit"] == {"name": "text_limit", "value": 500, "source": "saved server settings"}
    assert server["watch"] == {"name": "watch", "value": False, "source": "saved server settings"}
    assert server["hook_min_score"] == {
        "name": "hook_min_score",
        "value": 0.5,
        "source": "saved server settings",
    }
    assert server["hook_top_k"]["source"] == "environment"
    assert server["hook_top_k"]["value"] == 6
    assert server["hook_max_chars"] == {"name": "hook_max_chars", "value": 6000, "source": "default"}
    assert server["host"] == {"name": "host", "value": "127.0.0.1", "source": "default"}
    assert server["docs_dir"]["source"] == "command line (FOLDER)"
    assert server["cache_home"]["variable"] == "XDG_CACHE_HOME"
    assert server["lance_cpu_threads"] == {
        "name": "lance_cpu_threads",
        "value": "3",
        "source": "environment",
        "variable": "LANCE_CPU_THREADS",
    }
    assert server["data_dir"]["source"] == "default"
    assert server["data_dir"]["value"].startswith(str(tmp_path / "cache" / "ragdown"))

    folders = {folder["name"]: by_name(folder["settings"]) for folder in data["folders"]}
    assert set(folders) == {"ops", "plain"}
    ops, plain = folders["ops"], folders["plain"]
    managed = f".ragdown.json ({MANAGER})"
    assert ops["mcp"] == {"name": "mcp", "value": True, "source": managed}
    assert ops["hook_top_k"] == {"name": "hook_top_k", "value": 9, "source": managed}
    assert ops["hook_min_score"]["source"] == "saved server settings"
    assert ops["hook_max_chars"]["source"] == "default"
    assert ops["tokens"] == {"name": "tokens", "value": "set", "source": managed}
    assert ops["read_only"]["variable"] == "RAGDOWN_READ_ONLY"
    assert ops["disabled_tools"]["value"] == "ragdown_reindex,ragdown_remember"
    assert ops["disabled_tools"]["source"] == f"{managed} + environment"
    assert plain["mcp"] == {"name": "mcp", "value": False, "source": "default"}
    assert plain["tokens"] == {"name": "tokens", "value": "not set", "source": "default"}
    assert plain["hook_top_k"]["variable"] == "RAGDOWN_HOOK_TOP_K"


def test_the_table_groups_settings_and_names_variables(tmp_path: Path, docs: Path) -> None:
    env = environment(tmp_path, RAGDOWN_DOCS_DIR=str(docs), RAGDOWN_PORT="4200")
    result = run_cli("status", env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for group in [*GROUPS, "folders"]:
        assert group in lines
    port = next(line for line in lines if line.split()[:1] == ["port"])
    assert port.split()[1] == "4200"
    assert port.endswith("environment (RAGDOWN_PORT)")
    assert any(
        line.strip().startswith("text_limit") and line.endswith("saved server settings") for line in lines
    )
    assert f"  ops  (.ragdown.json ({MANAGER}))" in lines
    assert "  plain  (no .ragdown.json)" in lines


@pytest.mark.parametrize("form", ["text", "json"])
def test_secrets_are_only_set_or_not_set(tmp_path: Path, docs: Path, form: str) -> None:
    env = environment(tmp_path, RAGDOWN_DOCS_DIR=str(docs), **SECRETS)
    result = run_cli("status", *(["--json"] if form == "json" else []), env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    hidden = [*SECRETS.values(), FOLDER_TOKEN, token_digest(FOLDER_TOKEN)]
    for value in hidden:
        for part in (value, value[:8], value[-8:]):  # not the value, nor a prefix or a tail of it
            assert part not in output, part
    if form == "json":
        settings = by_name(json.loads(result.stdout)["settings"])
        for name in ("token", "admin_token", "internal_token", "embedding_api_key", "aws_secret_access_key"):
            assert settings[name]["value"] == "set", name
        assert settings["embedding_api_key"]["variable"] == "OPENAI_API_KEY"


def test_every_setting_of_the_model_is_reported(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A field added to ServerSettings shows up with a source and no change to `status`."""
    for key in [k for k in os.environ if k.startswith("RAGDOWN_") or k in OTHER]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["status", str(docs), "--json"]) == 0
    settings = by_name(json.loads(capsys.readouterr().out)["settings"])
    sources = {"default", "environment", "saved server settings", "command line (FOLDER)"}
    for name in ServerSettings.model_fields:
        assert name in settings, name
        assert settings[name]["source"] in sources, settings[name]
    assert main(["status", str(docs)]) == 0
    table = capsys.readouterr().out
    for name in ServerSettings.model_fields:
        assert any(line.split()[:1] == [name] for line in table.splitlines()), name


def test_without_a_docs_dir_only_the_environment_is_shown(tmp_path: Path) -> None:
    data = status_json(env=environment(tmp_path))
    assert data["folders"] == []
    settings = by_name(data["settings"])
    assert settings["docs_dir"] == {"name": "docs_dir", "value": None, "source": "default"}
    assert settings["data_dir"]["value"] is None
    # ragdown sets LANCE_CPU_THREADS itself when LanceDB loads: status loads none of it
    assert settings["lance_cpu_threads"] == {"name": "lance_cpu_threads", "value": None, "source": "default"}


def refusal(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("ragdown: "), result.stderr
    return result.stderr


def test_a_bad_setting_is_the_same_refusal_as_elsewhere(tmp_path: Path, docs: Path) -> None:
    env = environment(tmp_path, PORT="abc")
    said = refusal(run_cli("status", str(docs), env=env, timeout=60))
    assert said == refusal(run_cli("index", str(docs), env=env, timeout=60))
    assert "PORT" in said
    assert "RAGDOWN_PORT" not in said


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    said = refusal(run_cli("status", str(tmp_path / "nowhere"), env=environment(tmp_path), timeout=60))
    assert "does not exist" in said
    env = environment(tmp_path, RAGDOWN_DOCS_DIR=str(tmp_path / "gone"))
    assert refusal(run_cli("status", env=env, timeout=60)).startswith("ragdown: RAGDOWN_DOCS_DIR: the folder")
