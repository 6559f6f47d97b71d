"""The admin's other routes (docs/tools.md#admin-routes): the query log summed up for the UI's Usage
screen and emptied on request, and deleting Markdown left loose at the top of the docs dir."""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated[..., Depends(local)]
# at definition time, where the local dependencies are in scope.
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from ragdown.documents.files import Root
from ragdown.documents.writes import delete_document
from ragdown.engine import Engine
from ragdown.errors import Refusal
from ragdown.folders.registry import loose_markdown
from ragdown.search.usage import events, summarise
from ragdown.serving.api_access import ApiAccess


def admin_router(access: ApiAccess) -> APIRouter:
    router = APIRouter(prefix="/api", dependencies=[Depends(access.authorised)])

    @router.get("/query-log")
    def usage() -> dict[str, Any]:
        engine = access.current()
        path = engine.query_log_path
        summary = summarise(events([path.with_name(path.name + ".1"), path]), engine.embedder.min_score)
        return {
            "enabled": engine.query_log is not None,
            "min_score": engine.embedder.min_score,
            "summary": {**summary.model_dump(), "hook_rate": summary.hook_rate},
        }

    @router.delete("/query-log")
    def clear() -> dict[str, Any]:
        """Emptied on a read-only server too: the log is the server's, not a document."""
        engine = access.current()
        if engine.query_log is not None:
            engine.query_log.clear()
        else:
            for path in (
                engine.query_log_path,
                engine.query_log_path.with_name(engine.query_log_path.name + ".1"),
            ):
                path.unlink(missing_ok=True)
        return {"cleared": True}

    @router.delete("/loose")
    def delete_loose(engine: Annotated[Engine, Depends(access.writable)], name: str) -> dict[str, Any]:
        if name not in loose_markdown(engine.docs_dir):
            raise Refusal(404, f"no loose Markdown file by that name: {name}")
        delete_document(Root(engine.docs_dir), name)
        return {"deleted": name, "loose_files": loose_markdown(engine.docs_dir)}

    return router
