"""The web UI's own files at `/` and `/ui/<name>` (docs/web.md): one page, one script, one stylesheet,
read once from the package. They hold no documents, so they need no token; everything the page shows
comes from the admin routes. A strict CSP lets the page run only its own script and connect only to
this server."""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import Response

from ragdown.errors import Refusal

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
ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}


def _read(name: str) -> bytes:
    return resources.files("ragdown.web").joinpath("static", name).read_bytes()


def web_router() -> APIRouter:
    page = _read("index.html")
    assets = {name: (_read(name), kind) for name, kind in ASSETS.items()}
    router = APIRouter()

    @router.get("/", include_in_schema=False)
    def index() -> Response:
        return Response(page, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)

    @router.get("/ui/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        found = assets.get(name)
        if found is None:
            raise Refusal(404, "Not found")
        data, kind = found
        return Response(data, media_type=kind, headers=PAGE_HEADERS)

    return router
