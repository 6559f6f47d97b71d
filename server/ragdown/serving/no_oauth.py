"""The routes an MCP client tries when a 401 sends it looking for OAuth, answered plainly: ragdown has
no OAuth, and a client that reports what these say shows the reason instead of an OAuth error of its
own (docs/security.md#bearer-tokens-not-oauth). On the MCP routes only a request without a token gets
that 401; a wrong token gets a 403 without a challenge (serving/auth.unknown_token), which sends no
client here.

After a 401, clients built on the MCP SDKs look for Protected Resource Metadata (RFC 9728), then for
an authorization server's metadata (RFC 8414, OpenID Connect discovery) at the server's origin, and
with neither found they fall back to registering themselves at `/register`. The metadata routes
answer 404, so discovery ends where it should; `/register`, `/authorize` and `/token` answer 404 with
an OAuth error body whose `error_description` says what to do, which is what those clients print
when registration fails. The 401 itself names no metadata (`resource_metadata`) and no `scope`, the
parameters that tell a client OAuth is on offer.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

NO_OAUTH = (
    "ragdown does not use OAuth, so there is nothing to sign in to: the MCP request was refused "
    "because its bearer token was missing or is not one this server knows. Send the header "
    "Authorization: Bearer <token> with the agents' token (RAGDOWN_TOKEN), a folder's own token, "
    "or the admin token"
)
# An extension error code (RFC 6749 section 8.5): no standard one means "there is no OAuth here", and
# `invalid_client` or `unauthorized_client` would make some clients forget and register again.
NO_OAUTH_CODE = "oauth_not_supported"
WELL_KNOWN = ("oauth-protected-resource", "oauth-authorization-server", "openid-configuration")


def no_oauth() -> JSONResponse:
    """404, in the shape of an OAuth error response and ragdown's reason as its description."""
    return JSONResponse({"error": NO_OAUTH_CODE, "error_description": NO_OAUTH}, status_code=404)


def no_oauth_router() -> APIRouter:
    router = APIRouter()
    for name in WELL_KNOWN:
        # At the origin and with the resource's path after it (`…/oauth-protected-resource/mcp/notes`).
        router.add_api_route(f"/.well-known/{name}", no_oauth, methods=["GET"], include_in_schema=False)
        router.add_api_route(
            f"/.well-known/{name}/{{rest:path}}", no_oauth, methods=["GET"], include_in_schema=False
        )
    router.add_api_route("/register", no_oauth, methods=["POST"], include_in_schema=False)
    router.add_api_route("/authorize", no_oauth, methods=["GET"], include_in_schema=False)
    router.add_api_route("/token", no_oauth, methods=["POST"], include_in_schema=False)
    return router
