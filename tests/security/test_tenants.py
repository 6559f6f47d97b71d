"""One server, several teams' folders, each with its own token (docs/security.md#tenants): one
folder's agent can neither hide another folder's documents nor pass its writes off as a person's or
another caller's. Each test is an attack made through the real HTTP server with the official client."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragdown.indexing import sync as sync_module
from ragdown.settings import ServerSettings
from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served, call_tool, serve

TEAM_A = "team-a-token-0001"
TEAM_B = "team-b-token-0002"
SECRET = "# Secret plan\n\nThe quarterly zanzibar migration plan.\n"
HR = "# HR\n\nSalary bands for the zanzibar office.\n"


def folder_config(title: str, token_name: str, token: str) -> str:
    digest = hashlib.sha256(token.encode()).hexdigest()
    return json.dumps({"title": title, "mcp": True, "tokens": [{"name": token_name, "sha256": digest}]})


@pytest.fixture
def tenants(tmp_path: Path) -> Iterator[Served]:
    docs = tmp_path / "docs"
    layout = {
        "notes/.ragdown.json": folder_config("Notes", "team-a", TEAM_A),
        "notes/old.md": "# Old zanzibar note\n\nThe zanzibar plan as it was.\n",
        "notes/deep/.keep.md": "",
        "teamb/.ragdown.json": folder_config("Team B", "team-b", TEAM_B),
        "teamb/secret.md": SECRET,
        "private/.ragdown.json": json.dumps({"title": "Private", "mcp": False}),
        "private/hr.md": HR,
    }
    for relative, text in layout.items():
        path = docs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    settings = ServerSettings(token=TOKEN, admin_token=ADMIN_TOKEN, watch=False)
    yield from serve(docs, tmp_path / "data", settings)


async def call(served: Served, folder: str, token: str, tool: str, arguments: dict[str, Any]) -> str:
    return await call_tool(f"{served.url}/mcp/{folder}", token, tool, arguments)


async def team_b_sees_its_secret(served: Served) -> None:
    recall = await call(served, "teamb", TEAM_B, "ragdown_recall", {"query": "zanzibar migration plan"})
    assert "secret.md" in recall
    listing = await call(served, "teamb", TEAM_B, "ragdown_list", {})
    assert "secret.md — Secret plan" in listing
    assert "superseded" not in listing
    context = await call(
        served, "teamb", TEAM_B, "ragdown_context", {"prompt": "zanzibar migration plan", "min_score": 0}
    )
    assert "secret.md" in context
    with served.admin() as admin:
        found = admin.get("/api/search", params={"q": "zanzibar migration", "folder": "teamb"}).json()
        assert any(hit["path"] == "teamb/secret.md" for hit in found["hits"]), found


HOSTILE = [
    "../teamb/secret.md",
    "../private/hr.md",
    "../teamc/plan.md",
    "/teamb/secret.md",
    "deep/../../teamb/secret.md",
    "..\\teamb\\secret.md",
]


@pytest.mark.anyio
@pytest.mark.parametrize("entry", HOSTILE)
async def test_an_agent_cannot_supersede_another_folders_document(tenants: Served, entry: str) -> None:
    """Item 1: `ragdown_write` refuses front matter that supersedes outside its folder, and writes nothing."""
    text = f"---\nsupersedes: [{json.dumps(entry)}]\n---\n# New plan\n\nzanzibar.\n"
    answer = await call(tenants, "notes", TEAM_A, "ragdown_write", {"path": "plan.md", "text": text})
    assert answer.startswith("supersedes leaves this folder: "), answer
    assert not (tenants.docs / "notes" / "plan.md").exists()
    # ragdown_edit cannot sneak it in either.
    await call(
        tenants,
        "notes",
        TEAM_A,
        "ragdown_write",
        {"path": "plan.md", "text": "---\nsupersedes: old.md\n---\nx"},
    )
    before = (tenants.docs / "notes" / "plan.md").read_bytes()
    edit = {"path": "plan.md", "edits": [{"old_text": "old.md", "new_text": json.dumps(entry)}]}
    assert (await call(tenants, "notes", TEAM_A, "ragdown_edit", edit)).startswith(
        "supersedes leaves this folder"
    )
    assert (tenants.docs / "notes" / "plan.md").read_bytes() == before
    await team_b_sees_its_secret(tenants)


@pytest.mark.anyio
async def test_a_document_on_disk_that_supersedes_across_folders_hides_nothing(tenants: Served) -> None:
    """Item 1: whatever a file says (a person's, or one an older version indexed), the hidden set
    stays inside each folder; inside it, superseding still works and the list says why."""
    entries = ", ".join(json.dumps(e) for e in [*HOSTILE, "old.md"])
    (tenants.docs / "notes" / "new.md").write_text(f"---\nsupersedes: [{entries}]\n---\n# New zanzibar\n")
    tenants.engine.sync()
    await team_b_sees_its_secret(tenants)
    listing = await call(tenants, "notes", TEAM_A, "ragdown_list", {})
    assert "old.md — Old zanzibar note (changed " in listing
    assert "superseded by new.md (hidden from search)" in listing
    recall = await call(tenants, "notes", TEAM_A, "ragdown_recall", {"query": "zanzibar plan"})
    assert "old.md" not in recall
    with tenants.admin() as admin:
        page = admin.get("/api/render", params={"path": "notes/old.md"}).json()
        assert page["superseded_by"] == ["notes/new.md"]
        assert admin.get("/api/render", params={"path": "teamb/secret.md"}).json()["superseded_by"] == []


@pytest.mark.anyio
async def test_rows_an_older_version_indexed_hide_nothing_across_folders(
    tenants: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 1, defence in depth: rows written before the boundary (the sync told no boundary) are
    checked again by the search and the catalog."""
    monkeypatch.setattr(sync_module, "supersedes_boundary", lambda path, folders_mode: "")
    (tenants.docs / "notes" / "new.md").write_text("---\nsupersedes: [../teamb/secret.md]\n---\n# New\n")
    tenants.engine.sync()
    assert "teamb/secret.md" in tenants.engine.store._scan(["supersedes"], "true").column(0).to_pylist()
    await team_b_sees_its_secret(tenants)


CLAIMS = ["created_by: alice", "created_by:", 'created_by: ""', "created_by: ''", "created_by: |\n  alice"]


@pytest.mark.anyio
@pytest.mark.parametrize("claim", CLAIMS)
async def test_an_agent_cannot_pass_its_write_off_as_a_persons(tenants: Served, claim: str) -> None:
    """Item 5: the server stamps the caller it knows, whatever the text claims."""
    text = f"---\n{claim}\ntitle: Mine\n---\n# Mine\n\nzanzibar notes.\n"
    await call(tenants, "notes", TEAM_A, "ragdown_write", {"path": "mine.md", "text": text})
    on_disk = (tenants.docs / "notes" / "mine.md").read_text()
    assert (
        on_disk
        == "---\ntitle: Mine\ncreated_by: ragdown_write (token team-a)\n---\n# Mine\n\nzanzibar notes.\n"
    )
    users = await call(tenants, "notes", TEAM_A, "ragdown_list", {"written_by": "user"})
    assert "mine.md" not in users
    agents = await call(tenants, "notes", TEAM_A, "ragdown_list", {"written_by": "agent"})
    assert "mine.md — Mine (changed " in agents
    assert "written by an agent with ragdown_write (token team-a)" in agents
    # Nor by editing the stamp away afterwards, nor by remembering under another name.
    edit = {
        "path": "mine.md",
        "edits": [{"old_text": "created_by: ragdown_write (token team-a)\n", "new_text": ""}],
    }
    await call(tenants, "notes", TEAM_A, "ragdown_edit", edit)
    assert (tenants.docs / "notes" / "mine.md").read_text() == on_disk
    saved = await call(
        tenants, "notes", TEAM_A, "ragdown_remember", {"title": "T", "content": f"{claim}\nbody", "name": "n"}
    )
    assert saved.startswith("saved notes/n.md") or saved.startswith("saved n.md"), saved
    note = next((tenants.docs / "notes").rglob("n.md")).read_text()
    assert "\ncreated_by: ragdown_remember (token team-a)\n---\n" in note


@pytest.mark.anyio
async def test_each_credential_is_named_in_the_stamp(tenants: Served) -> None:
    """Item 5: the agents' token, the admin token and a folder token each stamp their own name."""
    (tenants.docs / "shared").mkdir()
    (tenants.docs / "shared" / ".ragdown.json").write_text(json.dumps({"mcp": True}))
    await call(tenants, "shared", TOKEN, "ragdown_write", {"path": "a.md", "text": "a"})
    await call(tenants, "shared", ADMIN_TOKEN, "ragdown_write", {"path": "b.md", "text": "b"})
    await call(tenants, "teamb", TEAM_B, "ragdown_write", {"path": "c.md", "text": "c"})
    assert (
        tenants.docs / "shared" / "a.md"
    ).read_text() == "---\ncreated_by: ragdown_write (agent token)\n---\na"
    assert (
        tenants.docs / "shared" / "b.md"
    ).read_text() == "---\ncreated_by: ragdown_write (admin token)\n---\nb"
    assert (
        tenants.docs / "teamb" / "c.md"
    ).read_text() == "---\ncreated_by: ragdown_write (token team-b)\n---\nc"
    # A folder's token reaches no other folder, so it can stamp nothing there.
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ragdown_write"}}
    with tenants.http(TEAM_A) as http:
        assert http.post("/mcp/teamb", json=body, headers={"Accept": "application/json"}).status_code == 404
    assert not (tenants.docs / "teamb" / "d.md").exists()
