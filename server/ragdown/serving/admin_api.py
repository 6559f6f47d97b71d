"""The admin's other routes (docs/tools.md#admin-routes): server settings saved over the environment,
the query log summed up for the UI's Usage screen and emptied on request, deleting Markdown left
loose at the top of the docs dir, and the doctor's checks (docs/doctor.md)."""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated[..., Depends(local)]
# at definition time, where the local dependencies are in scope.
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from ragdown.bounds import HOOK_KEYS
from ragdown.doctor.run import run_checks
from ragdown.doctor.target import Target
from ragdown.documents.files import Root
from ragdown.documents.writes import delete_document
from ragdown.engine import Engine
from ragdown.errors import BadRequestError, EmbedderError, NotFoundError
from ragdown.folders.registry import loose_markdown
from ragdown.folders.saved import SAVED_KEYS, in_effect, merged, read_saved, write_saved
from ragdown.hook.settings import resolve as resolve_hook
from ragdown.search.query_log import QueryLog
from ragdown.search.usage import events, summarise
from ragdown.serving.api_access import ApiAccess, read_json_body
from ragdown.settings import ServerSettings


def variable(key: str) -> str:
    """The environment variable of a saved setting (`hook.top_k` → RAGDOWN_HOOK_TOP_K)."""
    return "RAGDOWN_" + key.replace(".", "_").upper()


def defaults(engine: Engine, environment: ServerSettings) -> dict[str, Any]:
    """What each setting is when nothing is saved for it (docs/web.md#server-settings): its value, the
    variable that sets it, and whether that variable is set (else the value is the built-in one). An
    embedder no variable names is the index's, the one in use."""
    given = environment.model_fields_set

    def entry(key: str, field: str, value: object) -> dict[str, Any]:
        return {"value": value, "variable": variable(key), "set": field in given}

    out: dict[str, Any] = {key: entry(key, key, getattr(environment, key)) for key in SAVED_KEYS}
    if environment.embedder is None:
        out["embedder"]["value"] = engine.embedder.name
    hook = resolve_hook({}, [environment.hook_layer()], engine.embedder.min_score, engine.embedder.min_ratio)
    out["hook"] = {key: entry(f"hook.{key}", f"hook_{key}", getattr(hook, key)) for key in HOOK_KEYS}
    return out


def described(engine: Engine, environment: ServerSettings) -> dict[str, Any]:
    """GET /api/settings: what is in effect, what is saved, what the variables alone say, and what
    each setting falls back to when its saved value is removed (`defaults`)."""
    saved = read_saved(engine.docs_dir)
    embedder = engine.embedder.name if engine.settings.embedder is None else engine.settings.embedder
    return {
        "settings": {key: getattr(engine.settings, key) for key in SAVED_KEYS} | {"embedder": embedder},
        "saved": saved,
        "env": {key: getattr(environment, key) for key in SAVED_KEYS} | {"hook": environment.hook_layer()},
        "defaults": defaults(engine, environment),
    }


def changed(engine: Engine, environment: ServerSettings, changes: dict[str, Any]) -> dict[str, Any]:
    """PATCH /api/settings: every value checked, and a new embedder loaded, before anything changes."""
    if not changes:
        raise BadRequestError(f"send at least one setting: {', '.join((*SAVED_KEYS, 'hook'))}")
    saved = merged(engine.docs_dir, changes)
    if "embedder" in changes:
        name = changes["embedder"] or environment.embedder
        if name is not None:
            try:  # loaded first: one that cannot load changes nothing
                engine.switch_embedder(name)
            except EmbedderError as error:
                raise BadRequestError(
                    f"the embedder {name} cannot be loaded, so nothing changed: {error}"
                ) from None
    write_saved(engine.docs_dir, saved)
    engine.publish_folder_copy()
    engine.apply_settings(in_effect(environment, read_saved(engine.docs_dir)))
    return described(engine, environment)


def query_log(engine: Engine) -> QueryLog:
    """The engine's log, or one at the same place when logging is off (what is there is shown)."""
    return engine.query_log or QueryLog(engine.query_log_path)


def usage_json(engine: Engine) -> dict[str, Any]:
    """GET /api/query-log: the log summed up for the Usage screen."""
    log = query_log(engine)
    summary = summarise(events([log.rotated_path, log.path]), engine.embedder.min_score)
    return {
        "enabled": engine.query_log is not None,
        "min_score": engine.embedder.min_score,
        "summary": {**summary.model_dump(), "hook_rate": summary.hook_rate},
    }


def deleted_loose(engine: Engine, name: str) -> dict[str, Any]:
    """DELETE /api/loose: a Markdown file at the top of the docs dir, which no folder holds."""
    if name not in loose_markdown(engine.docs_dir):
        raise NotFoundError(f"no loose Markdown file by that name: {name}")
    delete_document(Root(engine.docs_dir), name)
    return {"deleted": name, "loose_files": loose_markdown(engine.docs_dir)}


def doctor_json(engine: Engine) -> list[dict[str, Any]]:
    """GET /api/doctor: the checks `ragdown doctor` makes, on this server's folders and index, with
    the failures of its last sync named."""
    target = Target(
        engine.docs_dir,
        engine.data_dir,
        folders_mode=engine.folders_mode,
        settings=engine.settings,
        last_sync=engine.last_sync,
    )
    return [check.model_dump() for check in run_checks(target)]


async def settings_body(request: Request) -> dict[str, Any]:
    return await read_json_body(request)


def admin_router(access: ApiAccess, environment: ServerSettings) -> APIRouter:
    """`environment` is what the variables say; the saved file's values go over it."""
    router = APIRouter(prefix="/api", dependencies=[Depends(access.authorised)])

    @router.get("/settings")
    def settings() -> dict[str, Any]:
        return described(access.current(), environment)

    @router.patch("/settings")
    def change(changes: Annotated[dict[str, Any], Depends(settings_body)]) -> dict[str, Any]:
        return changed(access.writable(), environment, changes)

    @router.get("/query-log")
    def usage() -> dict[str, Any]:
        return usage_json(access.current())

    @router.delete("/query-log")
    def clear() -> dict[str, Any]:
        """Emptied on a read-only server too: the log is the server's, not a document."""
        query_log(access.current()).clear()
        return {"cleared": True}

    @router.get("/doctor")
    def doctor() -> list[dict[str, Any]]:
        return doctor_json(access.current())

    @router.delete("/loose")
    def delete_loose(engine: Annotated[Engine, Depends(access.writable)], name: str) -> dict[str, Any]:
        return deleted_loose(engine, name)

    return router
