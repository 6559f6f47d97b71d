"""The data dir holds every folder's text (the index, the query log): a real `ragdown serve` started
under a permissive umask (022) must still keep it from every other local user, while the documents
it writes keep the modes that umask gives (docs/security.md#tenants, item 12)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.serving.conftest import call_tool, free_port, start_serve, stop_process, wait_ready

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # a real `ragdown serve` process
TOKEN = "modes-token-1234"


def open_to_others(root: Path) -> list[str]:
    """Every entry under `root` (itself included) that a user other than its owner could read,
    write or enter: any group or other permission bit."""
    found = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        if not stat.S_ISLNK(os.lstat(path).st_mode) and mode & 0o077:
            found.append(f"{path.relative_to(root.parent)} {oct(mode)}")
    return found


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_data_dir_is_the_owners_only_and_documents_keep_their_modes(
    tmp_path: Path, permissive_umask: None
) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    (docs / "teama").mkdir(parents=True)
    (docs / "teama" / ".ragdown.json").write_text(json.dumps({"mcp": True}), encoding="utf-8")
    (docs / "teama" / "plan.md").write_text("# Plan\n\nThe quokka migration plan.\n", encoding="utf-8")
    port = free_port()
    process = start_serve(docs, data, port, TOKEN, RAGDOWN_QUERY_LOG="true")
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process)
        mcp = f"{url}/mcp/teama"
        assert "plan.md" in await call_tool(mcp, TOKEN, "ragdown_recall", {"query": "quokka migration"})
        written = await call_tool(
            mcp, TOKEN, "ragdown_write", {"path": "new/notes.md", "text": "# Notes\n\nThe numbat.\n"}
        )
        assert "new/notes.md" in written
        assert "notes.md" in await call_tool(mcp, TOKEN, "ragdown_recall", {"query": "numbat"})
        names = {p.name for p in data.iterdir()}
        assert {"meta.json", "query-log.jsonl", "primary.lock", "primary.sock", "internal.token"} <= names
        assert any(name.startswith("lance") for name in names)
        assert open_to_others(data) == []
    finally:
        stop_process(process)
    # What the server wrote in the docs dir is as the umask says, as any editor's file would be.
    assert stat.S_IMODE((docs / "teama" / "new" / "notes.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((docs / "teama" / "new").stat().st_mode) == 0o755
