"""The search screen in Chromium (docs/web.md#search): snippets read as text, not Markdown; a tag's
page lists the documents carrying it by title; on a phone the hits come before the side bar."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.serving.conftest import Served
from tests.web.conftest import sign_in

pytestmark = pytest.mark.slow

FORMATTED = (
    "---\ntags: [db/postgres]\n---\n# Formatting\n\n## Redis tuning\n\n"
    "Set **maxmemory** in [the config](https://example.com/redis) and read [[cache|the cache note]].\n"
)
ALPHA = "---\ntags: [db, howto]\n---\n# Alpha checks\n\nA first look at the database.\n"


def with_documents(make_served: Callable[..., Served]) -> Served:
    served = make_served()
    (served.docs / "ops" / "formatting.md").write_text(FORMATTED, encoding="utf-8")
    (served.docs / "ops" / "zz.md").write_text(ALPHA, encoding="utf-8")
    served.engine.sync()
    return served


def test_a_snippet_shows_text_not_markdown(page: Page, make_served: Callable[..., Served]) -> None:
    served = with_documents(make_served)
    sign_in(page, served.url + "/")
    page.goto(served.url + "/#/search/ops?q=maxmemory%20config")
    hit = page.locator("ol.hits > li").filter(has_text="ops/formatting.md")
    snippet = hit.locator(".snippet")
    expect(snippet).to_contain_text("Set maxmemory in the config and read the cache note.")
    expect(snippet).not_to_contain_text("**")
    expect(snippet).not_to_contain_text("](")
    expect(snippet.locator("mark").first).to_have_text(re.compile("maxmemory|config", re.IGNORECASE))


def test_a_tag_lists_its_documents_by_title(page: Page, make_served: Callable[..., Served]) -> None:
    served = with_documents(make_served)
    sign_in(page, served.url + "/")
    page.goto(served.url + "/#/doc/ops/backups.md")
    page.locator(".chips").get_by_role("link", name="#db").click()
    main = page.locator("main")
    expect(main.get_by_role("heading", level=1)).to_have_text("#db")
    expect(main).to_contain_text("3 documents tagged #db in ops")
    items = main.locator("ul.tagged > li")
    # By title, not by path (zz.md is "Alpha checks") nor by a similarity to the tag's name.
    expect(items.locator(":scope > a")).to_have_text(["Alpha checks", "Backups", "Formatting"])
    expect(items.nth(2)).to_contain_text("ops/formatting.md")
    expect(items.nth(2).get_by_role("link", name="#db/postgres")).to_be_visible()
    expect(main).not_to_contain_text("similarity")
    items.nth(0).get_by_role("link", name="#howto").click()
    expect(main).to_contain_text("1 document tagged #howto in ops")
    items.first.get_by_role("link", name="Alpha checks").click()
    expect(page).to_have_url(re.compile(r"#/doc/ops/zz\.md"))


def test_on_a_phone_the_hits_come_before_the_tree(browser: Browser, served: Served) -> None:
    context = browser.new_context(base_url=served.url, viewport={"width": 390, "height": 844}, is_mobile=True)
    phone = context.new_page()
    sign_in(phone)
    phone.goto("/#/search/ops?q=redis%20eviction")
    first = phone.locator("ol.hits > li").first
    expect(first).to_contain_text("ops/cache.md")
    tree = phone.locator("#side")
    expect(tree.get_by_role("link", name="Vacuum")).to_be_attached()
    hit_box, side_box = first.bounding_box(), tree.bounding_box()
    assert hit_box is not None
    assert side_box is not None
    assert hit_box["y"] + hit_box["height"] <= side_box["y"], (hit_box, side_box)
    assert hit_box["y"] < 844  # on the first screen, without scrolling past the tree
    context.close()
