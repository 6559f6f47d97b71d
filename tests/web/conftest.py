"""The web UI in headless Chromium (Debian's `chromium`, driven by Playwright) against a real `serve`
app: the same served folders as tests/serving."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.serving.conftest import ADMIN_TOKEN, Served, folder_docs, make_served, served  # noqa: F401

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Where screenshots go: docs/screenshots when RAGDOWN_SCREENSHOTS names it (the README's are made so),
# else a temporary folder.
SHOTS_ENV = "RAGDOWN_SCREENSHOTS"


# Package scope: Playwright's sync API runs an event loop in this thread while it lives, so tests
# collected after tests/web in one session (anyio.run, asyncio.run) would meet "already running".
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if CHROMIUM is None:
        if os.environ.get("RAGDOWN_REQUIRE_BROWSER"):
            pytest.fail(
                "chromium is not installed (apt-get install chromium) and RAGDOWN_REQUIRE_BROWSER is set"
            )
        pytest.skip("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get(SHOTS_ENV) or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser: Browser, served: Served) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(
        base_url=served.url,
        viewport={"width": 1280, "height": 820},
        permissions=["clipboard-read", "clipboard-write"],
    )
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    # An error the page's scripts never caught (a module that failed to load, a rejected promise
    # nobody handled) fails the test, even where the screen looked right.
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(f"{error.name}: {error.message}"))
    yield opened
    context.close()
    assert not errors, errors


def sign_in(page: Page, url: str = "/") -> None:
    page.goto(url)
    page.get_by_label("Admin token").fill(ADMIN_TOKEN)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", level=1, name="Folders").wait_for()
