"""A healthy server's docs dir and index (hash embedder, folders mode), and `ragdown doctor` run on
it through the CLI's entry point: each test breaks one thing and reads the line it gets."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragdown.cli import main
from ragdown.engine import Engine
from ragdown.indexing.embedders.hashing import HashEmbedder

HEALTHY = {
    "ops/.ragdown.json": json.dumps({"mcp": True}),
    "ops/backups.md": "# Backups\n## Restore\nRestore last night's dump with pg_restore. See [[failover]].\n",
    "ops/failover.md": "# Failover\nPromote the replica.\n",
    "notes/ideas.md": "# Ideas\nA search page.\n",
}
VARIABLES = (
    "RAGDOWN_TOKEN",
    "RAGDOWN_ADMIN_TOKEN",
    "RAGDOWN_INTERNAL_TOKEN",
    "RAGDOWN_ROLE",
    "RAGDOWN_PRIMARY_URL",
    "RAGDOWN_INDEX_URI",
    "SECURE_LOCAL_NET",
)


@dataclass
class Doctor:
    docs: Path
    data: Path
    code: int
    lines: dict[str, str]
    checks: list[dict[str, str]]


@dataclass
class Server:
    docs: Path
    data: Path
    capsys: pytest.CaptureFixture[str]

    def write(self, relative: str, text: str) -> Path:
        path = self.docs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def index(self) -> None:
        engine = Engine(self.docs, self.data, HashEmbedder(), source="hash", folders_mode=True, watch=False)
        try:
            engine.sync()
        finally:
            engine.close()

    def doctor(self, *args: str) -> Doctor:
        """`ragdown doctor ARGS --json` and the lines without --json, with the exit code."""
        self.capsys.readouterr()
        code = main(["doctor", *args])
        printed = self.capsys.readouterr().out.splitlines()
        lines = {line[6:].split(":", 1)[0]: line for line in printed}
        assert main(["doctor", *args, "--json"]) == code
        checks = json.loads(self.capsys.readouterr().out)
        assert [c["check"] for c in checks] == list(lines)
        return Doctor(self.docs, self.data, code, lines, checks)


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Server:
    """RAGDOWN_DOCS_DIR with two folders, indexed into RAGDOWN_DATA_DIR with the hash embedder."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    docs, data = tmp_path / "docs", tmp_path / "data"
    monkeypatch.setenv("RAGDOWN_DOCS_DIR", str(docs))
    monkeypatch.setenv("RAGDOWN_DATA_DIR", str(data))
    monkeypatch.setenv("RAGDOWN_EMBEDDER", "hash")
    made = Server(docs, data, capsys)
    for relative, text in HEALTHY.items():
        made.write(relative, text)
    made.index()
    return made


StatusOf = Callable[[Doctor, str], str]


def status(found: Doctor, check: str) -> str:
    return next(c["status"] for c in found.checks if c["check"] == check)
