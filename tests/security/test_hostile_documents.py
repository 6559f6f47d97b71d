"""Documents written to attack the web UI and its API (issue 26, docs/security.md#tenants), over real
HTTP: an SVG whose script goes for the admin credential (item 3), a heading whose id is the page's
own (9), and a document too big to render (11). The browser half of the first two is
tests/web/test_browser_attacks.py."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from ragdown.serving.docs_api import MAX_DOC_BYTES
from ragdown.serving.sessions import COOKIE
from tests.serving.conftest import ADMIN_TOKEN, Served, folder_docs, make_served, served  # noqa: F401
from tests.web.modules import page_scripts

# The script marks the SVG when it runs, with the credential it could read, then with the answer
# /api/folders gave it; the marks are read from the DOM, which any script-free look can do.
EVIL_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="
  var root = document.documentElement;
  var stolen = '';
  try { stolen = (localStorage.getItem('ragdown-token') || '') + document.cookie; } catch (e) {}
  root.setAttribute('data-ran', '1');
  root.setAttribute('data-credential', stolen);
  fetch('/api/folders', {headers: stolen ? {Authorization: 'Bearer ' + stolen} : {}})
    .then(function (r) { root.setAttribute('data-status', String(r.status)); })
    .catch(function () { root.setAttribute('data-status', 'refused'); });
"><rect width="10" height="10" fill="red"/></svg>
"""


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:  # noqa: F811
    with httpx.Client(base_url=served.url, timeout=60) as client:
        yield client


def session(http: httpx.Client) -> str:
    signed = http.post("/api/session", json={"token": ADMIN_TOKEN})
    assert signed.status_code == 200
    value = signed.cookies[COOKIE]
    http.cookies.clear()
    return value


def test_an_svgs_script_finds_no_credential_and_its_api_call_is_refused(
    served: Served,  # noqa: F811
    http: httpx.Client,
) -> None:
    (served.docs / "ops" / "evil.svg").write_text(EVIL_SVG, encoding="utf-8")
    value = session(http)
    cookie = {"Cookie": f"{COOKIE}={value}"}
    # Signing in hands the browser an id no script can read, never the token.
    page = http.get("/")
    assert "blob:" not in page.headers["content-security-policy"]  # nothing is re-hosted here
    script = "".join(module.text for module in page_scripts(http).values())
    assert "localStorage.setItem" not in script
    assert "createObjectURL" not in script
    # The SVG itself, opened top-level or as an image: sandboxed (no script runs), never sniffed.
    svg = http.get("/api/file", params={"path": "ops/evil.svg"}, headers=cookie)
    assert svg.status_code == 200
    assert svg.headers["content-type"] == "image/svg+xml"
    policy = svg.headers["content-security-policy"]
    assert "sandbox" in policy
    assert "allow-scripts" not in policy
    assert svg.headers["x-content-type-options"] == "nosniff"
    # Were its script to run, its fetch would come from an opaque origin ("null") or another site.
    for headers in ({"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://evil.example"}):
        stolen = http.get("/api/folders", headers={**cookie, **headers})
        assert stolen.status_code == 403, headers
        assert "ops" not in stolen.text
        made = http.post("/api/folders", json={"name": "stolen"}, headers={**cookie, **headers})
        assert made.status_code == 403, headers
    assert not (served.docs / "stolen").exists()


def test_a_heading_cannot_take_an_id_of_the_page(served: Served, http: httpx.Client) -> None:  # noqa: F811
    (served.docs / "ops" / "clash.md").write_text("# Dialog\n\n## Toast\n\n## Main\n", encoding="utf-8")
    page_ids = set(re.findall(r'\bid="([^"]+)"', http.get("/").text))
    assert {"dialog", "toast", "main"} <= page_ids
    rendered = http.get(
        "/api/render", params={"path": "ops/clash.md"}, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
    ).json()
    document_ids = set(re.findall(r'\bid="([^"]+)"', rendered["html"]))
    assert document_ids == {"user-content-dialog", "user-content-toast", "user-content-main"}
    assert not document_ids & page_ids


@pytest.mark.parametrize("route", ["/api/doc", "/api/render"])
def test_a_document_too_big_for_the_ui_is_refused_before_it_is_read(
    served: Served,  # noqa: F811
    http: httpx.Client,
    route: str,
) -> None:
    """A 50 MB file once rendered to 50.9 MB of HTML (RSS 858 MB): /api/doc and /api/render stop at
    the size the UI saves."""
    big = served.docs / "ops" / "huge.md"
    big.write_bytes(b"# Huge\n\n" + b"[a](" * (MAX_DOC_BYTES // 4 + 1))
    answer = http.get(
        route, params={"path": "ops/huge.md"}, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
    )
    assert answer.status_code == 413
    message = answer.json()["error"]
    assert message == (
        "ops/huge.md is 4.0 MiB, over the 4 MiB the web UI opens and renders: "
        "open it from the disk, or split it into smaller documents"
    )
    assert "\n" not in message
    # At the limit it still opens.
    big.write_bytes(b"# Huge\n\n" + b"x" * (MAX_DOC_BYTES - 8))
    assert (
        http.get(
            "/api/doc", params={"path": "ops/huge.md"}, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
        ).status_code
        == 200
    )
