"""`/api/folders` (docs/tools.md#folder-routes): list, create, patch (title, mcp, hook, tool switches, rename)
and
delete folders. The rules live in `folders/manage.py`; this module parses, authorises and answers.

The Kubernetes operator is a client like any other: it names itself in `X-Ragdown-Manager`, and a
folder it manages refuses every other caller's change with 409 `managed`, saying which resource to
edit instead.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated[..., Depends(local)]
# at definition time, where the local dependencies are in scope.
import json
import os
from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request

from ragdown.documents.paths import is_markdown, is_skipped_entry
from ragdown.engine import Engine
from ragdown.errors import Refusal
from ragdown.folders.manage import create_folder, delete_folder, existing, patch_folder
from ragdown.folders.registry import Folder, list_folders
from ragdown.folders.settings import ServerSettings
from ragdown.serving.auth import Unauthorized

MAX_JSON_BODY = 1024 * 1024
MANAGER_HEADER = "x-ragdown-manager"
READER = "reader"
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


def _json_kind(value: object) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else "a number"


async def json_object(request: Request) -> dict[str, Any]:
    """The request's JSON object (a dependency): an empty body reads as {}; a body over 1 MiB, not
    JSON, or JSON that is not an object is refused."""
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
    if not isinstance(data, dict):
        raise Refusal(400, f'Body must be a JSON object such as {{"title": "Ops"}}, got {_json_kind(data)}')
    return data


JsonObject = Annotated[dict[str, Any], Depends(json_object)]


def folders_router(
    current: Callable[[], Engine],
    settings: ServerSettings,
    admin: Callable[[str | None], bool | None],
    is_reader: Callable[[], bool],
) -> APIRouter:
    """`current()` is the serving engine (it changes when a reader takes over as primary); `admin`
    says whether a request's Authorization is the admin's (None: no token this server knows).
    Refusals raised here are answered by the app's one handler (serving/http.py)."""

    def authorised(request: Request) -> None:
        who = admin(request.headers.get("authorization"))
        if who is None:
            raise Unauthorized(request.headers.get("authorization"))
        if not who:
            raise Refusal(403, NOT_ADMIN if settings.admin_token else ADMIN_OFF)

    router = APIRouter(prefix="/api", dependencies=[Depends(authorised)])

    def primary() -> Engine:
        """The engine of a server that may change folders: the primary's."""
        if is_reader():
            raise Refusal(
                409, "this server is a reader: change folders on the primary (the indexer)", "reader"
            )
        return current()

    def writable(engine: Annotated[Engine, Depends(primary)]) -> Engine:
        if settings.read_only:
            raise Refusal(403, READ_ONLY)
        return engine

    def described(engine: Engine, folder: Folder) -> dict[str, Any]:
        files, chunks = engine.folder_counts().get(folder.name, (0, 0))
        return folder_json(folder, files, chunks)

    @router.get("/folders")
    def list_all() -> dict[str, Any]:
        engine = current()
        loose = sorted(
            entry.name
            for entry in os.scandir(engine.docs_dir)
            if entry.is_file(follow_symlinks=False)
            and not is_skipped_entry(entry.name)
            and is_markdown(entry.name)
        )
        return {
            "folders": [described(engine, f) for f in list_folders(engine.docs_dir)],
            "loose_files": loose,
        }

    @router.get("/folders/{name:path}")
    def one(name: str) -> dict[str, Any]:
        """One folder, as listed: the operator reads each of its folders this way on every resync, so
        the cost does not grow with the number of other folders."""
        engine = current()
        return {"folder": described(engine, existing(engine.docs_dir, name))}

    @router.post("/folders", status_code=201)
    def create(
        request: Request, engine: Annotated[Engine, Depends(writable)], body: JsonObject
    ) -> dict[str, Any]:
        changes = {k: v for k, v in body.items() if k != "name"}
        caller = request.headers.get(MANAGER_HEADER)
        folder = create_folder(engine.docs_dir, body.get("name"), changes, caller=caller)
        engine.sync()
        return {"folder": described(engine, folder)}

    @router.patch("/folders/{name:path}")
    def patch(
        name: str, request: Request, engine: Annotated[Engine, Depends(primary)], body: JsonObject
    ) -> dict[str, Any]:
        folder, renamed = patch_folder(
            engine.docs_dir,
            name,
            body,
            caller=request.headers.get(MANAGER_HEADER),
            can_rename=not settings.read_only,
        )
        if renamed:
            engine.sync()
        return {"folder": described(engine, folder)}

    @router.delete("/folders/{name:path}")
    def delete(name: str, request: Request, engine: Annotated[Engine, Depends(writable)]) -> dict[str, Any]:
        confirm = request.query_params.get("confirm")
        delete_folder(engine.docs_dir, name, confirm, caller=request.headers.get(MANAGER_HEADER))
        return {"name": name, "sync": engine.sync().model_dump()}

    return router
