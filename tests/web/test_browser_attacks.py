"""Documents written to attack the web UI that shows them (issue 26, docs/security.md#tenants), in
headless Chromium against a real server: a document whose heading ids are the page's own."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.serving.conftest import Served
from tests.web.conftest import sign_in

pytestmark = pytest.mark.slow


# Ids the page's own elements carry (index.html, app.js): a heading slug of each.
UI_HEADINGS = ("Dialog", "Dialog form", "Toast", "Main", "Side", "Search form", "Search input", "Sign out")


def test_a_document_holding_the_pages_own_ids_can_be_renamed_and_deleted(page: Page, served: Served) -> None:
    headings = "\n\n".join(f"## {name}\n\nAbout {name.lower()}." for name in UI_HEADINGS)
    text = f"# Clash\n\n{headings}\n\nSee [the dialog](#dialog) and a note.[^1]\n\n[^1]: The note.\n"
    (served.docs / "ops" / "clash.md").write_text(text, encoding="utf-8")
    served.engine.sync()
    sign_in(page)
    page.goto("/#/doc/ops/clash.md")
    document = page.locator("article.doc")
    expect(document.get_by_role("heading", name="Clash")).to_be_visible()

    page.get_by_role("button", name="Rename / move").click()
    page.get_by_label("New path").fill("ops/clash2.md")
    page.get_by_role("button", name="Move", exact=True).click()
    expect(page.locator("body > #toast")).to_have_text("Moved")
    expect(page).to_have_url(re.compile(r"#/doc/ops/clash2\.md$"))
    assert (served.docs / "ops" / "clash2.md").read_text(encoding="utf-8") == text

    # A deep link to a heading lands on it.
    page.goto("/#/doc/ops/clash2.md#search-input")
    expect(document.locator(".target")).to_have_text("Search input")
    # In-page links move within the document and leave a bookmarkable URL.
    document.get_by_role("link", name="the dialog").click()
    expect(page).to_have_url(re.compile(r"#/doc/ops/clash2\.md#dialog$"))
    expect(document.locator(".target")).to_have_text("Dialog")
    document.locator("sup.footnote-ref a").click()
    expect(page).to_have_url(re.compile(r"#/doc/ops/clash2\.md#fn1$"))
    expect(document.locator(".target")).to_contain_text("The note.")
    ids = page.evaluate("[...document.querySelectorAll('article.doc [id]')].map((e) => e.id)")
    assert ids
    assert all(i.startswith("user-content-") for i in ids), ids

    page.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("body > #toast")).to_have_text("Deleted")
    expect(page).to_have_url(re.compile(r"#/folder/ops$"))
    assert not (served.docs / "ops" / "clash2.md").exists()
