"""The search page names a hit by its document's title and heading path, also for a document with a
front-matter title and no H1 (the shape of every note `ragdown_remember` writes). What the API and
the tools give: tests/serving/test_hit_breadcrumbs.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.serving.conftest import Served
from tests.serving.test_hit_breadcrumbs import with_note
from tests.web.conftest import sign_in

# Chromium: seconds each, like every browser test, so out of the quick loop.
pytestmark = pytest.mark.slow


def test_the_search_page_shows_the_title_of_a_document_without_h1(page: Page, served: Served) -> None:
    with_note(served)
    sign_in(page)
    page.goto("/#/search/ops?q=zanzibar%20quokka")
    hit = page.locator("ol.hits > li").filter(has_text="ops/inspector-note.md:10")
    expect(hit.get_by_role("link")).to_have_text("Inspector test note › Follow-up")
