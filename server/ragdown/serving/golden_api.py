"""The golden-set routes of `/api` (docs/tools.md#golden-routes): a folder's golden file as the web UI's
Usage screen shows it, a query's hits searched again without logging, and a person's mark on them
written into `<folder>/.ragdown-golden.jsonl` (docs/evaluation.md#marking-hits-in-the-web-ui)."""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated[..., Depends(local)]
# at definition time, where the local dependencies are in scope.
import stat
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ragdown.documents import files
from ragdown.documents.chunks import breadcrumb
from ragdown.documents.files import Root
from ragdown.documents.plain import plain_text
from ragdown.engine import Engine
from ragdown.errors import BadRequestError, ConflictError, NotFoundError
from ragdown.evaluation.golden import GOLDEN_NAME, GoldenError, Target, parse_golden
from ragdown.evaluation.marks import mark
from ragdown.evaluation.targets import target_of
from ragdown.folders.manage import existing
from ragdown.folders.scope import Scope
from ragdown.search.filters import SearchFilters
from ragdown.search.policy import MAX_QUERY_CHARS
from ragdown.serving.api_access import ApiAccess, body_of, read_json_body

HITS = 10
SNIPPET_CHARS = 240


class MarkBody(BaseModel):
    """POST /api/golden: `target` (a hit's `path#Heading`, relative to the folder) is right, or
    `unanswerable` (true): none of the hits is."""

    model_config = ConfigDict(extra="forbid", strict=True)

    folder: str = Field(min_length=1)
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    target: str | None = Field(default=None, min_length=1, max_length=8192)
    unanswerable: bool = False


def golden_text(engine: Engine, folder: str) -> str | None:
    data = files.read_file(Root(engine.docs_dir), (folder, GOLDEN_NAME), display=f"{folder}/{GOLDEN_NAME}")
    return None if data is None else data.decode("utf-8", errors="replace")


def golden_json(engine: Engine, folder: str) -> dict[str, Any]:
    """GET /api/golden: the folder's questions as the file holds them, or the file's first problem."""
    name = existing(engine.docs_dir, folder).name
    text = golden_text(engine, name)
    answer: dict[str, Any] = {"folder": name, "file": f"{name}/{GOLDEN_NAME}", "exists": text is not None}
    try:
        answer["lines"] = [line.to_json() for line in parse_golden(text or "")]
    except GoldenError as error:
        answer |= {"lines": [], "error": str(error)}
    return answer


def hits_json(engine: Engine, folder: str, query: str) -> dict[str, Any]:
    """GET /api/golden/hits: the query's hits in the folder now, each with the target a mark would
    write. Not logged: looking at a query's hits is not asking it again."""
    name = existing(engine.docs_dir, folder).name
    scope = Scope(name)
    found = engine.search(query, HITS, SearchFilters(path_prefix=scope.search_prefix()))
    hits = []
    for hit in found:
        path = scope.relative(hit.path)
        hits.append(
            {
                "target": str(target_of(path, hit.heading)),
                "path": hit.path,
                "breadcrumb": breadcrumb(hit.title, hit.heading),
                "similarity": round(hit.similarity, 4),
                "snippet": plain_text(hit.text)[:SNIPPET_CHARS],
            }
        )
    return {"folder": name, "query": query, "hits": hits}


def marked_json(engine: Engine, body: MarkBody) -> dict[str, Any]:
    """POST /api/golden: the mark written into the folder's golden file in one locked, whole-file step."""
    if (body.target is None) == (not body.unanswerable):
        raise BadRequestError('send either "target" (the right hit) or "unanswerable": true, not both')
    if not body.query.strip():
        raise BadRequestError("query is empty")
    name = existing(engine.docs_dir, body.folder).name
    target = None
    if body.target is not None:
        try:
            target = Target.parse(body.target)
        except ValueError as error:
            raise BadRequestError(f"target {body.target[:80]!r} {error}") from None
        parts = (name, *target.path.split("/"))
        info = files.lstat(Root(engine.docs_dir), parts, display=f"{name}/{target.path}")
        if info is None or not stat.S_ISREG(info.st_mode):
            raise NotFoundError(f"no document {name}/{target.path} in the folder")
    written: dict[str, Any] = {}

    def change(current: bytes | None) -> bytes:
        text = "" if current is None else current.decode("utf-8", errors="strict")
        new, line = mark(text, name, body.query, target)
        written["line"] = line.to_json()
        return new.encode("utf-8")

    try:
        files.update(Root(engine.docs_dir), (name, GOLDEN_NAME), change, display=f"{name}/{GOLDEN_NAME}")
    except UnicodeDecodeError:
        raise ConflictError(
            f"{name}/{GOLDEN_NAME} is not UTF-8: nothing was marked (fix the file first)"
        ) from None
    return {"file": f"{name}/{GOLDEN_NAME}", **written}


async def mark_body(request: Request) -> MarkBody:
    return body_of(MarkBody, await read_json_body(request))


def golden_router(access: ApiAccess) -> APIRouter:
    router = APIRouter(prefix="/api", dependencies=[Depends(access.authorised)])

    @router.get("/golden")
    def golden(folder: str) -> dict[str, Any]:
        return golden_json(access.current(), folder)

    @router.get("/golden/hits")
    def golden_hits(
        folder: str, q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS)]
    ) -> dict[str, Any]:
        return hits_json(access.current(), folder, q)

    @router.post("/golden")
    def marked(body: Annotated[MarkBody, Depends(mark_body)]) -> dict[str, Any]:
        return marked_json(access.writable(), body)

    return router
