"""`/api/folders` (docs/tools.md#folder-routes) over real HTTP, and the managed-folder rule the operator
relies on:
a folder whose `.ragdown.json` names a manager refuses everyone else's change and says what to edit."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from ragdown.folders.manage import FOLDER_TOOLS
from ragdown.folders.scope import Scope
from ragdown.serving.tools import WRITE_TOOLS, Endpoint, endpoint_tools
from tests.serving.conftest import Served

MANAGER = "RagdownFolder team/work"
AS_MANAGER = {"X-Ragdown-Manager": MANAGER}


def config(served: Served, name: str) -> dict[str, Any]:
    return dict(json.loads((served.docs / name / ".ragdown.json").read_text(encoding="utf-8")))


def test_list_folders_with_counts_and_loose_files(served: Served) -> None:
    with served.admin() as http:
        body = http.get("/api/folders").json()
    assert [f["name"] for f in body["folders"]] == ["ops", "private"]
    ops = body["folders"][0]
    assert ops["title"] == "Ops runbooks"
    assert ops["mcp"] is True
    assert ops["mcp_path"] == "/mcp/ops"
    assert ops["files"] == 3
    assert ops["chunks"] == sum(
        s.chunks for p, s in served.engine.store.files().items() if p.startswith("ops/")
    )
    assert body["folders"][1]["mcp"] is False
    assert body["loose_files"] == ["loose.md"]


def test_folder_routes_need_the_token_but_unknown_api_paths_are_404_first(served: Served) -> None:
    with served.http(token=None) as http:
        assert http.get("/api/folders").status_code == 401
        assert http.post("/api/folders", json={"name": "x"}).status_code == 401
        unknown = http.get("/api/nothing-here")
        assert (unknown.status_code, unknown.json()) == (404, {"error": "Not found"})
    with served.admin() as http:
        wrong = http.put("/api/folders", json={})
        assert (wrong.status_code, wrong.json()) == (405, {"error": "Method not allowed"})
    assert not (served.docs / "x").exists()


def test_create_writes_mcp_always_and_refuses_bad_names(served: Served) -> None:
    with served.admin() as http:
        made = http.post("/api/folders", json={"name": "Work", "title": "Work"})
        assert made.status_code == 201
        assert made.json()["folder"]["name"] == "Work"
        assert config(served, "Work") == {"title": "Work", "mcp": False}
        assert http.post("/api/folders", json={"name": "Work"}).status_code == 409
        assert http.post("/api/folders", json={}).json() == {"error": "name is required"}
        for bad in [".hidden", "-dash", "a/b", "..", "node_modules", " pad"]:
            refused = http.post("/api/folders", json={"name": bad})
            assert refused.status_code == 400, bad
            assert refused.json()["error"].startswith(f'not a valid folder name: "{bad}"')
        invalid = http.post("/api/folders", content=b"{nope", headers={"Content-Type": "application/json"})
        assert invalid.json() == {"error": "Body is not valid JSON"}
        untyped = http.post("/api/folders", content=b'{"name": "Typed"}')  # a form could send this
        assert (untyped.status_code, untyped.json()) == (
            415,
            {"error": "send the body as JSON (Content-Type: application/json)"},
        )
        assert (
            http.post(
                "/api/folders", content=b"x" * (1024 * 1024 + 1), headers={"Content-Type": "application/json"}
            ).status_code
            == 413
        )


def test_a_new_folder_is_indexed_before_the_answer(served: Served) -> None:
    with served.admin() as http:
        http.post("/api/folders", json={"name": "fresh", "mcp": True})
        (served.docs / "fresh" / "a.md").write_text("# A\n\nalpha text\n", encoding="utf-8")
        renamed = http.patch("/api/folders/fresh", json={"name": "renamed"})
        assert renamed.status_code == 200
        assert renamed.json()["folder"] == {
            **renamed.json()["folder"],
            "name": "renamed",
            "files": 1,
            "mcp_path": "/mcp/renamed",
        }
    assert "renamed/a.md" in served.engine.store.files()
    assert not any(p.startswith("fresh/") for p in served.engine.store.files())


def test_patch_validates_every_key_before_writing(served: Served) -> None:
    before = (served.docs / "ops" / ".ragdown.json").read_bytes()
    with served.admin() as http:
        for body, message in [
            ({"mcp": "yes"}, "mcp must be true or false"),
            ({"title": 3}, "title must be a string"),
            ({"name": 3}, "name must be a string"),
            ({"hook": {"top_k": 1.5}}, "hook.top_k must be a whole number from 0 to 50"),
            ({"hook": {"min_ratio": 2}}, "hook.min_ratio must be from 0 to 1"),
            ({"hook": {"max_chars": "many"}}, "hook.max_chars must be a whole number from 0 to 100000"),
            ({"hook": 4}, "hook must be an object"),
            ({"disabled_tools": ["ragdown_nope"]}, "unknown tool in disabled_tools: ragdown_nope"),
            ({"colour": "red"}, "unknown folder setting: colour"),
            ({"mcp": False, "read_only": "no"}, "read_only must be true or false"),
        ]:
            refused = http.patch("/api/folders/ops", json=body)
            assert refused.status_code == 400, body
            assert refused.json()["error"].startswith(message), body
        assert http.patch("/api/folders/missing", json={"mcp": True}).status_code == 404
        assert http.patch("/api/folders/ops", json={"name": "private"}).status_code == 409
    assert (served.docs / "ops" / ".ragdown.json").read_bytes() == before


def test_patch_keeps_unknown_keys_and_edits_the_hook_key_by_key(served: Served) -> None:
    path = served.docs / "ops" / ".ragdown.json"
    path.write_text(json.dumps({"title": "Ops", "mcp": True, "colour": "red"}), encoding="utf-8")
    with served.admin() as http:
        http.patch("/api/folders/ops", json={"hook": {"top_k": 2, "min_score": 0.5}})
        assert config(served, "ops")["hook"] == {"top_k": 2, "min_score": 0.5}
        http.patch("/api/folders/ops", json={"hook": {"top_k": None}, "title": ""})
        assert config(served, "ops") == {"mcp": True, "colour": "red", "hook": {"min_score": 0.5}}
        folder = http.patch("/api/folders/ops", json={"hook": {}}).json()["folder"]
    assert folder["hook"] == {}
    assert folder["title"] == "ops"
    assert config(served, "ops") == {"mcp": True, "colour": "red"}


@pytest.mark.anyio
async def test_mcp_on_off_and_tool_switches_apply_to_the_next_request(served: Served) -> None:
    with served.admin() as http:
        http.patch("/api/folders/private", json={"mcp": True})
        async with served.mcp("/mcp/private") as client:
            names = {t.name for t in (await client.list_tools()).tools}
        assert "ragdown_write" in names
        http.patch("/api/folders/private", json={"read_only": True, "disabled_tools": ["ragdown_stats"]})
        async with served.mcp("/mcp/private") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            refused = await client.call_tool("ragdown_write", {"path": "x.md", "text": "# X\n"})
        assert names.isdisjoint(WRITE_TOOLS | {"ragdown_stats"})
        assert "ragdown_recall" in names
        assert refused.is_error
        assert not (served.docs / "private" / "x.md").exists()
        http.patch("/api/folders/private", json={"mcp": False})
        with served.http() as raw:
            gone = raw.post("/mcp/private", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert gone.status_code == 404


def test_every_folder_tool_can_be_named_in_disabled_tools(served: Served) -> None:
    """The list the API and the CRD accept is the folder endpoint's real tool list."""
    tools = endpoint_tools(Endpoint(engine=served.engine, scope=Scope("ops"), name="ops", title="Ops"))
    assert set(FOLDER_TOOLS) == {tool.__name__ for tool, _ in tools}


def test_a_managed_folder_refuses_other_callers_and_names_the_resource(served: Served) -> None:
    with served.admin() as http:
        made = http.patch("/api/folders/ops", json={"managed_by": MANAGER, "mcp": True}, headers=AS_MANAGER)
        assert made.json()["folder"]["managed_by"] == MANAGER
        before = (served.docs / "ops" / ".ragdown.json").read_bytes()
        refused = http.patch("/api/folders/ops", json={"mcp": False})
        assert refused.status_code == 409
        assert refused.json() == {
            "error": "folder ops is managed by RagdownFolder team/work: edit RagdownFolder team/work "
            "instead (kubectl edit ragdownfolder work -n team)",
            "code": "managed",
        }
        other = {"X-Ragdown-Manager": "RagdownFolder team/other"}
        assert http.patch("/api/folders/ops", json={"managed_by": None}, headers=other).status_code == 409
        assert http.delete("/api/folders/ops", params={"confirm": "ops"}).status_code == 409
        assert (served.docs / "ops" / ".ragdown.json").read_bytes() == before
        released = http.patch("/api/folders/ops", json={"managed_by": None, "mcp": False}, headers=AS_MANAGER)
        assert "managed_by" not in released.json()["folder"]
        assert http.patch("/api/folders/ops", json={"title": "Mine now"}).status_code == 200


def test_delete_needs_the_exact_name_and_drops_the_folder_from_the_index(served: Served) -> None:
    with served.admin() as http:
        assert http.delete("/api/folders/ops", params={"confirm": "OPS"}).status_code == 400
        assert (served.docs / "ops").is_dir()
        assert http.delete("/api/folders/nope", params={"confirm": "nope"}).status_code == 404
        gone = http.delete("/api/folders/ops", params={"confirm": "ops"})
    assert gone.status_code == 200
    assert gone.json()["name"] == "ops"
    assert gone.json()["sync"]["removed"] == 3
    assert not (served.docs / "ops").exists()
    assert not any(p.startswith("ops/") for p in served.engine.store.files())


def test_read_only_server_allows_settings_but_not_create_rename_or_delete(
    make_served: Callable[..., Served],
) -> None:
    served = make_served(read_only=True)
    with served.admin() as http:
        assert http.post("/api/folders", json={"name": "new"}).status_code == 403
        assert http.patch("/api/folders/ops", json={"name": "ops2"}).status_code == 403
        assert http.delete("/api/folders/ops", params={"confirm": "ops"}).status_code == 403
        assert http.patch("/api/folders/ops", json={"mcp": False}).status_code == 200
    assert config(served, "ops")["mcp"] is False
    assert (served.docs / "ops").is_dir()
    assert not (served.docs / "new").exists()


def test_a_manager_only_adopts_by_naming_itself_and_never_renames(served: Served) -> None:
    with served.admin() as http:
        spoofed = http.patch("/api/folders/ops", json={"managed_by": MANAGER})
        assert spoofed.status_code == 400
        assert "X-Ragdown-Manager" in spoofed.json()["error"]
        # A manager cannot release or delete what it never held.
        for answer in (
            http.patch("/api/folders/ops", json={"managed_by": None, "mcp": False}, headers=AS_MANAGER),
            http.delete("/api/folders/ops", params={"confirm": "ops"}, headers=AS_MANAGER),
        ):
            assert answer.status_code == 409
            assert answer.json()["code"] == "not_managed"
        assert config(served, "ops")["mcp"] is True
        http.patch("/api/folders/ops", json={"managed_by": MANAGER}, headers=AS_MANAGER)
        renamed = http.patch("/api/folders/ops", json={"name": "ops2"}, headers=AS_MANAGER)
        assert (renamed.status_code, renamed.json()["code"]) == (409, "managed")
    assert (served.docs / "ops").is_dir()


def test_a_manager_deletes_only_a_folder_it_created(served: Served) -> None:
    with served.admin() as http:
        http.patch("/api/folders/ops", json={"managed_by": MANAGER}, headers=AS_MANAGER)
        kept = http.delete("/api/folders/ops", params={"confirm": "ops"}, headers=AS_MANAGER)
        assert (kept.status_code, kept.json()["code"]) == (409, "not_created")
        assert (served.docs / "ops" / "backups.md").is_file()
        made = http.post("/api/folders", json={"name": "scratch", "managed_by": MANAGER}, headers=AS_MANAGER)
        assert made.json()["folder"]["created_by"] == MANAGER
        assert http.delete(
            "/api/folders/scratch", params={"confirm": "scratch"}, headers=AS_MANAGER
        ).is_success
    assert not (served.docs / "scratch").exists()


def test_titles_are_bounded_like_the_resource_schema(served: Served) -> None:
    with served.admin() as http:
        refused = http.patch("/api/folders/ops", json={"title": "x" * 201})
        assert refused.json() == {"error": "title must be at most 200 characters"}
        assert http.patch("/api/folders/ops", json={"title": "x" * 200}).status_code == 200


def test_one_folder_reads_as_it_is_listed(served: Served) -> None:
    with served.admin() as http:
        listed = {f["name"]: f for f in http.get("/api/folders").json()["folders"]}
        assert http.get("/api/folders/ops").json() == {"folder": listed["ops"]}
        missing = http.get("/api/folders/nope")
        assert (missing.status_code, missing.json()) == (404, {"error": "no such folder: nope"})
        assert http.get("/api/folders/..%2F..").status_code == 404
    with served.http(token=None) as http:
        assert http.get("/api/folders/ops").status_code == 401


def test_junk_bodies_and_titles_are_refusals_and_leave_nothing_half_made(served: Served) -> None:
    with served.admin() as http:
        deep = http.post("/api/folders", content=b"[" * 200_000, headers={"Content-Type": "application/json"})
        assert (deep.status_code, deep.json()) == (400, {"error": "Body is not valid JSON"})
        for body, kind in (
            (b'["ops"]', "an array"),
            (b'"ops"', "a string"),
            (b"null", "null"),
            (b"1.5", "a number"),
        ):
            listed = http.post("/api/folders", content=body, headers={"Content-Type": "application/json"})
            assert listed.status_code == 400
            assert (
                listed.json()["error"] == f'Body must be a JSON object such as {{"title": "Ops"}}, got {kind}'
            )
        for title in ("\ud800", "two\nlines", "tab\there"):
            made = http.post(
                "/api/folders",
                content=json.dumps({"name": "surr", "title": title}).encode(),
                headers={"Content-Type": "application/json"},
            )
            assert made.status_code == 400, title
            assert made.json()["error"].startswith("title must be plain text")
            assert not (served.docs / "surr").exists()  # no folder left without its settings
            patched = http.patch(
                "/api/folders/ops",
                content=json.dumps({"title": title}).encode(),
                headers={"Content-Type": "application/json"},
            )
            assert patched.status_code == 400
    assert config(served, "ops")["title"] == "Ops runbooks"
