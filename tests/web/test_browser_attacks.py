"""Documents written to attack the web UI that shows them (issue 26, docs/security.md#tenants), in
headless Chromium against a real server: an SVG whose script goes for the admin credential, and a
document whose heading ids are the page's own."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.security.test_hostile_documents import EVIL_SVG
from tests.serving.conftest import ADMIN_TOKEN, Served
from tests.web.conftest import sign_in

pytestmark = pytest.mark.slow


def test_an_svg_in_a_folder_cannot_take_the_admin_credential(page: Page, served: Served) -> None:
    (served.docs / "ops" / "evil.svg").write_text(EVIL_SVG, encoding="utf-8")
    (served.docs / "ops" / "pictures.md").write_text(
        "# Pictures\n\n![[evil.svg]]\n\nThe [same picture](evil.svg) as a file.\n", encoding="utf-8"
    )
    sign_in(page)
    page.goto("/#/doc/ops/pictures.md")
    image = page.locator("article.doc img")
    expect(image).to_have_attribute("src", re.compile("."))
    page.wait_for_function("document.querySelector('article.doc img').complete")
    assert page.evaluate("document.querySelector('article.doc img').naturalWidth") == 10
    opened_as = [image.evaluate("img => img.src")]
    link = page.locator("article.doc a.attachment")
    opened_as.append(link.evaluate("a => a.href"))
    for url in opened_as:
        # Opened top-level, as "open image in new tab" or the link would.
        tab = page.context.new_page()
        tab.goto(url)
        svg = tab.locator("svg")
        expect(svg).to_have_count(1)
        if svg.get_attribute("data-ran"):
            # It ran: it must have found nothing to steal, and been refused.
            expect(svg).to_have_attribute("data-status", re.compile("."))
            assert ADMIN_TOKEN not in (svg.get_attribute("data-credential") or ""), url
            assert svg.get_attribute("data-status") != "200", url
        tab.close()
        assert not url.startswith("blob:"), "a folder's file was re-hosted on the app's origin"
    # Nothing any script on this origin could read holds the credential.
    assert page.evaluate("JSON.stringify(localStorage)") == "{}"
    assert page.evaluate("document.cookie") == ""


# Ids the page's own elements carry (index.html, its modules): a heading slug of each.
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
