"""What `ragdown serve` says as it starts (docs/tools.md#endpoints): the URLs it serves, the folders
it does not, what looks wrong, and how the first sync went. Without it a new user sees a silent
process and a 404 on every /mcp path, and cannot tell a folder without `"mcp": true` from a typo.
The progress bar is also what `ragdown index` and `search` show while they sync."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ragdown import __version__
from ragdown.bounds import FOLDER_CONFIG
from ragdown.folders.registry import list_folders, loose_markdown
from ragdown.indexing.sync import SyncProgress, SyncReport
from ragdown.settings import ServerSettings

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ragdown.engine import Engine

MAX_NAMED = 5


def base_url(settings: ServerSettings) -> str:
    """The address a client on this machine uses: a wildcard bind is reached on loopback."""
    host = settings.host
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.port}"


def named(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def startup_lines(docs: Path, data_dir: Path, settings: ServerSettings, role: str) -> list[str]:
    """The lines `serve` prints before it listens; warnings start with `warning:`."""
    url = base_url(settings)
    auth = (
        "no auth (SECURE_LOCAL_NET)"
        if settings.secure_local_net
        else "send Authorization: Bearer <RAGDOWN_TOKEN>"
        if settings.token
        else "send Authorization: Bearer <RAGDOWN_ADMIN_TOKEN>"
    )
    index = settings.index_uri or data_dir  # an object store's URI names no secret (docs/security.md)
    lines = [f"ragdown {__version__}: {role} for {docs} (index in {index})", f"MCP endpoints ({auth}):"]
    folders = list_folders(docs)
    served = [folder for folder in folders if folder.mcp]
    width = max((len(f"{url}/mcp/{folder.name}") for folder in served), default=0)
    for folder in served:
        title = f"  {folder.title}" if folder.title != folder.name else ""
        lines.append(f"  {f'{url}/mcp/{folder.name}':<{width}}{title}")
    if settings.root_mcp:
        lines.append(f"  {url}/mcp  (every MCP folder the token reaches)")
    hidden = [folder.name for folder in folders if not folder.mcp]
    if hidden:
        lines.append(
            f"Folders without MCP (human-only, 404 on /mcp/<folder>): {named(hidden)}; "
            f'add "mcp": true to a folder\'s {FOLDER_CONFIG} to serve it'
        )
    if not served:
        where = f"no folder in {docs}" if folders else f"{docs} holds no folder"
        lines.append(
            f"warning: {where} has MCP turned on, so every /mcp/<folder> answers 404: create a folder "
            f'with a {FOLDER_CONFIG} of {{"mcp": true}} (or PATCH /api/folders/<name> with the admin token)'
        )
    loose = loose_markdown(docs)
    if loose:
        lines.append(
            f"warning: {len(loose)} Markdown file(s) at the top of {docs} belong to no folder and are "
            f"neither indexed nor served ({named(loose)}): move them into a folder"
        )
    if settings.admin_token or settings.secure_local_net:
        sign_in = "no sign-in: SECURE_LOCAL_NET"
        if settings.admin_token:
            sign_in = "sign in with RAGDOWN_ADMIN_TOKEN"
        lines.append(f"Web UI: {url}/ ({sign_in})")
    else:
        lines.append(f"Web UI: {url}/ is off until RAGDOWN_ADMIN_TOKEN is set (its token signs people in)")
    return lines


def sync_summary(report: SyncReport, documents: int, chunks: int) -> str:
    """One line for the first sync: the index it left (`documents`, `chunks`), what it changed, how
    long it took, and the files it could not index."""
    changes = [
        f"{count} {word}"
        for count, word in ((report.added, "added"), (report.updated, "updated"), (report.removed, "removed"))
        if count
    ]
    line = (
        f"ready: {documents} document(s), {chunks} chunk(s) indexed; synced in {report.ms / 1000:.1f} s "
        f"({', '.join(changes) if changes else 'no change'})"
    )
    if report.failed:
        paths = named([failed.path for failed in report.failed])
        line += f"; {len(report.failed)} file(s) could not be indexed (see the log above): {paths}"
    return line


class ProgressBar:
    """Files and chunks per second on stderr, once a sync has run for more than a second."""

    def __init__(self, stream: TextIO | None = None, delay_s: float = 1.0) -> None:
        self.stream = stream or sys.stderr  # the one in place now (tests swap it)
        self.delay_s = delay_s
        self.tty = self.stream.isatty()
        self.last_line = 0.0
        self.shown = False

    def __call__(self, progress: SyncProgress) -> None:
        elapsed = max(progress.elapsed_s, 1e-9)
        if elapsed < self.delay_s:
            return
        now = time.monotonic()
        if not self.tty and now - self.last_line < 5.0:
            return
        self.last_line = now
        total = max(progress.files_total, 1)
        width = 30
        filled = round(width * progress.files_done / total)
        line = (
            f"[{'#' * filled}{'.' * (width - filled)}] {progress.files_done}/{progress.files_total} files"
            f" · {progress.files_done / elapsed:.0f} files/s · {progress.chunks / elapsed:.0f} chunks/s"
        )
        self.stream.write(("\r" + line) if self.tty else line + "\n")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def say_synced(done: Future[SyncReport], engine: Engine, bar: ProgressBar) -> None:
    """After the first sync of `serve`: one line on what the index now holds, or why it failed."""
    bar.finish()
    error = done.exception()
    if error is not None:
        print(
            f"ragdown: warning: the first sync failed ({error}); searches answer from the index as it is",
            file=sys.stderr,
        )
        return
    documents, chunks = engine.totals()
    print(f"ragdown: {sync_summary(done.result(), documents, chunks)}", file=sys.stderr)


def wait_for_folder(docs: Path, timeout_s: float = 300.0) -> None:
    """A reader on a fresh volume starts before the primary made the docs dir (it mounts the volume
    read-only, so it cannot make it): wait for it rather than exit and crash-loop."""
    deadline = time.monotonic() + timeout_s
    if not docs.exists():
        print(f"ragdown: waiting for the primary to create {docs}", file=sys.stderr)
    while not docs.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
