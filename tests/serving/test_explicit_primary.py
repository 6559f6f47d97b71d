"""`RAGDOWN_ROLE=primary` on one machine (no internal port): it answers readers on `primary.sock` as
an `auto` primary does, so a reader beside it forwards writes; a second primary on the same data dir
is refused in one line (docs/design.md#the-lock-and-the-socket)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.serving.conftest import free_port
from tests.serving.test_roles import Proc, ops_folder, wait_for, wait_synced

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real `ragdown serve` processes


async def test_a_reader_beside_an_explicit_primary_forwards_its_writes(tmp_path: Path) -> None:
    docs = ops_folder(tmp_path, {"a.md": "# A\n\nalpha\n"})
    data = tmp_path / "data"
    primary = Proc(docs, data, RAGDOWN_ROLE="primary")
    readers: list[Proc] = []
    try:
        wait_synced(primary)
        assert (data / "primary.sock").is_socket()
        for role in ("reader", "auto"):
            readers.append(Proc(docs, data, RAGDOWN_ROLE=role))
            wait_for(lambda: readers[-1].status()["role"] == "reader", what=f"the {role} reader")
        for number, reader in enumerate(readers):
            answer = await reader.call(
                "ragdown_write", {"path": f"kafka{number}.md", "text": f"# Kafka {number}\n\nKafka topics."}
            )
            assert answer.startswith(f"created kafka{number}.md (hash "), answer
            assert (docs / f"ops/kafka{number}.md").exists()
        # A second primary on this data dir would be a second writer: refused before it opens anything.
        second = run_cli(
            "serve",
            env={
                **os.environ,
                "RAGDOWN_DOCS_DIR": str(docs),
                "RAGDOWN_DATA_DIR": str(data),
                "RAGDOWN_EMBEDDER": "hash",
                "RAGDOWN_TOKEN": "roles-token",
                "RAGDOWN_ROLE": "primary",
                "RAGDOWN_METRICS_PORT": "0",
                "PORT": str(free_port()),
            },
        )
        assert second.returncode == 2, second.stderr
        assert second.stderr == (
            f"ragdown: RAGDOWN_ROLE=primary, but another ragdown serve is the primary on {data.resolve()} "
            "already (it holds primary.lock); stop it, or start this one with RAGDOWN_ROLE=auto to be "
            "its reader\n"
        )
    finally:
        for proc in (*readers, primary):
            proc.stop()
