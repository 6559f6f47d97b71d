"""Every tool that takes a path, attacked with every hostile path, over real HTTP (`/mcp/ops`), over
root `/mcp` (`folder: "ops"`) and over stdio (`ragdown stdio docs/ops`).

Each call must read nothing outside the folder, change nothing outside it and, when it refuses, say
so in one short line; an input that names something outside the folder must be refused.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from ragdown.documents.paths import is_markdown
from tests.security.conftest import (
    CORPUS,
    PROBE_TEXT,
    Hostile,
    McpTarget,
    Sandbox,
    attack,
    build_sandbox,
    shown,
    stdio_params,
)
from tests.serving.conftest import Served

pytestmark = pytest.mark.anyio

LEGIT = "legit-move.md"  # the document a hostile move's other end names
# As a `ragdown_remember` name these land in a real folder under notes/ (only notes/outdir and
# notes/private_link are symlinks there), so taking them literally stays inside.
INSIDE_NOTES = {"symlink_etc", "symlink_file", "symlink_nested", "symlink_nested_new"}


def naive_target(box: Sandbox, path: str) -> Path | None:
    """The file `path` names when joined to the folder and followed blindly (symlinks, `\\` as `/`), if
    that is a file of the sandbox. The attack then carries its true hash and a passage of it, so a
    server that follows the path would act; a file outside the sandbox (`/etc`: we may be root) gets a
    wrong hash and a passage it lacks, so even a broken server cannot change it."""
    try:
        full = os.path.realpath(box.ops / path.replace("\\", "/"))
    except ValueError:  # a NUL
        return None
    if not full.startswith(os.path.realpath(box.root) + "/") or not os.path.isfile(full):
        return None
    return Path(full)


def base_hash(box: Sandbox, path: str) -> str:
    found = naive_target(box, path)
    return hashlib.sha256(found.read_bytes()).hexdigest() if found else "0" * 64


def passage(box: Sandbox, path: str) -> str:
    """Text the target holds before its secret word (the request must never carry a secret)."""
    found = naive_target(box, path)
    if found is None:
        return "no such passage anywhere"
    text = found.read_text(encoding="utf-8", errors="replace")
    for secret in box.sentinels.values():
        text = text.split(secret)[0]
    return text.strip().splitlines()[0][:40] if text.strip() else "no such passage anywhere"


def is_document(box: Sandbox, path: str) -> bool:
    """`path` is a Markdown file of the folder itself: reached through no symlink, in no dot-folder."""
    folder = os.path.realpath(box.ops)
    full = os.path.join(folder, path)
    parts = path.split("/")
    return (
        os.path.realpath(full) == full
        and os.path.isfile(full)
        and is_markdown(path)
        and not any(p.startswith(".") or p == "node_modules" for p in parts)
    )


READ_HEADER = re.compile(r"(?s)(?P<path>.*?):\d+-\d+ of \d+ \(hash [0-9a-f]{12}")
LIST_LINE = re.compile(r"^(?P<path>.+?) — ")


Arguments = Callable[[Sandbox, Hostile], dict[str, Any]]


@dataclass(frozen=True)
class ToolCase:
    """A tool with the hostile path in one of its arguments."""

    id: str
    tool: str
    arguments: Arguments
    opens: bool = True  # the path names a file or folder to open: a hostile one must be refused


TOOL_CASES = [
    # Creating first: the odd-but-inside names then exist for the reads and changes after.
    ToolCase("write_create", "ragdown_write", lambda b, h: {"path": h.path, "text": PROBE_TEXT}),
    ToolCase("read_doc", "ragdown_read_doc", lambda b, h: {"path": h.path}),
    ToolCase("backlinks", "ragdown_backlinks", lambda b, h: {"path": h.path}),
    ToolCase(
        "write_replace",
        "ragdown_write",
        lambda b, h: {"path": h.path, "text": PROBE_TEXT, "base_hash": base_hash(b, h.path)},
    ),
    ToolCase(
        "write_append",
        "ragdown_write",
        lambda b, h: {"path": h.path, "text": "appended", "append": True, "base_hash": base_hash(b, h.path)},
    ),
    ToolCase(
        "edit",
        "ragdown_edit",
        lambda b, h: {"path": h.path, "edits": [{"old_text": passage(b, h.path), "new_text": "pwned"}]},
    ),
    ToolCase("move_to", "ragdown_move", lambda b, h: {"from": LEGIT, "to": h.path}),
    ToolCase("move_from", "ragdown_move", lambda b, h: {"from": h.path, "to": f"moved-{h.id}.md"}),
    ToolCase(
        "remember_name",
        "ragdown_remember",
        lambda b, h: {"title": "Hostile probe", "content": "probe", "name": h.path},
    ),
    ToolCase(
        "remember_supersedes",
        "ragdown_remember",
        lambda b, h: {"title": "Hostile probe", "content": "probe", "supersedes": [h.path]},
    ),
    ToolCase(
        "recall_prefix",
        "ragdown_recall",
        lambda b, h: {"query": "secret word", "path_prefix": h.path, "top_k": 50},
        opens=False,
    ),
    ToolCase("list_prefix", "ragdown_list", lambda b, h: {"path_prefix": h.path}, opens=False),
    ToolCase("delete", "ragdown_delete", lambda b, h: {"path": h.path, "recursive": True}),
]


def must_refuse(case: ToolCase, hostile: Hostile) -> bool:
    """A path prefix only filters (any answer without outside entries will do); a path to open that
    leaves the folder, or breaks the name rules, must be refused."""
    if not case.opens or hostile.inside:
        return False
    return not (case.id == "remember_name" and hostile.id in INSIDE_NOTES)


MATRIX = [
    pytest.param(case, hostile, id=f"{case.id}-{hostile.id}") for case in TOOL_CASES for hostile in CORPUS
]


# Over stdio the matrix runs against a `ragdown stdio` process: left to the full run.
@pytest.fixture(scope="module", params=["http", "root", pytest.param("stdio", marks=pytest.mark.slow)])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def sandbox(transport: str, tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """A fresh sandbox per transport: what one transport's accepted attacks left behind (a file
    named with a newline, a note) cannot change how the next transport's cases turn out."""
    return build_sandbox(tmp_path_factory.mktemp(f"hostile-{transport}"))


@pytest.fixture(scope="module")
async def target(
    transport: str, request: pytest.FixtureRequest, sandbox: Sandbox, anyio_backend: str
) -> AsyncIterator[McpTarget]:
    """The transport's client, kept for the module: `/mcp/ops`, root `/mcp` with `folder: "ops"`, or
    a `ragdown stdio` process serving `docs/ops` (absolute paths are its own user's there)."""
    if transport == "stdio":
        async with Client(stdio_params(sandbox)) as client:
            yield McpTarget("stdio", client, remote=False)
        return
    served: Served = request.getfixturevalue("served")
    path, fixed = ("/mcp/ops", {}) if transport == "http" else ("/mcp", {"folder": "ops"})
    async with served.mcp(path) as client:
        yield McpTarget(transport, client, remote=True, fixed=fixed)


@pytest.mark.parametrize(("case", "hostile"), MATRIX)
async def test_hostile_path(target: McpTarget, sandbox: Sandbox, case: ToolCase, hostile: Hostile) -> None:
    """One tool, one hostile path, one transport: held to every rule in `attack`."""
    if not (sandbox.ops / LEGIT).exists():  # a move that was allowed took it away
        (sandbox.ops / LEGIT).write_text("# Legit\n\nA document to move.\n", encoding="utf-8")
    outcome = await attack(
        sandbox, target, case.tool, case.arguments(sandbox, hostile), must_refuse=must_refuse(case, hostile)
    )
    if case.id == "read_doc" and not outcome.is_error:  # an odd name may resolve: to a document in here
        header = READ_HEADER.match(outcome.text)
        assert header, shown(outcome.text)
        assert is_document(sandbox, header["path"]), shown(outcome.text)


async def test_deleting_a_subfolder_keeps_what_its_symlinks_point_at(
    target: McpTarget, sandbox: Sandbox
) -> None:
    """`rm -r` of a real subfolder holding a symlink to a folder outside: the symlink may go with it,
    what it points at may not (so the subfolder's own entries are expected to change here)."""
    trap = sandbox.ops / f"trap-{target.name}"
    trap.mkdir()
    (trap / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    (trap / "deeper").symlink_to("../../../outside")
    outside = {p: p.read_bytes() for p in (sandbox.root / "outside").rglob("*")}
    outcome = await target.call("ragdown_delete", {"path": trap.name, "recursive": True})
    assert {p: p.read_bytes() for p in (sandbox.root / "outside").rglob("*")} == outside
    assert not sandbox.leaks(outcome.text)
    assert outcome.is_error or not os.path.lexists(trap)


async def test_the_listing_has_no_forged_or_outside_lines(target: McpTarget, sandbox: Sandbox) -> None:
    """After every attack: each line of `ragdown_list` is one real Markdown file of the folder, so no
    name written with a newline forged a line and no entry came from outside."""
    reindex = await target.client.call_tool("ragdown_reindex", {})  # no `folder`, even on root /mcp
    assert not reindex.is_error
    listing = await target.call("ragdown_list", {"limit": 1000})
    assert not listing.is_error, listing.text
    assert not sandbox.leaks(listing.text)
    header, *lines = listing.text.splitlines()
    assert header.startswith("documents: ")
    bad = [
        ascii(line[:200])
        for line in lines
        if not ((m := LIST_LINE.match(line)) and is_document(sandbox, m["path"]))
    ]
    assert not bad, "lines that are no document of the folder:\n" + "\n".join(bad)
