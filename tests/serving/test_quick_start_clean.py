"""The README's quick start leaves the clone as it was (docs/design.md#where-state-lives): its
`ragdown serve` command, run as written in a git repository holding the README, the code and the
examples, then written to the way an agent and the web UI's tour do — a new note, a remembered
one, edits, MCP turned off and on, folder and server settings saved — and `git status` is clean."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.serving.conftest import free_port, stop_process, wait_ready

REPO = Path(__file__).resolve().parents[2]
GIT = shutil.which("git")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,  # a real `ragdown serve` process
    pytest.mark.skipif(GIT is None, reason="git is not installed"),
]
ASSIGNMENT = re.compile(r"^(?P<name>[A-Z_][A-Z0-9_]*)=(?P<value>.*)$")


def quick_start_command() -> tuple[dict[str, str], list[str]]:
    """The README's first command, checked to install and then start the server: the variables it
    sets and the arguments it gives `ragdown`."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    line = next(line for line in block.splitlines() if line and not line.startswith("#"))
    steps = [step.strip() for step in line.split("&&")]
    assert steps[0] == "python3 -m venv .venv", steps
    assert steps[1].startswith(".venv/bin/pip install -e ."), steps
    words = shlex.split(steps[-1])
    variables = {}
    while (match := ASSIGNMENT.match(words[0])) is not None:
        variables[match["name"]] = match["value"]
        words.pop(0)
    assert words[:2] == [".venv/bin/ragdown", "serve"], words
    return variables, words[1:]


def git(clone: Path, *args: str) -> str:
    assert GIT is not None
    done = subprocess.run(
        [GIT, "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_clone(tmp_path: Path) -> Path:
    """A git repository holding what the quick start runs: the README, pyproject.toml, the code and
    the examples, committed as the repository has them (what is ignored stays ignored)."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("README.md", ".gitignore", "pyproject.toml"):
        shutil.copy2(REPO / name, clone / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("server", "examples"):
        shutil.copytree(REPO / name, clone / name, ignore=ignore)
    git(clone, "init", "-q")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "a clone")
    assert git(clone, "status", "--porcelain") == ""
    return clone


def text_of(result: object) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", []))


async def test_the_quick_start_and_the_ui_tour_leave_git_status_clean(tmp_path: Path) -> None:
    clone = make_clone(tmp_path)
    variables, arguments = quick_start_command()
    port = free_port()
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env = {
        **inherited,
        "PYTHONPATH": str(clone / "server"),  # what `pip install -e .` in the clone would import
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "RAGDOWN_EMBEDDER": "hash",
        "PORT": str(port),
        "RAGDOWN_METRICS_PORT": "0",
        **variables,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "ragdown.cli", *arguments],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process)
        agent = {"Authorization": f"Bearer {variables['RAGDOWN_TOKEN']}"}
        async with (
            httpx2.AsyncClient(headers=agent, timeout=30) as http,
            Client(streamable_http_client(f"{url}/mcp/notes", http_client=http)) as client,
        ):
            calls: list[tuple[str, dict[str, Any]]] = [
                ("ragdown_write", {"path": "inbox/first.md", "text": "# First note\n\nAn agent's.\n"}),
                ("ragdown_remember", {"title": "Inspector test note", "content": "Remembered."}),
                (
                    "ragdown_edit",
                    {"path": "recipes.md", "edits": [{"old_text": "2 eggs", "new_text": "3 eggs"}]},
                ),
            ]
            for tool, args in calls:
                result = await client.call_tool(tool, args)
                assert not result.is_error, (tool, text_of(result))

        admin = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {variables['RAGDOWN_ADMIN_TOKEN']}"}, timeout=30
        )
        with admin:
            # The editor: open a document, save it changed; write a new one.
            opened = admin.get("/api/doc", params={"path": "notes/README.md"}).json()
            text, base = opened["text"] + "\nEdited.\n", opened["hash"]
            edited = {"path": "notes/README.md", "text": text, "base_hash": base}
            saved = admin.post("/api/doc", json=edited)
            made = admin.post("/api/doc", json={"path": "notes/from-the-ui.md", "text": "# From the UI\n"})
            # The side bar's MCP switch, off and on; the folder form and the server form saved.
            switched = [admin.patch("/api/folders/notes", json={"mcp": mcp}) for mcp in (False, True)]
            folder_form = admin.patch(
                "/api/folders/notes",
                json={
                    "title": "Example notes",
                    "mcp": True,
                    "read_only": False,
                    "disabled_tools": [],
                    "hook": {"top_k": 3, "min_score": None, "min_ratio": None, "max_chars": None},
                },
            )
            server_form = admin.patch("/api/settings", json={"text_limit": 1500, "hook": {"top_k": 2}})
            for response in (saved, made, *switched, folder_form, server_form):
                assert response.is_success, (response.request.url, response.text)
    finally:
        said = stop_process(process).decode()
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == "", said
    # What was written is kept, in the copy the server says it serves.
    copy = tmp_path / "cache" / "ragdown" / "examples"
    assert f"copied the bundled examples to {copy}" in said
    assert (copy / "notes" / "inbox" / "first.md").is_file()
    assert "3 eggs" in (copy / "notes" / "recipes.md").read_text(encoding="utf-8")
    assert (copy / ".ragdown-server.json").is_file()
