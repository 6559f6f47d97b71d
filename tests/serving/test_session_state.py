"""`GET /api/session` (docs/web.md#sign-in): whether this browser is signed in, asked by the page before
its first call so that a browser without a session goes to the sign-in without a refused request.
It answers 200 either way and reveals nothing a 401 would not."""

from __future__ import annotations

import httpx

from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served
from tests.serving.test_sessions import cookie_of, own_origin, sign_in, with_cookie


def test_the_session_state_says_whether_the_admin_api_would_answer(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as http:
        nobody = http.get("/api/session")
        agent = http.get("/api/session", headers={"Authorization": f"Bearer {TOKEN}"})
        admin = http.get("/api/session", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        value, _ = cookie_of(sign_in(http, **own_origin(served)))
        browser = http.get("/api/session", headers=with_cookie(value))
        http.delete("/api/session", headers=with_cookie(value, **own_origin(served)))
        ended = http.get("/api/session", headers=with_cookie(value))
    assert (nobody.status_code, nobody.json()) == (200, {"signed_in": False})
    assert agent.json() == {"signed_in": False}
    assert admin.json() == {"signed_in": True}
    assert browser.json() == {"signed_in": True}
    assert ended.json() == {"signed_in": False}
