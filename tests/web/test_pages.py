"""The web UI's own files (serving/web_ui.py, docs/web.md): served without a token (they hold no
documents), under a CSP that runs only the page's own scripts, and nothing else under /ui/."""

from __future__ import annotations

from pathlib import Path

import ragdown.web
from tests.serving.conftest import Served
from tests.web.modules import page_scripts

STATIC = Path(ragdown.web.__file__).parent / "static"


def test_the_page_and_its_assets_need_no_token_and_carry_a_strict_policy(served: Served) -> None:
    with served.http(token=None) as http:
        page = http.get("/")
        scripts = page_scripts(http)
        style = http.get("/ui/app.css")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="/ui/app.js"></script>' in page.text
    assert "<script" not in page.text.replace('<script type="module" src="/ui/app.js"></script>', "")
    policy = dict(
        directive.strip().split(" ", 1) for directive in page.headers["content-security-policy"].split(";")
    )
    assert policy["script-src"] == "'self'"  # no inline script, nothing from elsewhere
    assert policy["default-src"] == "'none'"
    assert policy["connect-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert page.headers["x-content-type-options"] == "nosniff"
    # A module of any other type would not run; each comes under the page's own policy.
    for name, script in scripts.items():
        assert script.status_code == 200, name
        assert script.headers["content-type"] == "text/javascript; charset=utf-8", name
        assert script.headers["content-security-policy"] == page.headers["content-security-policy"], name
        assert script.headers["x-content-type-options"] == "nosniff", name
    # Every module shipped is one the page loads, and no other.
    assert set(scripts) == {path.name for path in STATIC.glob("*.js")}
    assert "Authorization" in "".join(script.text for script in scripts.values())  # the MCP config it offers
    assert style.headers["content-type"] == "text/css; charset=utf-8"


def test_nothing_else_is_served_from_the_package(served: Served) -> None:
    with served.http(token=None) as http:
        for path in (
            "/ui/index.html",
            "/ui/../__init__.py",
            "/ui/%2e%2e/render.py",
            "/ui/",
            "/ui/app.js.map",
        ):
            answer = http.get(path)
            assert answer.status_code == 404, path
        assert http.get("/index.html").status_code == 404
        assert http.get("/api/docs").status_code == 401  # the data stays behind the token


def test_the_page_holds_no_document_text(served: Served) -> None:
    with served.http(token=None) as http:
        text = http.get("/").text + "".join(script.text for script in page_scripts(http).values())
    for document in served.docs.rglob("*.md"):
        body = document.read_text(encoding="utf-8").splitlines()[-1]
        assert body not in text
