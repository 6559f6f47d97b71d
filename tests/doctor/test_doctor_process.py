"""`ragdown doctor` as a real process: exit 1 on a fail, 0 with warnings only, 2 on bad input, and
`--json` a list of {check, status, message, fix} (docs/doctor.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.doctor.conftest import VARIABLES, Server


def environment(server: Server, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    return env | {"RAGDOWN_DOCS_DIR": str(server.docs), "RAGDOWN_DATA_DIR": str(server.data)} | extra


@pytest.mark.slow
def test_exit_codes_and_json_from_a_real_process(server: Server, tmp_path: Path) -> None:
    server.write("loose.md", "# Loose\n")
    warned = run_cli("doctor", env=environment(server))
    assert warned.returncode == 0, warned.stderr
    assert "warn  loose Markdown: 1 Markdown file(s)" in warned.stdout

    failed = run_cli("doctor", "--json", env=environment(server, RAGDOWN_TOKEN="x", RAGDOWN_ADMIN_TOKEN="x"))
    assert failed.returncode == 1, failed.stderr
    checks = json.loads(failed.stdout)
    assert all(list(check) == ["check", "status", "message", "fix"] for check in checks)
    assert {c["check"]: c["status"] for c in checks}["tokens"] == "fail"

    missing = run_cli("doctor", str(tmp_path / "nope"), env=environment(server))
    assert missing.returncode == 2
    assert missing.stderr.startswith(f"ragdown: the folder {tmp_path / 'nope'} does not exist")
    env = environment(server)
    del env["RAGDOWN_DOCS_DIR"]
    unset = run_cli("doctor", env=env)
    assert (unset.returncode, unset.stderr) == (
        2,
        "ragdown: pass the folder to check (ragdown doctor FOLDER) or set RAGDOWN_DOCS_DIR\n",
    )
