"""What `serve` says as it starts (serving/banner.py, docs/tools.md#endpoints)."""

from __future__ import annotations

import json
from pathlib import Path

from ragdown.folders.registry import loose_markdown
from ragdown.indexing.sync import FailedFile, SyncReport
from ragdown.serving.banner import base_url, startup_lines, sync_summary
from ragdown.settings import ServerSettings


def folder(docs: Path, name: str, **config: object) -> None:
    (docs / name).mkdir(parents=True)
    if config:
        (docs / name / ".ragdown.json").write_text(json.dumps(config))


def settings(**values: object) -> ServerSettings:
    return ServerSettings.model_validate({"token": "s3cret-agent-token", "port": 3100, **values})


def test_each_mcp_folder_gets_its_url_and_the_others_are_named(tmp_path: Path) -> None:
    folder(tmp_path, "work", mcp=True, title="Work notes")
    folder(tmp_path, "ops", mcp=True)
    folder(tmp_path, "private", title="Mine")
    folder(tmp_path, ".git")
    lines = startup_lines(tmp_path, tmp_path / ".data", settings(), "primary")
    assert lines[0].startswith("ragdown ")
    assert "primary" in lines[0]
    urls = [line.strip() for line in lines if "/mcp/" in line and line.startswith("  ")]
    assert urls == ["http://127.0.0.1:3100/mcp/ops", "http://127.0.0.1:3100/mcp/work  Work notes"]
    hidden = next(line for line in lines if line.startswith("Folders without MCP"))
    assert "private" in hidden
    assert ".git" not in hidden
    assert not any(line.startswith("warning:") for line in lines)
    assert "Bearer <RAGDOWN_TOKEN>" in lines[1]
    assert "s3cret" not in "\n".join(lines)  # the variable is named, never its value


def test_no_mcp_folder_and_loose_markdown_are_warned_about(tmp_path: Path) -> None:
    folder(tmp_path, "private")
    (tmp_path / "todo.md").write_text("# Todo")
    (tmp_path / "README.markdown").write_text("# Readme")
    (tmp_path / ".hidden.md").write_text("x")
    (tmp_path / "notes.txt").write_text("x")
    warnings = [
        line for line in startup_lines(tmp_path, tmp_path / ".d", settings(), "primary") if "warning" in line
    ]
    assert len(warnings) == 2
    assert "no folder in" in warnings[0]
    assert '{"mcp": true}' in warnings[0]
    assert "404" in warnings[0]
    assert "2 Markdown file(s)" in warnings[1]
    assert "README.markdown, todo.md" in warnings[1]


def test_an_empty_docs_dir_says_it_holds_no_folder(tmp_path: Path) -> None:
    lines = startup_lines(tmp_path, tmp_path / ".d", settings(), "primary")
    assert any(line.startswith(f"warning: {tmp_path} holds no folder") for line in lines)


def test_loose_markdown_skips_symlinks_and_dot_files(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("x")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    (tmp_path / ".draft.md").write_text("x")
    (tmp_path / "dir.md").mkdir()
    assert loose_markdown(tmp_path) == ["real.md"]


def test_root_mcp_and_the_web_ui_are_listed_as_they_are(tmp_path: Path) -> None:
    folder(tmp_path, "work", mcp=True)
    plain = startup_lines(tmp_path, tmp_path / ".d", settings(), "primary")
    assert not any(line.strip().startswith("http://127.0.0.1:3100/mcp  ") for line in plain)
    assert "Web UI: http://127.0.0.1:3100/ is off until RAGDOWN_ADMIN_TOKEN is set" in "\n".join(plain)
    full = startup_lines(
        tmp_path, tmp_path / ".d", settings(root_mcp=True, admin_token="s3cret-admin"), "reader"
    )
    assert any(line.strip().startswith("http://127.0.0.1:3100/mcp  (every MCP folder") for line in full)
    assert "Web UI: http://127.0.0.1:3100/ (sign in with RAGDOWN_ADMIN_TOKEN)" in full
    assert "reader" in full[0]
    assert "s3cret" not in "\n".join(full)


def test_a_wildcard_bind_is_shown_as_loopback_and_ipv6_is_bracketed() -> None:
    assert base_url(settings(host="0.0.0.0")) == "http://127.0.0.1:3100"
    assert base_url(settings(host="::1")) == "http://[::1]:3100"
    assert base_url(settings(host="10.0.0.5")) == "http://10.0.0.5:3100"


def test_the_sync_summary_counts_changes_and_names_failed_files() -> None:
    report = SyncReport(added=2, updated=1, unchanged=4, chunks=9, ms=1530)
    line = sync_summary(report, 7, 30)
    assert line == "ready: 7 document(s), 30 chunk(s) indexed; synced in 1.5 s (2 added, 1 updated)"
    calm = sync_summary(SyncReport(unchanged=3, ms=40), 3, 5)
    assert calm.endswith("(no change)")
    failed = SyncReport(added=1, failed=[FailedFile(path="bad.md", error="cannot read")], ms=10)
    assert sync_summary(failed, 1, 1).endswith("1 file(s) could not be indexed (see the log above): bad.md")
