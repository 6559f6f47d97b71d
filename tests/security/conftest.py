"""The hostile-input sandbox: a served `docs/` with secrets around it (outside it, in a human-only
folder, in dot-folders) and symlinks inside it that point at them; the real servers over it; and the
one check every hostile call must pass (nothing read or changed outside the folder, a clear refusal).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import sys
import unicodedata
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters

from ragdown.documents.paths import is_markdown
from ragdown.settings import ServerSettings
from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served, serve

# "A few hundred characters": a refusal names the problem, it does not echo a 5,000-character path.
MAX_REFUSAL = 500
PROBE_TEXT = "# Hostile probe\n\nWritten by the hostile-input suite.\n"
PASSWD_LINE = "root:x:0:0"

Entry = tuple[str, str]  # (kind, detail): ("file", sha256), ("dir", ""), ("symlink", target)


@dataclass
class Sandbox:
    """`base` holds everything (no HTTP answer may name it); `root` holds `docs/` and `outside/`."""

    base: Path
    root: Path
    sentinels: dict[str, str] = field(default_factory=dict)  # what it guards -> the word

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @property
    def ops(self) -> Path:
        return self.docs / "ops"

    def leaks(self, text: str) -> list[str]:
        return [f"leaked the {where} secret" for where, word in self.sentinels.items() if word in text]

    def state(self) -> dict[str, Entry]:
        """Every entry of the sandbox, plus the few places outside it a bad path could reach."""
        return {**tree(self.root), **world()}


def word() -> str:
    return "w" + secrets.token_hex(8)  # one token for the hash embedder, unique per run


def build_sandbox(base: Path) -> Sandbox:
    box = Sandbox(base=base, root=base / "sandbox")
    words = {name: word() for name in ("outside", "private", "hidden", "git", "node_modules")}
    words |= {"ops .ragdown.json": word(), "notes .ragdown.json": word(), "outside .ragdown.json": word()}
    files = {
        "outside/secret.md": f"# Outside secret {words['outside']}\n\nThe word is {words['outside']}.\n",
        "outside/.ragdown.json": json.dumps(
            {"title": "Outside", "mcp": True, "note": words["outside .ragdown.json"]}
        ),
        "docs/private/.ragdown.json": json.dumps({"title": "Private", "mcp": False}),
        "docs/private/secret.md": f"# Private secret {words['private']}\n\nThe word is {words['private']}.\n",
        "docs/scratch/.ragdown.json": json.dumps({"title": "Scratch", "mcp": False}),
        "docs/ops/.ragdown.json": json.dumps(
            {"title": "Ops", "mcp": True, "note": words["ops .ragdown.json"]}
        ),
        "docs/ops/guide.md": "# Guide\n\nHow we restore the database, step by step.\n",
        "docs/ops/db/vacuum.md": "# Vacuum\n\nNightly vacuum. See [[guide]].\n",
        "docs/ops/.hidden/x.md": f"# Hidden {words['hidden']}\n\nThe word is {words['hidden']}.\n",
        "docs/ops/.git/config": f"[core]\n\tword = {words['git']}\n",
        "docs/ops/node_modules/x.md": f"# Module {words['node_modules']}\n\n{words['node_modules']}\n",
        "docs/ops/notes/.ragdown.json": json.dumps({"title": "Notes", "note": words["notes .ragdown.json"]}),
    }
    for relative, text in files.items():
        path = box.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    links = {
        "docs/ops/etc": "/etc",
        "docs/ops/outdir": "../../outside",
        "docs/ops/private_link": "../private",
        "docs/ops/secret_link.md": "../../outside/secret.md",
        "docs/ops/sub/deeper": "../../../outside",
        # In the notes folder too, where ragdown_remember writes: its `name` goes through these.
        "docs/ops/notes/outdir": "../../../outside",
        "docs/ops/notes/private_link": "../../private",
        # A top-level folder that is a symlink to a folder with MCP on.
        "docs/outside_link": "../outside",
    }
    for relative, target in links.items():
        path = box.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
    box.sentinels = words
    if PASSWD_LINE in Path("/etc/passwd").read_text(encoding="utf-8", errors="replace"):
        box.sentinels["/etc/passwd"] = PASSWD_LINE
    return box


def entry(path: str) -> Entry:
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return ("symlink", os.readlink(path))
    if stat.S_ISDIR(mode):
        return ("dir", "")
    if stat.S_ISREG(mode):
        with open(path, "rb") as file:
            return ("file", hashlib.sha256(file.read()).hexdigest())
    return ("other", oct(mode))


def tree(root: Path) -> dict[str, Entry]:
    """Every entry under `root` by its relative path; a symlink is recorded, never followed."""
    found: dict[str, Entry] = {}
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, root)] = entry(path)
    return found


def world() -> dict[str, Entry]:
    """Outside the sandbox: `/etc` (the `etc` symlink's target; we may run as root), `/tmp/x.md` and
    the working directory (where an absolute or cwd-relative write would land)."""
    found = {f"/etc/{e.name}": ("symlink" if e.is_symlink() else "entry", "") for e in os.scandir("/etc")}
    found["/etc/passwd"] = entry("/etc/passwd")
    if os.path.lexists("/tmp/x.md"):
        found["/tmp/x.md"] = entry("/tmp/x.md")
    found |= {f"cwd/{e.name}": ("entry", "") for e in os.scandir(os.getcwd())}
    return found


def may_change(relative: str, before: Entry | None, after: Entry | None) -> bool:
    """What a legitimate write may change: Markdown files and real folders inside `docs/ops`, never
    in a dot-folder or `node_modules`, never a symlink (made, changed or removed)."""
    parts = relative.split("/")
    if parts[:2] != ["docs", "ops"] or len(parts) < 3:
        return False
    if any(p.startswith(".") or p == "node_modules" for p in parts[2:]):
        return False
    return all(
        e is None or e[0] == "dir" or (e[0] == "file" and is_markdown(parts[-1])) for e in (before, after)
    )


def changes(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    found = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old != new and not may_change(key, old, new):
            found.append(f"changed {key!a}: {old} -> {new}")
    return found


def shown(text: str, limit: int = 300) -> str:
    """A response as a failure message shows it: escaped, and cut."""
    return ascii(text[:limit]) + (f"… ({len(text):,} characters)" if len(text) > limit else "")


def unclear(message: str) -> list[str]:
    """Why a refusal is not a clear message, if it is not."""
    found = []
    if not message.strip():
        found.append("the refusal is empty")
    if "failed unexpectedly" in message:
        found.append("an unexpected failure (a traceback in the server log), not a refusal")
    if len(message.splitlines()) > 1:
        found.append("the refusal spans several lines (a name can forge lines in it)")
    if any(unicodedata.category(c) == "Cc" for c in message):
        found.append("the refusal carries control characters")
    if len(message) > MAX_REFUSAL:
        found.append(f"the refusal is {len(message):,} characters long (at most {MAX_REFUSAL})")
    return found


@dataclass(frozen=True)
class Outcome:
    text: str
    is_error: bool


@dataclass
class McpTarget:
    """One MCP endpoint under attack. `remote`: its answers cross the network, so they must not name
    the server's absolute paths. `fixed`: arguments every call carries (root `/mcp`'s folder)."""

    name: str
    client: Client
    remote: bool
    fixed: dict[str, Any] = field(default_factory=dict)

    async def call(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        try:
            result = await self.client.call_tool(tool, {**arguments, **self.fixed})
        except MCPError as error:  # a protocol-level error (a schema violation) refuses too
            return Outcome(error.message, True)
        text = "".join(getattr(c, "text", "") for c in result.content)
        return Outcome(text, bool(result.is_error))


def verdict(
    box: Sandbox,
    outcome: Outcome,
    before: dict[str, Entry],
    after: dict[str, Entry],
    *,
    must_refuse: bool,
    remote: bool,
) -> list[str]:
    """Every way one hostile call went wrong; empty when it was handled."""
    found = box.leaks(outcome.text) + changes(before, after)
    if remote and (str(box.base) in outcome.text or os.path.realpath(box.base) in outcome.text):
        found.append("named the server's absolute path")
    if must_refuse and not outcome.is_error:
        found.append("accepted")
    if outcome.is_error:
        found += unclear(outcome.text)
    return found


async def attack(
    box: Sandbox, target: McpTarget, tool: str, arguments: dict[str, Any], *, must_refuse: bool
) -> Outcome:
    """One hostile call, held to every rule of the suite at once (all failures in one message)."""
    before = box.state()
    outcome = await target.call(tool, arguments)
    problems = verdict(box, outcome, before, box.state(), must_refuse=must_refuse, remote=target.remote)
    if problems:  # one line per case in the report, not a traceback
        pytest.fail(
            f"{target.name} {tool}: {'; '.join(problems)}\n  answer: {shown(outcome.text)}", pytrace=False
        )
    return outcome


@dataclass(frozen=True)
class Hostile:
    """One path-like input. `inside`: it names nothing outside the folder when taken literally (an
    odd but legal name), so a server may accept it as long as nothing outside is touched."""

    id: str
    path: str
    inside: bool = False


CORPUS = [
    Hostile("dotdot", ".."),
    Hostile("parent", "../outside/secret.md"),
    Hostile("grandparent", "../../outside/secret.md"),
    Hostile("folder_then_up", "ops/../../outside/secret.md"),
    Hostile("absolute_passwd", "/etc/passwd"),
    Hostile("absolute_tmp", "/tmp/x.md"),
    Hostile("windows_drive", "C:\\x.md"),
    Hostile("percent_encoded_up", "%2e%2e/%2e%2e/outside/secret.md", inside=True),
    Hostile("backslash_up", "..\\..\\outside\\secret.md"),
    Hostile("backslash_mixed", "a\\..\\..\\x.md"),
    Hostile("nul", "x\x00.md"),
    Hostile("newline", "a\nb.md"),
    Hostile("carriage_return", "a\rb.md"),
    Hostile("tab", "a\tb.md"),
    Hostile("ansi_escape", "\x1b[31m.md"),
    Hostile("line_separator", "a\u2028b.md"),
    Hostile("rtl_override", "a\u202eb.md"),
    Hostile("one_dot_leaders", "\u2024\u2024/x.md", inside=True),
    Hostile("fullwidth_dots", "\uff0e\uff0e/x.md", inside=True),
    Hostile("fullwidth_dots_slash", "\uff0e\uff0e\uff0fx.md", inside=True),
    Hostile("two_dot_leader", "\u2025/x.md", inside=True),
    Hostile("long_name", "a" * 5000 + ".md"),
    Hostile("long_name_bytes", "\u00e9" * 130 + ".md"),  # 263 bytes in 133 characters
    Hostile("long_path", "/".join(["b" * 200] * 10) + ".md"),
    Hostile("symlink_etc", "etc/passwd"),
    Hostile("symlink_dir", "outdir/secret.md"),
    Hostile("symlink_dir_new", "outdir/new.md"),
    Hostile("symlink_private", "private_link/secret.md"),
    Hostile("symlink_file", "secret_link.md"),
    Hostile("symlink_nested", "sub/deeper/secret.md"),
    Hostile("symlink_nested_new", "sub/deeper/new.md"),
    Hostile("dot_folder", ".hidden/x.md"),
    Hostile("dot_config", ".ragdown.json"),
    Hostile("dot_git", ".git/config"),
    Hostile("dot_config_nested", "notes/.ragdown.json"),
    Hostile("node_modules", "node_modules/x.md"),
]

# Folder names that are no folder an agent may use: climbing, human-only, a symlink, encoded.
HOSTILE_FOLDERS = [
    Hostile("parent_docs", "../docs"),
    Hostile("human_only", "private"),
    Hostile("dot", "."),
    Hostile("dotdot", ".."),
    Hostile("absolute_etc", "/etc"),
    Hostile("through_ops", "ops/../private"),
    Hostile("backslash_through_ops", "ops\\..\\private"),
    Hostile("percent_dotdot", "%2e%2e"),
    Hostile("symlink_top", "outside_link"),
    Hostile("symlink_in_ops", "ops/private_link"),
    Hostile("sub_symlink", "ops/outdir"),
    Hostile("dot_folder", ".hidden"),
    Hostile("dot_folder_in_ops", "ops/.hidden"),
    Hostile("nul", "ops\x00"),
    Hostile("newline", "ops\nprivate"),
    Hostile("fullwidth_dots", "\uff0e\uff0e"),
    Hostile("long", "a" * 5000),
]


def ids(items: list[Hostile]) -> list[str]:
    return [h.id for h in items]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module-wide: the servers' clients live as long as the module's tests


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    return build_sandbox(tmp_path_factory.mktemp("hostile"))


def hostile_settings() -> ServerSettings:
    """Both tokens, no watcher, every hook gate open and root `/mcp` on: every route reachable."""
    return ServerSettings(
        token=TOKEN,
        admin_token=ADMIN_TOKEN,
        watch=False,
        hook_min_score=0.0,
        hook_min_ratio=0.0,
        root_mcp=True,
    )


@pytest.fixture(scope="module")
def served(sandbox: Sandbox) -> Iterator[Served]:
    """`serve` over the sandbox's docs (folders `ops`, `private`, `scratch`), root `/mcp` on."""
    yield from serve(sandbox.docs, sandbox.base / "data-http", hostile_settings())


def stdio_params(box: Sandbox) -> StdioServerParameters:
    """`ragdown stdio docs/ops`: the folder itself is the root."""
    data = box.base / "data-stdio"
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragdown.cli", "stdio", str(box.ops), "--embedder", "hash", "--data-dir", str(data)],
        env={**os.environ, "RAGDOWN_WATCH": "false"},
    )


@pytest.fixture(scope="module")
async def root_client(served: Served, anyio_backend: str) -> AsyncIterator[Client]:
    async with served.mcp("/mcp") as client:
        yield client
