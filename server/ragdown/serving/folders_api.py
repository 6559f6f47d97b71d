"""`/api/folders` (BEHAVIOUR §7.4): list, create, patch (title, mcp, hook, tool switches, rename) and
delete folders. The rules live in `folders/manage.py`; this module parses, authorises and answers.

The Kubernetes operator is a client like any other: it names itself in `X-Ragdown-Manager`, and a
folder it manages refuses every other caller's change with 409 `managed`, saying which resource to
edit instead.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ragdown.documents.errors import Refusal
from ragdown.documents.paths import is_markdown, is_skipped_entry
from ragdown.engine import Engine
from ragdown.folders.manage import create_folder, delete_folder, existing, patch_folder
from ragdown.folders.registry import Folder, list_folders
from ragdown.folders.settings import ServerSettings

MAX_JSON_BODY = 1024 * 1024
MANAGER_HEADER = "x-ragdown-manager"
READ_ONLY = "The server is read-only (RAGDOWN_READ_ONLY)"
NOT_ADMIN = "this token is an agent's, for /mcp only: /api needs the admin token (RAGDOWN_ADMIN_TOKEN)"
ADMIN_OFF = "the admin API is off: set RAGDOWN_ADMIN_TOKEN on the server and send that token to /api"


def folder_json(folder: Folder, files: int, chunks: int) -> dict[str, Any]:
    hook = folder.config.get("hook")
    out: dict[str, Any] = {
        "name": folder.name,
        "title": folder.title,
        "mcp": folder.mcp,
        "hook": hook if isinstance(hook, dict) else {},
        "mcp_path": "/mcp/" + quote(folder.name, safe=""),
        "files": files,
        "chunks": chunks,
        "read_only": folder.read_only,
        "disabled_tools": sorted(folder.disabled_tools),
    }
    created_by = folder.config.get("created_by")
    if isinstance(created_by, str):
        out["created_by"] = created_by
    if folder.managed_by is not None:
        out["managed_by"] = folder.managed_by
    tokens = folder.config.get("tokens")
    if isinstance(tokens, list):  # their names only: a digest is no one's business but the server's
        out["tokens"] = [t["name"] for t in tokens if isinstance(t, dict) and isinstance(t.get("name"), str)]
    return out


def error(status: int, message: str, code: str | None = None) -> JSONResponse:
    body: dict[str, str] = {"error": message}
    if code:
        body["code"] = code
    return JSONResponse(body, status_code=status)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object: empty and non-object bodies read as {}; too big or invalid refuses."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_JSON_BODY:
        raise Refusal(413, "Body too large")
    raw = b""
    async for part in request.stream():
        raw += part
        if len(raw) > MAX_JSON_BODY:
            raise Refusal(413, "Body too large")
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):  # RecursionError: [[[[…
        raise Refusal(400, "Body is not valid JSON") from None
    return data if isinstance(data, dict) else {}


def folders_router(
    current: Callable[[], Engine],
    settings: ServerSettings,
    admin: Callable[[str | None], bool | None],
    is_reader: Callable[[], bool],
) -> APIRouter:
    """`current()` is the serving engine (it changes when a reader takes over as primary); `admin`
    says whether a request's Authorization is the admin's (None: no token this server knows)."""
    router = APIRouter(prefix="/api")

    def counts(engine: Engine) -> tuple[Counter[str], Counter[str]]:
        """Documents and chunks per folder, kept until the table changes: the operator asks for every
        folder's counts on each resync, and a scan of a large index is not free."""

        def scan() -> tuple[Counter[str], Counter[str]]:
            files: Counter[str] = Counter()
            chunks: Counter[str] = Counter()
            for path, state in engine.store.files().items():
                folder = path.split("/", 1)[0]
                files[folder] += 1
                chunks[folder] += state.chunks
            return files, chunks

        engine.store.refresh()  # a commit by another process counts too
        return engine.store.memo("folder_counts", scan)

    def described(engine: Engine, folder: Folder) -> dict[str, Any]:
        files, chunks = counts(engine)
        return folder_json(folder, files[folder.name], chunks[folder.name])

    def guard(request: Request, *, changes: bool) -> Engine:
        who = admin(request.headers.get("authorization"))
        if who is None:
            raise Refusal(401, "Unauthorized")
        if not who:
            raise Refusal(403, NOT_ADMIN if settings.admin_token else ADMIN_OFF)
        if changes and is_reader():
            raise Refusal(
                409, "this server is a reader: change folders on the primary (the indexer)", "reader"
            )
        return current()

    async def answer(run: Callable[[], tuple[int, dict[str, Any]]]) -> JSONResponse:
        """Runs `run` off the event loop: it touches files and may sync the index."""
        try:
            status, body = await run_in_threadpool(run)
        except Refusal as refusal:
            return error(refusal.status, refusal.message, refusal.code)
        return JSONResponse(body, status_code=status)

    @router.get("/folders")
    async def list_all(request: Request) -> JSONResponse:
        def run() -> tuple[int, dict[str, Any]]:
            engine = guard(request, changes=False)
            files, chunks = counts(engine)
            loose = sorted(
                entry.name
                for entry in os.scandir(engine.docs_dir)
                if entry.is_file(follow_symlinks=False)
                and not is_skipped_entry(entry.name)
                and is_markdown(entry.name)
            )
            folders = [folder_json(f, files[f.name], chunks[f.name]) for f in list_folders(engine.docs_dir)]
            return 200, {"folders": folders, "loose_files": loose}

        return await answer(run)

    @router.get("/folders/{name:path}")
    async def one(name: str, request: Request) -> JSONResponse:
        """One folder, as listed: the operator reads each of its folders this way on every resync, so
        the cost does not grow with the number of other folders."""

        def run() -> tuple[int, dict[str, Any]]:
            engine = guard(request, changes=False)
            return 200, {"folder": described(engine, existing(engine.docs_dir, name))}

        return await answer(run)

    @router.post("/folders")
    async def create(request: Request) -> JSONResponse:
        try:
            engine = guard(request, changes=True)
            if settings.read_only:
                raise Refusal(403, READ_ONLY)
            body = await json_body(request)
        except Refusal as refusal:
            return error(refusal.status, refusal.message, refusal.code)

        def run() -> tuple[int, dict[str, Any]]:
            changes = {k: v for k, v in body.items() if k != "name"}
            caller = request.headers.get(MANAGER_HEADER)
            folder = create_folder(engine.docs_dir, body.get("name"), changes, caller=caller)
            engine.sync()
            return 201, {"folder": described(engine, folder)}

        return await answer(run)

    @router.patch("/folders/{name:path}")
    async def patch(name: str, request: Request) -> JSONResponse:
        try:
            engine = guard(request, changes=True)
            body = await json_body(request)
        except Refusal as refusal:
            return error(refusal.status, refusal.message, refusal.code)

        def run() -> tuple[int, dict[str, Any]]:
            folder, renamed = patch_folder(
                engine.docs_dir,
                name,
                body,
                caller=request.headers.get(MANAGER_HEADER),
                can_rename=not settings.read_only,
            )
            if renamed:
                engine.sync()
            return 200, {"folder": described(engine, folder)}

        return await answer(run)

    @router.delete("/folders/{name:path}")
    async def delete(name: str, request: Request) -> JSONResponse:
        def run() -> tuple[int, dict[str, Any]]:
            engine = guard(request, changes=True)
            if settings.read_only:
                raise Refusal(403, READ_ONLY)
            confirm = request.query_params.get("confirm")
            delete_folder(engine.docs_dir, name, confirm, caller=request.headers.get(MANAGER_HEADER))
            return 200, {"name": name, "sync": engine.sync().model_dump()}

        return await answer(run)

    return router
