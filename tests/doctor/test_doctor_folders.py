"""`ragdown doctor` on the folders: `.ragdown.json` valid, every folder serving something, nothing
loose at the top of the docs dir (docs/doctor.md)."""

from __future__ import annotations

from tests.doctor.conftest import Server


def test_a_folder_settings_file_that_is_not_json_or_breaks_a_rule_fails(server: Server) -> None:
    server.write("notes/.ragdown.json", "{mcp: true")
    server.write("ops/.ragdown.json", '{"mcp": "yes"}')
    found = server.doctor()
    assert found.code == 1
    line = found.lines["folder settings"]
    assert line.startswith(
        "fail  folder settings: notes/.ragdown.json is not JSON (Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)); ops/.ragdown.json mcp must be true or false; correct the file"
    )


def test_a_folder_without_documents_warns(server: Server) -> None:
    (server.docs / "empty").mkdir()
    found = server.doctor()
    assert found.code == 0
    assert found.lines["folders served"] == (
        "warn  folders served: no Markdown document in empty: nothing to search there; add documents or "
        "remove the folder"
    )


def test_no_folder_with_mcp_on_warns(server: Server) -> None:
    server.write("ops/.ragdown.json", "{}")
    found = server.doctor()
    assert found.lines["folders served"].startswith(
        "warn  folders served: no folder has MCP on: agents reach none of them"
    )


def test_loose_markdown_at_the_top_warns(server: Server) -> None:
    server.write("todo.md", "# Todo\n")
    found = server.doctor()
    assert found.code == 0
    assert found.lines["loose Markdown"] == (
        f"warn  loose Markdown: 1 Markdown file(s) at the top of {server.docs} belong to no folder and are "
        "never indexed: todo.md; move each into a folder (or delete it in the web UI's Settings)"
    )
