"""The document routes of `/api` that change documents (docs/tools.md#document-routes): save, delete
and move, for the web UI. Each answers once the index has synced; `RAGDOWN_READ_ONLY` and a reader
refuse them before the body is read (serving/api_access.py)."""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated[..., Depends(local)]
# at definition time, where the local dependencies are in scope.
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.writes import delete_document, save
from ragdown.engine import Engine
from ragdown.errors import BadRequestError
from ragdown.scoped_changes import indexed, moved
from ragdown.serving.api_access import ApiAccess, body_of, read_json_body
from ragdown.serving.docs_api import MAX_DOC_BODY, place_of, split_folder


class SaveBody(BaseModel):
    """POST /api/doc: a new document, or a save over the version the editor opened (`base_hash`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    path: str = Field(min_length=1)
    text: str
    overwrite: bool = False
    base_hash: str | None = Field(default=None, min_length=12, max_length=64)


class MoveBody(BaseModel):
    """POST /api/move: a document or subfolder from one path to another within its folder."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    source: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)


async def save_body(request: Request) -> SaveBody:
    return body_of(SaveBody, await read_json_body(request, MAX_DOC_BODY))


async def move_body(request: Request) -> MoveBody:
    return body_of(MoveBody, await read_json_body(request))


def synced(engine: Engine, changed: list[str]) -> bool:
    """Index the change just written to `changed` (docs-dir-relative); False when that failed (it is
    on disk all the same)."""
    return indexed(place_of(engine, ""), changed) == ""


def saved_json(engine: Engine, body: SaveBody) -> tuple[int, dict[str, Any]]:
    """POST /api/doc: the status (201 for a new document) and the answer."""
    folder, inside = split_folder(engine, body.path, markdown=True)
    result = save(
        Root(engine.docs_dir, (folder,)),
        inside,
        body.text,
        overwrite=body.overwrite,
        base_hash=body.base_hash,
        display_path=f"{folder}/{inside}",
    )
    answer = {
        "path": f"{folder}/{result.path}",
        "hash": result.hash,
        "created": result.created,
        "indexed": synced(engine, [f"{folder}/{result.path}"]),
    }
    return (201 if result.created else 200), answer


def deleted_json(engine: Engine, path: str, base_hash: str | None) -> dict[str, Any]:
    """DELETE /api/doc: the document, and the sub-folders it leaves empty up to its folder (never the
    folder itself), as a person deleting the last note of a sub-folder expects (docs/web.md#screens)."""
    folder, inside = split_folder(engine, path, markdown=True)
    root = Root(engine.docs_dir, (folder,))
    removed = delete_document(root, inside, base_hash=base_hash, display_path=f"{folder}/{inside}")
    files.remove_empty_parents(root, removed.split("/")[:-1])
    return {"path": f"{folder}/{removed}", "indexed": synced(engine, [f"{folder}/{removed}"])}


def moved_json(engine: Engine, body: MoveBody) -> dict[str, Any]:
    """POST /api/move: within one folder; the links to what moved rewritten."""
    folder, source = split_folder(engine, body.source, markdown=False)
    target_folder, target = split_folder(engine, body.to, markdown=False)
    if target_folder != folder:
        raise BadRequestError(
            f"a move stays within its folder ({folder}); to go elsewhere, save a copy there"
        )
    result, pending = moved(place_of(engine, folder), source, target)
    return {
        "from": f"{folder}/{result.from_path}",
        "to": f"{folder}/{result.to_path}",
        "updated": [f"{folder}/{p}" for p in result.updated],
        "indexed": pending == "",
    }


def docs_write_router(access: ApiAccess) -> APIRouter:
    """The routes that change documents: on the primary of a server that is not read-only, checked
    before the body is read; refusals are answered by the app's one handler (serving/http.py)."""
    router = APIRouter(prefix="/api", dependencies=[Depends(access.authorised)])
    Writable = Annotated[Engine, Depends(access.writable)]  # noqa: N806 (a type, named as one)

    @router.post("/doc")
    def save_doc(
        response: Response, engine: Writable, body: Annotated[SaveBody, Depends(save_body)]
    ) -> dict[str, Any]:
        response.status_code, answer = saved_json(engine, body)
        return answer

    @router.delete("/doc")
    def delete_doc(engine: Writable, path: str, base_hash: str | None = None) -> dict[str, Any]:
        return deleted_json(engine, path, base_hash)

    @router.post("/move")
    def move(engine: Writable, body: Annotated[MoveBody, Depends(move_body)]) -> dict[str, Any]:
        return moved_json(engine, body)

    return router
