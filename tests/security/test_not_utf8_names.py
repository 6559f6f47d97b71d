"""A file name that is not UTF-8, dropped into one folder, attacked through the real server: it must be
one failed entry of that folder's sync report, never a sync that fails for every folder
(docs/security.md#tenants, item 4)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.security.conftest import hostile_settings, unclear
from tests.serving.conftest import Served, serve

MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-06-18",
}

pytestmark = pytest.mark.anyio

REASON = "the file name is not UTF-8; rename it"
# Bytes no UTF-8 decoder accepts: a name of another encoding (Latin-1 `é` is 0xe9), or plain junk.
BAD_FILE = b"teama/bad\xffname.md"
BAD_FOLDER_FILE = b"teama/sub\xfe/inner.md"
BAD_LOOSE = b"\xfdloose.md"  # loose at the top: no folder's, listed by /api/folders
BAD_MOVED = b"teama/notes/old\xe9.md"  # inside a subfolder that is moved
BAD_TOP_FOLDER = b"bad\xfcteam/x.md"  # a top-level folder whose own name is not UTF-8


def write_bytes_path(docs: Path, relative: bytes, text: str) -> None:
    path = os.fsencode(docs) + b"/" + relative
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as file:
        file.write(text.encode("utf-8"))


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Folders `teama` and `teamb` (MCP on), indexed before any bad name exists."""
    base = tmp_path_factory.mktemp("not-utf8")
    docs = base / "docs"
    for folder in ("teama", "teamb"):
        (docs / folder).mkdir(parents=True)
        (docs / folder / ".ragdown.json").write_text(json.dumps({"mcp": True}), encoding="utf-8")
    (docs / "teama" / "good.md").write_text("# Good\n\nThe quokka runbook.\n", encoding="utf-8")
    (docs / "teama" / "notes").mkdir()
    (docs / "teama" / "notes" / "ok.md").write_text("# Ok\n\nSee [old](old.md).\n", encoding="utf-8")
    (docs / "teamb" / "plan.md").write_text("# Plan\n\nThe plan of team B.\n", encoding="utf-8")
    generator = serve(docs, base / "data", hostile_settings())
    served = next(generator)
    # Then the bad names arrive, beside new documents in both folders.
    write_bytes_path(docs, BAD_FILE, "# Bad\n\nThe wombat secret. See [good](good.md).\n")
    write_bytes_path(docs, BAD_FOLDER_FILE, "# Inner\n\nThe wombat inner.\n")
    write_bytes_path(docs, BAD_LOOSE, "# Loose\n")
    write_bytes_path(docs, BAD_MOVED, "# Old\n\nBack to [ok](ok.md).\n")
    write_bytes_path(docs, BAD_TOP_FOLDER, "# X\n")
    (docs / "teama" / "fresh.md").write_text("# Fresh\n\nThe numbat procedure.\n", encoding="utf-8")
    (docs / "teamb" / "new.md").write_text("# New\n\nThe platypus release checklist.\n", encoding="utf-8")
    yield served
    next(generator, None)


@pytest.fixture(scope="module")
async def team_a(served: Served, anyio_backend: str) -> AsyncIterator[Client]:
    async with served.mcp("/mcp/teama") as client:
        yield client


@pytest.fixture(scope="module")
async def team_b(served: Served, anyio_backend: str) -> AsyncIterator[Client]:
    async with served.mcp("/mcp/teamb") as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> tuple[str, bool]:
    result = await client.call_tool(tool, arguments or {})
    return "".join(getattr(c, "text", "") for c in result.content), bool(result.is_error)


async def answered(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> str:
    text, is_error = await call(client, tool, arguments)
    assert not is_error, f"{tool} failed: {text[:300]!a}"
    return text


async def test_another_folders_bad_name_does_not_stop_this_folders_sync(team_b: Client) -> None:
    report = json.loads(await answered(team_b, "ragdown_reindex"))
    assert report["failed"] == []  # team A's file names are not team B's business
    hits = await answered(team_b, "ragdown_recall", {"query": "platypus release checklist"})
    assert "new.md" in hits


async def test_the_bad_name_is_one_failed_entry_and_the_folders_other_files_index(team_a: Client) -> None:
    report = json.loads(await answered(team_a, "ragdown_reindex"))
    assert {(f["path"], f["error"]) for f in report["failed"]} == {
        ("bad\\xffname.md", REASON),
        ("sub\\xfe/inner.md", REASON),
        ("notes/old\\xe9.md", REASON),
    }
    assert "fresh.md" in await answered(team_a, "ragdown_recall", {"query": "numbat procedure"})
    assert "good.md" in await answered(team_a, "ragdown_recall", {"query": "quokka runbook"})
    assert "wombat" not in await answered(team_a, "ragdown_recall", {"query": "wombat"})
    stats = json.loads(await answered(team_a, "ragdown_stats", {"include_files": True}))
    assert stats["last_sync"]["failed"] == report["failed"]
    listed = await answered(team_a, "ragdown_list")
    assert "fresh.md" in listed
    assert "bad" not in listed


async def test_root_mcp_reports_the_bad_names_of_its_folders_escaped(served: Served) -> None:
    async with served.mcp("/mcp") as client:
        report = json.loads(await answered(client, "ragdown_reindex"))
    assert "teama/bad\\xffname.md" in {f["path"] for f in report["failed"]}
    # A top-level folder whose name is not UTF-8 is no folder anyone reaches: only the server sees it.
    assert served.engine.last_sync is not None
    assert ("bad\\xfcteam/x.md", REASON) in {(f.path, f.error) for f in served.engine.last_sync.failed}


def test_naming_the_bad_file_is_a_clear_refusal(served: Served) -> None:
    """JSON can carry the lone surrogate Python gives the byte 0xff (`\\udcff`), so a client could
    name the very file on disk: the raw requests (the official client will not encode one)."""
    name = "bad\\udcffname.md"  # the JSON escape, sent as is
    for tool, arguments in (
        ("ragdown_read_doc", f'{{"path": "{name}"}}'),
        ("ragdown_write", f'{{"path": "{name}", "text": "# Over\\n"}}'),
        ("ragdown_move", f'{{"from": "{name}", "to": "renamed.md"}}'),
    ):
        body = (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
            f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}'
        )
        with served.http() as client:
            response = client.post("/mcp/teama", content=body.encode("ascii"), headers=MCP_HEADERS)
        # The MCP layer's parser refuses the escape itself; were it let through, the path rule would
        # (tests/documents/test_paths.py).
        assert response.status_code == 400
        assert "surrogate" in response.json()["error"]["message"]
    with served.admin() as admin:
        for route, body in (
            ("/api/doc", f'{{"path": "teama/{name}", "text": "# Over\\n", "overwrite": true}}'),
            ("/api/move", f'{{"from": "teama/{name}", "to": "teama/renamed.md"}}'),
            ("/api/preview", f'{{"path": "teama/{name}", "text": "# Over\\n"}}'),
        ):
            response = admin.post(
                route, content=body.encode("ascii"), headers={"Content-Type": "application/json"}
            )
            error = response.json()["error"]
            # Refused as no text at all by the body's model (the path rule would say "not UTF-8").
            assert response.status_code == 400, response.text
            assert not unclear(error), error
        # A URL cannot carry the lone surrogate: its byte arrives as U+FFFD, a name that is not there.
        refused = admin.get("/api/doc?path=teama/bad%FFname.md")
        assert refused.status_code == 404, refused.text
        assert not unclear(refused.json()["error"]), refused.text
    assert os.path.exists(os.fsencode(served.docs) + b"/" + BAD_FILE)
    assert not (served.docs / "teama" / "renamed.md").exists()


async def test_moves_beside_a_bad_name_work(team_a: Client, served: Served) -> None:
    # The bad file links to good.md: links are rewritten in the files the index can name, only.
    answer = await answered(team_a, "ragdown_move", {"from": "good.md", "to": "best.md"})
    assert answer.startswith("moved good.md to best.md")
    assert "bad" not in answer
    # A subfolder holding a bad name moves whole.
    await answered(team_a, "ragdown_move", {"from": "notes", "to": "archive"})
    assert os.path.exists(os.fsencode(served.docs) + b"/teama/archive/old\xe9.md")
    report = json.loads(await answered(team_a, "ragdown_reindex"))
    assert ("archive/old\\xe9.md", REASON) in {(f["path"], f["error"]) for f in report["failed"]}


def test_the_web_api_lists_and_renders_around_the_bad_names(served: Served) -> None:
    with served.admin() as admin:
        docs = admin.get("/api/docs")
        assert docs.status_code == 200, docs.text
        assert "teama/fresh.md" in {d["path"] for d in docs.json()["docs"]}
        folders = admin.get("/api/folders")
        assert folders.status_code == 200, folders.text
        assert {f["name"] for f in folders.json()["folders"]} == {"teama", "teamb"}
        # A link to a name the index lacks makes the renderer walk the folder for attachments.
        rendered = admin.get("/api/render", params={"path": "teama/notes/ok.md"})
        if rendered.status_code == 404:  # moved by the test above
            rendered = admin.get("/api/render", params={"path": "teama/archive/ok.md"})
        assert rendered.status_code == 200, rendered.text
