"""The quick-start tour (issue 28): the README's quick start serves `examples/` with a token and an
admin token; a person signs in and opens every screen. No screen may show a value the page failed to
fill ("null", "undefined", "[object …]") and the console must stay free of errors, the browser's own
(a failed request) as well as the page's."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from ragdown.settings import ServerSettings
from tests.serving.conftest import Served, serve

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ADMIN = "admin-token"  # the README's quick start
# What a page shows when it printed a value it never filled.
UNFILLED = re.compile(r"\bnull\b|\bundefined\b|\[object ")


@pytest.fixture
def quick_start(tmp_path: Path) -> Iterator[Served]:
    """`RAGDOWN_DOCS_DIR=examples RAGDOWN_TOKEN=dev-token RAGDOWN_ADMIN_TOKEN=admin-token ragdown
    serve`, over a copy of examples/ so the tour's writes stay out of the clone."""
    docs = tmp_path / "examples"
    shutil.copytree(EXAMPLES, docs)
    settings = ServerSettings(token="dev-token", admin_token=ADMIN, watch=False)
    yield from serve(docs, tmp_path / "data", settings)


@pytest.fixture
def tour_page(browser: Browser, quick_start: Served) -> Iterator[tuple[Page, list[str]]]:
    context = browser.new_context(base_url=quick_start.url, viewport={"width": 1280, "height": 820})
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    errors: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(f"console: {message.text} ({message.location.get('url')})")

    opened.on("console", console)
    opened.on("pageerror", lambda error: errors.append(f"{error.name}: {error.message}"))
    yield opened, errors
    context.close()


def shows_nothing_unfilled(page: Page, screen: str) -> None:
    text = page.locator("body").inner_text()
    found = UNFILLED.search(text)
    assert found is None, (
        f"{screen} shows {found.group()!r}: …{text[max(0, found.start() - 80) : found.end() + 80]}…"
    )


def test_every_screen_of_the_quick_start(tour_page: tuple[Page, list[str]]) -> None:
    page, errors = tour_page
    main = page.locator("main")
    page.goto("/")
    expect(page.get_by_label("Admin token")).to_be_visible()
    shows_nothing_unfilled(page, "the sign-in")
    page.get_by_label("Admin token").fill(ADMIN)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1, name="Folders")).to_be_visible()
    expect(main.get_by_role("link", name="Example notes")).to_be_visible()
    shows_nothing_unfilled(page, "Folders")

    main.get_by_role("link", name="Example notes").click()
    expect(page.get_by_role("heading", level=1, name="Example notes")).to_be_visible()
    expect(main.get_by_role("heading", name="Recently changed")).to_be_visible()
    shows_nothing_unfilled(page, "the folder")

    page.goto("/#/doc/notes/README.md")  # no tags, no aliases
    expect(page.locator("article.doc").get_by_role("heading", name="Example notes")).to_be_visible()
    shows_nothing_unfilled(page, "a document without tags")

    page.goto("/#/doc/notes/ops/postgres-backups.md")
    expect(
        page.locator("article.doc").get_by_role("heading", name="Postgres backups", exact=True)
    ).to_be_visible()
    expect(page.locator(".chips")).to_contain_text("#ops")
    shows_nothing_unfilled(page, "a document with tags")

    page.locator(".chips").get_by_role("link", name="#ops").click()
    expect(page.get_by_role("heading", level=1, name="#ops")).to_be_visible()
    expect(main.locator("li").first).to_be_visible()
    shows_nothing_unfilled(page, "a tag")

    page.keyboard.press("/")
    page.keyboard.type("restore a database backup")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1, name="Search: restore a database backup")).to_be_visible()
    expect(page.locator("ol.hits > li").first).to_be_visible()
    shows_nothing_unfilled(page, "search results")

    page.get_by_role("link", name="Settings").click()
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_visible()
    expect(page.get_by_role("region", name="Usage")).to_be_visible()
    shows_nothing_unfilled(page, "settings and usage")

    page.goto("/#/edit/notes/recipes.md")
    editor = page.get_by_label("Source of notes/recipes.md")
    expect(editor).to_have_value(re.compile("^# Weekend pancakes"))
    shows_nothing_unfilled(page, "the editor")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("article.preview").get_by_role("heading", name="Weekend pancakes")).to_be_visible()
    shows_nothing_unfilled(page, "the preview")

    page.get_by_role("link", name="Close").click()
    expect(page.locator("article.doc").get_by_role("heading", name="Weekend pancakes")).to_be_visible()
    assert not errors, errors
