"""The document routes of `/api` (docs/tools.md#document-routes), for the web UI: list, read, render
and preview, search, resolve a wikilink, backlinks, and raw attachments (save, delete and move are
in serving/docs_write_api.py).

Every path here names its folder first (`ops/runbooks/restore.md`) and passes the path rule before
anything is opened; the rules themselves live in `documents/`, `catalog.py` and `scoped_changes.py`.
Writes answer once the index has synced. A folder's `read_only` and `mcp` are agents' settings: people see
and edit every folder here; `RAGDOWN_READ_ONLY` refuses every write.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated[..., Depends(local)]
# at definition time, where the local dependencies are in scope.
import mimetypes
import posixpath
import stat
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from ragdown.documents import files
from ragdown.documents.chunks import breadcrumb
from ragdown.documents.files import Root
from ragdown.documents.hashes import file_hash
from ragdown.documents.links import LinkIndex, resolve_wikilink
from ragdown.documents.move import folder_files
from ragdown.documents.paths import check_path, is_markdown
from ragdown.documents.plain import plain_text
from ragdown.engine import Engine
from ragdown.errors import BadRequestError, NotAFolderError, NotFoundError, Refusal, TooLargeError
from ragdown.folders.manage import existing
from ragdown.folders.scope import Scope
from ragdown.scoped_changes import Place, backlinks_of
from ragdown.search.filters import SearchFilters, normalised_tag
from ragdown.search.hit_shapes import hit_json
from ragdown.serving.api_access import ApiAccess, body_of, read_json_body
from ragdown.web.render import Rendered, render_markdown

# An upload or a save: a document, not a dump (413 above it).
MAX_DOC_BODY = 4 * 1024 * 1024
# A document the UI reads (/api/doc) or renders (/api/render): no bigger than one it could save, so
# one huge file cannot make the server build tens of megabytes of HTML (413 above it).
MAX_DOC_BYTES = MAX_DOC_BODY
# Attachments are read whole into memory; bigger files stay on disk, out of the UI.
MAX_FILE_BYTES = 32 * 1024 * 1024
# Types a browser would run or lay out as a page are sent as text; the CSP stops what is left.
_ACTIVE_TYPES = {"text/html", "application/xhtml+xml", "text/xml", "application/xml", "text/javascript"}
_FILE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "private, no-store",
}


class PreviewBody(BaseModel):
    """POST /api/preview: the editor's text, rendered as the document at `path` would be."""

    model_config = ConfigDict(extra="forbid", strict=True)

    path: str = Field(min_length=1)
    text: str


def split_folder(engine: Engine, path: str, *, markdown: bool) -> tuple[str, str]:
    """`path` as (folder, path inside it), after the path rule; 404 for a folder that is not there."""
    checked = check_path(path, markdown_only=markdown)
    if len(checked.parts) < 2:
        raise BadRequestError(
            f"a path names its folder first, like notes/{checked.relative}: {checked.relative}"
        )
    folder = existing(engine.docs_dir, checked.parts[0]).name
    return folder, "/".join(checked.parts[1:])


def too_big(shown: str, size: int) -> Refusal:
    return TooLargeError(
        f"{shown} is {size / 2**20:.1f} MiB, over the {MAX_DOC_BYTES >> 20} MiB the web UI opens and "
        "renders: open it from the disk, or split it into smaller documents",
    )


def place_of(engine: Engine, folder: str) -> Place:
    return Place(engine, Scope(folder))


def entry_json(path: str, entry: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": path,
        "folder": path.split("/", 1)[0],
        "title": entry.title,
        "description": entry.description,
        "tags": entry.tags,
        "aliases": entry.aliases,
        "mtime_ms": entry.mtime_ms,
        "chunks": entry.chunks,
    }
    for key in ("created_by", "session"):
        if getattr(entry, key):
            data[key] = getattr(entry, key)
    if entry.superseded_by:
        data["superseded_by"] = entry.superseded_by
    return data


def rendered(engine: Engine, folder: str, inside: str, text: str) -> Rendered:
    """`text` as HTML for the document `folder/inside`: wikilinks resolve within the folder as agents'
    links do, and an attachment is a regular file in the folder, beside the document or from the
    folder's top (docs/web.md#rendering)."""
    entries = engine.documents()
    index = LinkIndex.of_folder({p: e.aliases for p, e in entries.items()}, f"{folder}/")
    root = Root(engine.docs_dir, (folder,))

    def resolve(target: str) -> tuple[str, str | None] | None:
        found = resolve_wikilink(index, target, inside)
        return None if found is None or found.path is None else (f"{folder}/{found.path}", found.anchor)

    with_files: list[LinkIndex] = []  # the folder walked once, on the first name not found by path

    def attachment(target: str) -> str | None:
        for candidate in (posixpath.join(posixpath.dirname(inside), target), target):
            try:
                checked = check_path(posixpath.normpath(candidate), markdown_only=False)
                info = files.lstat(root, checked.parts)
            except (Refusal, OSError, NotAFolderError):
                continue
            if info is not None and stat.S_ISREG(info.st_mode):
                return f"{folder}/{checked.relative}"
        if "/" in target:
            return None
        # `![[plan.png]]` names a file anywhere in the folder, as Obsidian's embeds do.
        if not with_files:
            documents, attachments = folder_files(root)
            with_files.append(LinkIndex(documents, {}, attachments))
        found = with_files[0].lookup(target, inside)
        return None if found is None else f"{folder}/{found}"

    return render_markdown(text, folder=folder, resolve=resolve, attachment=attachment)


def rendered_json(result: Rendered) -> dict[str, Any]:
    return {
        "html": result.html,
        "headings": [{"level": h.level, "text": h.text, "id": h.id, "line": h.line} for h in result.headings],
    }


async def preview_body(request: Request) -> PreviewBody:
    return body_of(PreviewBody, await read_json_body(request, MAX_DOC_BODY))


def listed(engine: Engine, folder: str | None, tag: str = "") -> dict[str, Any]:
    """GET /api/docs: every indexed document, or a folder's; with `tag`, only those carrying it or a
    tag under it (`db` takes `db/postgres`), as a search's tag filter does."""
    if folder is not None:
        existing(engine.docs_dir, folder)
    wanted = normalised_tag(SearchFilters(tag=tag))
    entries = engine.documents()
    listed = [
        entry_json(path, entry)
        for path, entry in sorted(entries.items())
        if (folder is None or path.startswith(f"{folder}/"))
        and (wanted is None or tagged(entry.tags, wanted))
    ]
    return {"docs": listed}


def tagged(tags: list[str], tag: str) -> bool:
    return any(t == tag or t.startswith(f"{tag}/") for t in tags)


def opened(engine: Engine, path: str) -> tuple[str, str, bytes, dict[str, Any]]:
    """A document read from disk: its folder, path inside it, bytes, and what the index says."""
    folder, inside = split_folder(engine, path, markdown=True)
    shown = f"{folder}/{inside}"
    parts = (folder, *inside.split("/"))
    info = files.lstat(Root(engine.docs_dir), parts, display=path)
    if info is not None and info.st_size > MAX_DOC_BYTES:
        raise too_big(shown, info.st_size)
    data = files.read_file(Root(engine.docs_dir), parts, display=path)
    if data is None:
        raise NotFoundError(f"no such document: {shown}")
    if len(data) > MAX_DOC_BYTES:  # it grew between the look and the read
        raise too_big(shown, len(data))
    entry = engine.documents().get(shown)
    return (
        folder,
        inside,
        data,
        {
            "path": shown,
            "hash": file_hash(data),
            "title": entry.title if entry else inside.rsplit("/", 1)[-1],
            "tags": entry.tags if entry else [],
            "aliases": entry.aliases if entry else [],
            "indexed": entry is not None,
            # What hides it from search (docs/web.md#screens): always documents of its own folder.
            "superseded_by": entry.superseded_by if entry else [],
        },
    )


def document_json(engine: Engine, path: str) -> dict[str, Any]:
    """GET /api/doc: the document's text as the editor opens it, and what the index says of it."""
    _folder, _inside, data, described = opened(engine, path)
    text = data.decode("utf-8", errors="replace")
    return {**described, "text": text.replace("\r\n", "\n"), "crlf": "\r\n" in text}


def render_json(engine: Engine, path: str) -> dict[str, Any]:
    """GET /api/render: the document as HTML, with the documents that link to it."""
    folder, inside, data, described = opened(engine, path)
    try:
        linking = backlinks_of(place_of(engine, folder), inside)["backlinks"]
    except Refusal:  # not indexed (yet): nothing links to it as far as the index knows
        linking = []
    assert isinstance(linking, list)
    return {
        **described,
        "backlinks": [{**b, "path": f"{folder}/{b['path']}"} for b in linking],
        **rendered_json(rendered(engine, folder, inside, data.decode("utf-8", errors="replace"))),
    }


def search_json(engine: Engine, folder: str, query: str, tag: str, top_k: int) -> dict[str, Any]:
    """GET /api/search: one folder's hits, their paths from the docs dir, each with its text as a
    reader sees it (`snippet`, docs/web.md#search) beside the Markdown (`text`)."""
    name = existing(engine.docs_dir, folder).name
    hits = engine.recall(query, top_k, SearchFilters(tag=tag), scope=Scope(name), kind="api")
    found = []
    for hit in hits:
        data = hit_json(hit)
        data["path"] = f"{name}/{hit.path}"
        # What the page names a hit by: the document's title and the heading path, as the tools' text
        # and the hook give it (a document with no H1 has a heading path without its title).
        data["breadcrumb"] = breadcrumb(hit.title, hit.heading)
        data["snippet"] = plain_text(hit.text)
        found.append(data)
    return {"hits": found}


def resolved_json(engine: Engine, source: str, link: str) -> dict[str, Any]:
    """GET /api/resolve: the document a wikilink in `source` names, as agents' links resolve."""
    folder, inside = split_folder(engine, source, markdown=False)
    entries = engine.documents()
    index = LinkIndex.of_folder({p: e.aliases for p, e in entries.items()}, f"{folder}/")
    resolved = resolve_wikilink(index, link, inside)
    if resolved is None or resolved.path is None:
        raise NotFoundError(f"no document in {folder} by that name or alias: {link}")
    answer: dict[str, Any] = {"path": f"{folder}/{resolved.path}"}
    if resolved.anchor:
        answer["anchor"] = resolved.anchor
    return answer


def backlinks_json(engine: Engine, path: str) -> dict[str, Any]:
    folder, inside = split_folder(engine, path, markdown=False)
    found = backlinks_of(place_of(engine, folder), inside)
    linking = found["backlinks"]
    assert isinstance(linking, list)
    return {
        "path": f"{folder}/{found['path']}",
        "backlinks": [{**b, "path": f"{folder}/{b['path']}"} for b in linking],
    }


def file_response(engine: Engine, path: str) -> Response:
    """GET /api/file: an attachment's bytes, sent so that a browser never runs or lays it out."""
    folder, inside = split_folder(engine, path, markdown=False)
    parts = (folder, *inside.split("/"))
    info = files.lstat(Root(engine.docs_dir), parts, display=path)
    if info is not None and info.st_size > MAX_FILE_BYTES:
        raise TooLargeError(f"{folder}/{inside} is over {MAX_FILE_BYTES >> 20} MiB: open it from the disk")
    data = files.read_file(Root(engine.docs_dir), parts, display=path)
    if data is None:
        raise NotFoundError(f"no such file: {folder}/{inside}")
    kind = "text/markdown" if is_markdown(inside) else mimetypes.guess_type(inside)[0]
    kind = kind or "application/octet-stream"
    if kind in _ACTIVE_TYPES or kind.startswith("text/"):
        kind = "text/plain"
    media = f"{kind}; charset=utf-8" if kind.startswith("text/") else kind
    return Response(content=data, media_type=media, headers=_FILE_HEADERS)


def docs_router(access: ApiAccess) -> APIRouter:
    """The document routes; refusals are answered by the app's one handler (serving/http.py)."""
    router = APIRouter(prefix="/api", dependencies=[Depends(access.authorised)])
    reading_routes(router, access.current)
    return router


def reading_routes(router: APIRouter, current: Callable[[], Engine]) -> None:
    """What the web UI reads: each route takes the serving engine and answers from the above."""

    @router.get("/docs")
    def list_docs(
        folder: str | None = None, tag: Annotated[str, Query(max_length=200)] = ""
    ) -> dict[str, Any]:
        return listed(current(), folder, tag)

    @router.get("/doc")
    def read_doc(path: str) -> dict[str, Any]:
        return document_json(current(), path)

    @router.get("/render")
    def render(path: str) -> dict[str, Any]:
        return render_json(current(), path)

    @router.post("/preview")
    def preview(body: Annotated[PreviewBody, Depends(preview_body)]) -> dict[str, Any]:
        engine = current()
        folder, inside = split_folder(engine, body.path, markdown=True)
        return rendered_json(rendered(engine, folder, inside, body.text))

    @router.get("/search")
    def search(
        folder: str,
        q: Annotated[str, Query(min_length=1, max_length=2000)],
        tag: str = "",
        top_k: Annotated[int, Query(ge=1, le=50)] = 10,
    ) -> dict[str, Any]:
        return search_json(current(), folder, q, tag, top_k)

    @router.get("/resolve")
    def resolve(
        source: Annotated[str, Query(alias="from")],
        link: Annotated[str, Query(min_length=1, max_length=1024)],
    ) -> dict[str, Any]:
        return resolved_json(current(), source, link)

    @router.get("/backlinks")
    def backlinks(path: str) -> dict[str, Any]:
        return backlinks_json(current(), path)

    @router.get("/file")
    def raw_file(path: str) -> Response:
        return file_response(current(), path)
