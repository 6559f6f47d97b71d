"""The web UI's own files at `/` and `/ui/<name>` (docs/web.md): one page, its ES modules (every
`.js` in `web/static/`) and one stylesheet, read once from the package. They hold no documents, so
they need no token; everything the page shows comes from the admin routes. A strict CSP lets the
page run only its own scripts and connect only to this server."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import PurePosixPath

from fastapi import APIRouter
from fastapi.responses import Response

from ragdown.errors import NotFoundError

PAGE_HEADERS = {
    "Content-Security-Policy": (
        # style-src-attr: the renderer's table cells keep `text-align` (the sanitiser allows nothing else).
        "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
        # No blob: a folder's file is never re-hosted on this origin (docs/security.md#tenants).
        "img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}
# A module script must come as JavaScript: the browser refuses one of any other type (and `nosniff`).
KINDS = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


def _static() -> Traversable:
    return resources.files("ragdown.web").joinpath("static")


def assets() -> dict[str, tuple[bytes, str]]:
    """Every file the page loads by name, with its content type: the modules and the stylesheet."""
    found = {}
    for file in _static().iterdir():
        kind = KINDS.get(PurePosixPath(file.name).suffix)
        if kind is not None and file.is_file():
            found[file.name] = (file.read_bytes(), kind)
    return found


def web_router() -> APIRouter:
    page = _static().joinpath("index.html").read_bytes()
    served = assets()
    router = APIRouter()

    @router.get("/", include_in_schema=False)
    def index() -> Response:
        return Response(page, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)

    @router.get("/ui/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        found = served.get(name)
        if found is None:
            raise NotFoundError("Not found")
        data, kind = found
        return Response(data, media_type=kind, headers=PAGE_HEADERS)

    return router
