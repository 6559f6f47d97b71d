"""`/api/folders` (docs/tools.md#folder-routes): list, create, patch (title, mcp, hook, tool switches, rename)
and
delete folders. The rules live in `folders/manage.py`; this module parses, authorises and answers.

The Kubernetes operator is a client like any other: it names itself in `X-Ragdown-Manager`, and a
folder it manages refuses every other caller's change with 409 `managed`, saying which resource to
edit instead.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated[..., Depends(local)]
# at definition time, where the local dependencies are in scope.
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request

from ragdown.engine import Engine
from ragdown.folders.manage import create_folder, delete_folder, existing, patch_folder
from ragdown.folders.registry import Folder, list_folders, loose_markdown, tokens_fingerprint
from ragdown.serving.api_access import ApiAccess, read_json_body

MANAGER_HEADER = "x-ragdown-manager"


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
    if "tokens" in folder.config:  # what the operator compares its wanted entries with (drift)
        out["tokens_fingerprint"] = tokens_fingerprint(tokens)
    return out


async def json_object(request: Request) -> dict[str, Any]:
    """The request's JSON object, up to 1 MiB (a dependency)."""
    return await read_json_body(request)


JsonObject = Annotated[dict[str, Any], Depends(json_object)]


def folders_router(access: ApiAccess) -> APIRouter:
    """The folder routes; refusals raised here are answered by the app's one handler (serving/http.py)."""
    router = APIRouter(prefix="/api", dependencies=[Depends(access.authorised)])
    current, settings = access.current, access.settings
    primary, writable = access.primary, access.writable

    def described(engine: Engine, folder: Folder) -> dict[str, Any]:
        files, chunks = engine.folder_counts().get(folder.name, (0, 0))
        return folder_json(folder, files, chunks)

    @router.get("/folders")
    def list_all() -> dict[str, Any]:
        """Every folder; the counts are looked up once for all of them (the operator's resyncs share
        this listing, so it must not cost a table check per folder)."""
        engine = current()
        counts = engine.folder_counts()
        return {
            "folders": [folder_json(f, *counts.get(f.name, (0, 0))) for f in list_folders(engine.docs_dir)],
            "loose_files": loose_markdown(engine.docs_dir),
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
        else:  # readers without the folder read its settings from the copy beside the index
            engine.publish_folder_copy()
        return {"folder": described(engine, folder)}

    @router.delete("/folders/{name:path}")
    def delete(name: str, request: Request, engine: Annotated[Engine, Depends(writable)]) -> dict[str, Any]:
        confirm = request.query_params.get("confirm")
        delete_folder(engine.docs_dir, name, confirm, caller=request.headers.get(MANAGER_HEADER))
        return {"name": name, "sync": engine.sync().model_dump()}

    return router
