"""The web UI's sign-in (docs/web.md#sign-in, docs/security.md), over real HTTP: the admin token sent
once becomes an HttpOnly, SameSite=Strict cookie scoped to /api (Secure behind TLS), signing out ends
the session on the server, and a request the cookie authenticates must still come from the UI's own
page — an Origin on every change, JSON bodies, no cross-site fetch — while bearer tokens work as
before."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from ragdown.serving.sessions import COOKIE, LIFETIME_S, Sessions
from tests.serving.conftest import ADMIN_TOKEN, TOKEN, Served


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, timeout=30) as client:
        yield client


def own_origin(served: Served) -> dict[str, str]:
    return {"Origin": served.url}


def sign_in(http: httpx.Client, token: str = ADMIN_TOKEN, **headers: str) -> httpx.Response:
    """A sign-in as a new browser: the client's jar is emptied, each test sends its cookie itself."""
    http.cookies.clear()
    answer = http.post("/api/session", json={"token": token}, headers=headers)
    http.cookies.clear()
    return answer


def cookie_of(response: httpx.Response) -> tuple[str, list[str]]:
    """The session id and the flags of the response's Set-Cookie (lowercased)."""
    (header,) = response.headers.get_list("set-cookie")
    pair, *flags = [part.strip() for part in header.split(";")]
    name, _, value = pair.partition("=")
    assert name == COOKIE
    return value, [flag.lower() for flag in flags]


def with_cookie(value: str, **headers: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={value}", **headers}


def test_signing_in_sets_an_httponly_strict_cookie_for_api_only(served: Served, http: httpx.Client) -> None:
    signed = sign_in(http, **own_origin(served))
    assert signed.status_code == 200
    assert signed.json() == {"signed_in": True, "expires_in": LIFETIME_S}
    value, flags = cookie_of(signed)
    assert len(value) >= 40  # 256 random bits
    assert ADMIN_TOKEN not in signed.headers["set-cookie"]
    assert {"httponly", "samesite=strict", "path=/api", f"max-age={LIFETIME_S}"} <= set(flags)
    assert "secure" not in flags  # plain HTTP: a Secure cookie would never come back
    folders = http.get("/api/folders", headers=with_cookie(value))
    assert folders.status_code == 200
    assert [f["name"] for f in folders.json()["folders"]] == ["ops", "private"]


def test_the_cookie_is_secure_when_the_browser_came_over_tls(served: Served, http: httpx.Client) -> None:
    _value, flags = cookie_of(sign_in(http, **{"X-Forwarded-Proto": "https"}))
    assert "secure" in flags


def test_signing_out_ends_the_session_on_the_server(served: Served, http: httpx.Client) -> None:
    value, _ = cookie_of(sign_in(http))
    kept, _ = cookie_of(sign_in(http))  # another browser
    out = http.delete("/api/session", headers=with_cookie(value, **own_origin(served)))
    assert out.status_code == 200
    cleared, flags = cookie_of(out)
    assert (cleared.strip('"'), "max-age=0" in flags) == ("", True)
    # A copy of the cookie kept after signing out is dead: the server forgot the session.
    dead = http.get("/api/folders", headers=with_cookie(value))
    assert dead.status_code == 401
    assert "sign in again" in dead.json()["error"]
    assert http.get("/api/folders", headers=with_cookie(kept)).status_code == 200


def test_only_the_admin_token_signs_in(make_served: Callable[..., Served]) -> None:
    served = make_served()
    with httpx.Client(base_url=served.url, timeout=30) as http:
        wrong = sign_in(http, "not-the-token")
        assert wrong.status_code == 401
        assert "not the admin token" in wrong.json()["error"]
        agent = sign_in(http, TOKEN)
        assert agent.status_code == 403
        assert "agents' token" in agent.json()["error"]
        for refused in (wrong, agent):
            assert "set-cookie" not in refused.headers
        assert http.post("/api/session", json={}).status_code == 400
        assert http.get("/api/folders", headers=with_cookie("made-up")).status_code == 401
    off = make_served(admin_token=None)
    with httpx.Client(base_url=off.url, timeout=30) as http:
        refused = sign_in(http, "anything")
        assert refused.status_code == 403
        assert "RAGDOWN_ADMIN_TOKEN" in refused.json()["error"]


def test_a_cookie_change_needs_the_ui_pages_origin_and_json(served: Served, http: httpx.Client) -> None:
    """The cookie is ambient: a request it authenticates must look like the UI's own."""
    value, _ = cookie_of(sign_in(http))
    cookie = with_cookie(value)
    # No Origin (not a browser page's fetch): refused, nothing made or deleted.
    bare = http.post("/api/folders", json={"name": "csrf1"}, headers=cookie)
    assert bare.status_code == 403
    assert "Origin" in bare.json()["error"]
    assert http.delete("/api/doc", params={"path": "ops/cache.md"}, headers=cookie).status_code == 403
    assert http.patch("/api/folders/private", json={"mcp": True}, headers=cookie).status_code == 403
    # Another site's page, a sandboxed document (Origin null), a form body, a cross-site fetch.
    evil = http.post(
        "/api/folders", json={"name": "csrf2"}, headers={**cookie, "Origin": "http://attacker.example"}
    )
    assert evil.status_code == 403
    null = http.post("/api/folders", json={"name": "csrf3"}, headers={**cookie, "Origin": "null"})
    assert null.status_code == 403
    form = http.post(
        "/api/folders",
        content=b"name=csrf4",
        headers={**cookie, **own_origin(served), "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 415
    cross = {**cookie, **own_origin(served), "Sec-Fetch-Site": "cross-site"}
    assert http.post("/api/folders", json={"name": "csrf5"}, headers=cross).status_code == 403
    same_site = {**cookie, "Sec-Fetch-Site": "same-site"}
    assert http.get("/api/folders", headers=same_site).status_code == 403
    assert not any((served.docs / f"csrf{n}").exists() for n in range(1, 6))
    assert (served.docs / "ops" / "cache.md").exists()
    # The UI's own page: allowed.
    page = {**cookie, **own_origin(served), "Sec-Fetch-Site": "same-origin"}
    assert http.post("/api/folders", json={"name": "made"}, headers=page).status_code == 201
    # Signing out with the cookie is a change too.
    assert http.delete("/api/session", headers=cookie).status_code == 403
    assert http.get("/api/folders", headers=cookie).status_code == 200


def test_the_cookie_never_reaches_mcp_and_bearer_tokens_still_work(
    served: Served, http: httpx.Client
) -> None:
    value, _ = cookie_of(sign_in(http))
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    mcp = http.post(
        "/mcp/ops", json=init, headers=with_cookie(value, Accept="application/json, text/event-stream")
    )
    assert mcp.status_code == 401
    assert http.get("/api/folders", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).status_code == 200
    # A script's bearer call needs no Origin, as before.
    made = http.post(
        "/api/folders", json={"name": "scripted"}, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
    )
    assert made.status_code == 201
    # A header wins over a cookie: the agents' token with a live cookie is still the agents'.
    agent = http.get("/api/folders", headers=with_cookie(value, Authorization=f"Bearer {TOKEN}"))
    assert agent.status_code == 403


def test_sessions_expire_and_the_table_is_bounded() -> None:
    now = [1000.0]
    sessions = Sessions(lifetime_s=60, limit=3, clock=lambda: now[0])
    first = sessions.start()
    assert sessions.valid(first)
    now[0] += 61
    assert not sessions.valid(first)
    ids = [sessions.start() for _ in range(4)]
    assert len(sessions) == 3  # the expired one went first, then the oldest live one
    assert [sessions.valid(i) for i in ids] == [False, True, True, True]
    sessions.end(ids[1])
    assert not sessions.valid(ids[1])
    assert not sessions.valid("")
