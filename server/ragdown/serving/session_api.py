"""`POST /api/session` signs the web UI in with the admin token, `DELETE /api/session` signs it out,
`GET /api/session` says whether this browser is signed in (docs/web.md#sign-in). The cookie is
`HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends it), `Secure` when the
browser came over HTTPS, and scoped to `/api`; the table behind it is serving/sessions.py."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ragdown.errors import ForbiddenError, Unauthorized
from ragdown.serving.api_access import ApiAccess, body_of, read_json_body
from ragdown.serving.auth import identify
from ragdown.serving.sessions import COOKIE, COOKIE_PATH, check_cookie_request, is_tls

NOT_ADMIN_TOKEN = "that is not the admin token (RAGDOWN_ADMIN_TOKEN): check it and sign in again"
AGENT_TOKEN = "that is the agents' token, for /mcp only: sign in with the admin token (RAGDOWN_ADMIN_TOKEN)"
ADMIN_OFF = "the admin API is off: set RAGDOWN_ADMIN_TOKEN on the server to sign in to the web UI"


class SignIn(BaseModel):
    """POST /api/session: the admin token, in the body (never in a URL, never kept by the page)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    token: str = Field(min_length=1, max_length=4096)


def signed_in(access: ApiAccess, request: Request) -> bool:
    """Whether the admin API would take this request: the page asks first, so that a browser not
    signed in is shown the sign-in without a refused call (a 401 in its console)."""
    try:
        access.authorised(request)
    except (Unauthorized, ForbiddenError):
        return False
    return True


def session_router(access: ApiAccess) -> APIRouter:
    router = APIRouter(prefix="/api")
    sessions, settings = access.sessions, access.settings

    def set_cookie(response: JSONResponse, request: Request, value: str, max_age: int) -> None:
        response.set_cookie(
            COOKIE,
            value,
            max_age=max_age,
            path=COOKIE_PATH,
            httponly=True,
            samesite="strict",
            secure=is_tls(request),
        )

    @router.post("/session")
    async def sign_in(request: Request) -> JSONResponse:
        body = body_of(SignIn, await read_json_body(request))
        if not settings.admin_token and not settings.secure_local_net:
            raise ForbiddenError(ADMIN_OFF)
        access = identify(f"Bearer {body.token}", settings)
        if access is not None and access.role == "agent":
            raise ForbiddenError(AGENT_TOKEN)
        if access is None or not access.is_admin:
            raise Unauthorized(NOT_ADMIN_TOKEN)
        old = request.cookies.get(COOKIE)
        if old:  # a new sign-in replaces this browser's old session
            sessions.end(old)
        lifetime = int(sessions.lifetime_s)
        response = JSONResponse({"signed_in": True, "expires_in": lifetime})
        set_cookie(response, request, sessions.start(), lifetime)
        return response

    @router.get("/session")
    def session_state(request: Request) -> dict[str, bool]:
        return {"signed_in": signed_in(access, request)}

    @router.delete("/session")
    def sign_out(request: Request) -> JSONResponse:
        given = request.cookies.get(COOKIE)
        if given is not None:
            check_cookie_request(request)
            sessions.end(given)
        response = JSONResponse({"signed_in": False})
        set_cookie(response, request, "", 0)  # the browser drops it; the server already has
        return response

    return router
