"""The primary's internal API attacked as a compromised or buggy reader would (docs/security.md): its
own token only, a folder and a place inside it rather than a path, and every rule of `/mcp` applied
again — nothing outside an MCP folder is read or written, and nothing a folder turns off runs."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from ragdown.serving.http import create_app
from ragdown.serving.internal import internal_app
from ragdown.settings import ServerSettings
from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served, free_port

INTERNAL = "internal-test-token"


@pytest.fixture
def primary(make_served: Any) -> Iterator[tuple[str, Served]]:
    """The served app's MCP routes behind an internal listener of their own, as the primary runs it."""
    served: Served = make_served()
    app = create_app(served.engine, ServerSettings(token=TOKEN, admin_token=ADMIN_TOKEN, watch=False))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(internal_app(app.mcp, INTERNAL), port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", served
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def call(url: str, body: dict[str, Any], token: str | None = INTERNAL) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(f"{url}/internal/tool", json=body, headers=headers, timeout=30)


def write(
    folder: str | None, place: str = "", tool: str = "ragdown_write", arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A forwarded call: `place` is the sub-folder of `folder` (the internal API's `path`)."""
    arguments = arguments or {"path": "forged.md", "text": "# Forged\n"}
    return {"folder": folder, "path": place, "tool": tool, "arguments": arguments}


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): (
            p.read_text(errors="replace") if p.is_file() and not p.is_symlink() else ""
        )
        for p in sorted(root.rglob("*"))
    }


def test_only_the_internal_token_opens_it(primary: tuple[str, Served]) -> None:
    url, served = primary
    for token in (None, TOKEN, ADMIN_TOKEN, "guess"):
        answer = call(url, write("ops"), token=token)
        assert answer.status_code == 401
    assert not (served.docs / "ops" / "forged.md").exists()
    created = call(url, write("ops")).json()
    digest = hashlib.sha256((served.docs / "ops" / "forged.md").read_bytes()).hexdigest()[:12]
    assert created == {"text": f"created forged.md (hash {digest})", "is_error": False}


@pytest.mark.parametrize(
    ("folder", "path"),
    [
        ("/etc", ""),
        ("..", ""),
        ("../outside", ""),
        ("ops/../private", ""),
        ("private", ""),  # human-only
        ("missing", ""),
        (".git", ""),
        ("ops", ".."),
        ("ops", "../private"),
        ("ops", "../../outside"),
        ("ops", "/etc"),
        ("ops", "etc"),  # a symlink to /etc inside the folder
        ("ops", "db/../../private"),
        ("ops", ".hidden"),
        ("ops", "missing"),
        ("ops", "backups.md"),  # a file, not a folder
        ("ops", "a\nb"),
        ("ops", "x" * 2000),
    ],
)
def test_a_forged_place_is_refused_and_nothing_is_written(
    primary: tuple[str, Served], tmp_path: Path, folder: str, path: str
) -> None:
    url, served = primary
    (served.docs / "ops" / "etc").symlink_to("/etc")
    (served.docs / "ops" / ".hidden").mkdir()
    (tmp_path / "outside").mkdir(exist_ok=True)
    before = snapshot(tmp_path)
    answer = call(url, write(folder, path))
    assert answer.status_code in (200, 422)
    if answer.status_code == 200:
        assert answer.json()["is_error"] is True
        assert "failed unexpectedly" not in answer.json()["text"]
    assert snapshot(tmp_path) == before
    assert not Path("/etc/forged.md").exists()


def test_arguments_that_do_not_fit_the_tool_are_a_refusal_not_a_crash(primary: tuple[str, Served]) -> None:
    url, served = primary
    answer = call(url, write("ops", arguments={"path": 5, "text": ["x"]}))
    assert answer.status_code == 200
    assert answer.json()["is_error"] is True
    assert answer.json()["text"] == "ragdown_write: path must be text, got 5; text must be text"
    assert not (served.docs / "ops" / "5").exists()


def test_the_old_path_naming_call_is_not_understood(primary: tuple[str, Served]) -> None:
    url, _served = primary
    forged = {"scope": "/etc", "tool": "ragdown_read_doc", "arguments": {"path": "passwd"}}
    answer = call(url, forged)
    assert answer.status_code == 422
    assert "root:" not in answer.text


def test_the_folders_switches_apply_to_forwarded_calls(primary: tuple[str, Served]) -> None:
    url, served = primary
    config = served.docs / "ops" / ".ragdown.json"
    base = json.loads(config.read_text())
    config.write_text(json.dumps({**base, "read_only": True}))
    refused = call(url, write("ops")).json()
    assert refused == {"text": "ragdown_write is turned off for this folder", "is_error": True}
    config.write_text(json.dumps({**base, "disabled_tools": ["ragdown_delete"]}))
    gone = call(url, write("ops", tool="ragdown_delete", arguments={"path": "backups.md"})).json()
    assert gone["is_error"] is True
    assert (served.docs / "ops" / "backups.md").exists()
    # Only what readers forward runs here: a read is the reader's own business.
    read = call(url, write("ops", tool="ragdown_read_doc", arguments={"path": "backups.md"})).json()
    assert read == {"text": "ragdown_read_doc is not run by the primary for readers", "is_error": True}
    # The root endpoint's own tools need RAGDOWN_ROOT_MCP, which is off here.
    root = call(url, write(None, tool="ragdown_create_folder", arguments={"name": "made"})).json()
    assert root["is_error"] is True
    assert not (served.docs / "made").exists()


def test_a_forwarded_write_lands_in_a_real_subfolder(primary: tuple[str, Served]) -> None:
    url, served = primary
    answer = call(url, write("ops", "db", arguments={"path": "new.md", "text": "# New\n"})).json()
    assert answer == {"text": answer["text"], "is_error": False}
    assert answer["text"].startswith("created new.md (hash ")
    assert (
        served.docs / "ops" / "db" / "new.md"
    ).read_text() == "---\ncreated_by: ragdown_write\n---\n# New\n"


def test_a_forwarded_write_is_stamped_with_the_caller_the_reader_saw(primary: tuple[str, Served]) -> None:
    """docs/documents.md#provenance: the reader names its caller; the text's own claim is replaced."""
    url, served = primary
    text = "---\ncreated_by: alice\n---\n# New\n"
    body = {**write("ops", "db", arguments={"path": "new.md", "text": text}), "caller": "token team-b"}
    assert call(url, body).json()["is_error"] is False
    on_disk = (served.docs / "ops" / "db" / "new.md").read_text()
    assert on_disk == "---\ncreated_by: ragdown_write (token team-b)\n---\n# New\n"
    too_long = {**write("ops", "", arguments={"path": "x.md", "text": "x"}), "caller": "x" * 301}
    assert call(url, too_long).status_code == 422
    assert not (served.docs / "ops" / "x.md").exists()


def test_names_that_are_no_text_are_refused(primary: tuple[str, Served]) -> None:
    url, served = primary
    headers = {"Authorization": f"Bearer {INTERNAL}", "Content-Type": "application/json"}
    write_a = '"tool": "ragdown_write", "arguments": {"path": "a.md", "text": "x"}'
    for body in (
        '{"folder": "\\ud800", "path": "", ' + write_a + "}",
        '{"folder": "ops", "path": "\\ud800", ' + write_a + "}",
    ):
        answer = httpx.post(f"{url}/internal/tool", content=body.encode(), headers=headers, timeout=30)
        assert answer.status_code in (200, 400, 422)
        if answer.status_code == 200:
            assert answer.json()["is_error"] is True
    memory = httpx.post(
        f"{url}/internal/memory",
        content=b'{"op": "add", "key": "\\ud800", "ids": ["a"]}',
        headers=headers,
        timeout=30,
    )
    assert memory.status_code in (200, 400)
    assert not (served.docs / "ops" / "a.md").exists()
