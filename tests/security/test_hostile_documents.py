"""Documents written to attack the web UI and its API (issue 26, docs/security.md#tenants), over real
HTTP: a heading whose id is the page's own (item 9) and a document too big to render (11). The
browser half of the first is tests/web/test_browser_attacks.py."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from ragdown.serving.docs_api import MAX_DOC_BYTES
from tests.serving.conftest import ADMIN_TOKEN, Served, folder_docs, make_served, served  # noqa: F401


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:  # noqa: F811
    with httpx.Client(base_url=served.url, timeout=60) as client:
        yield client


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
