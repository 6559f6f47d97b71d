"""The admin's other routes (docs/tools.md#admin-routes): server settings saved over the environment,
the query log summed up for the UI's Usage screen and emptied on request, and deleting Markdown left
loose at the top of the docs dir."""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated[..., Depends(local)]
# at definition time, where the local dependencies are in scope.
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from ragdown.documents.files import Root
from ragdown.documents.writes import delete_document
from ragdown.engine import Engine
from ragdown.errors import Refusal
from ragdown.folders.manage import merge_hook
from ragdown.folders.registry import loose_markdown
from ragdown.folders.saved import SAVED_KEYS, check_value, in_effect, read_saved, save_changes
from ragdown.folders.settings import ServerSettings
from ragdown.indexing.embedders import EmbedderError
from ragdown.search.usage import events, summarise
from ragdown.serving.api_access import ApiAccess, read_json_object


def admin_router(access: ApiAccess, environment: ServerSettings) -> APIRouter:
    """`environment` is what the variables say; the saved file's values go over it."""
    router = APIRouter(prefix="/api", dependencies=[Depends(access.authorised)])

    def described(engine: Engine) -> dict[str, Any]:
        saved = read_saved(engine.docs_dir)
        return {
            "settings": {key: getattr(engine.settings, key) for key in SAVED_KEYS}
            | {
                "embedder": engine.embedder.name
                if engine.settings.embedder is None
                else engine.settings.embedder
            },
            "saved": saved,
            "env": {key: getattr(environment, key) for key in SAVED_KEYS}
            | {"hook": environment.hook_layer()},
        }

    @router.get("/settings")
    def settings() -> dict[str, Any]:
        return described(access.current())

    @router.patch("/settings")
    async def change(request: Request) -> dict[str, Any]:
        changes = await read_json_object(request)
        return await run_in_threadpool(apply, changes)

    def apply(changes: dict[str, Any]) -> dict[str, Any]:
        engine = access.writable()
        if not changes:
            raise Refusal(400, f"send at least one setting: {', '.join((*SAVED_KEYS, 'hook'))}")
        for key, value in changes.items():  # every value checked before anything changes
            if key == "hook":
                merge_hook(value, {})
            elif value is not None or key not in SAVED_KEYS:
                check_value(key, value)
        if "embedder" in changes:
            name = changes["embedder"] or environment.embedder
            if name is not None:
                try:  # loaded first: one that cannot load changes nothing
                    engine.switch_embedder(name)
                except EmbedderError as error:
                    raise Refusal(
                        400, f"the embedder {name} cannot be loaded, so nothing changed: {error}"
                    ) from None
        save_changes(engine.docs_dir, changes)
        engine.apply_settings(in_effect(environment, read_saved(engine.docs_dir)))
        return described(engine)

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
