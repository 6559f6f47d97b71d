"""The Settings screen's Health panel (docs/doctor.md): the doctor's lines, a warning for Markdown
left loose at the top and a failure for a data dir open to others; "Check again" asks anew."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import Page, expect

from tests.serving.conftest import Served
from tests.web.conftest import sign_in

# Chromium: seconds each, like every browser test, so out of the quick loop.
pytestmark = pytest.mark.slow


def test_health_shows_a_warning_and_a_failure_with_what_to_do(page: Page, served: Served) -> None:
    os.chmod(served.engine.data_dir, 0o755)
    sign_in(page)
    page.get_by_role("link", name="Settings").click()
    health = page.get_by_role("region", name="Health")
    health.get_by_role("heading", name="Health").wait_for()
    loose = health.locator('[data-check="loose Markdown"]')
    expect(loose).to_have_attribute("data-status", "warn")
    expect(loose).to_contain_text("loose.md")
    expect(loose).to_contain_text("move each into a folder")
    modes = health.locator('[data-check="data dir modes"]')
    expect(modes).to_have_attribute("data-status", "fail")
    expect(modes).to_contain_text("chmod -R go-rwx")
    expect(health.get_by_text("1 failed,", exact=False)).to_be_visible()
    os.chmod(served.engine.data_dir, 0o700)
    health.get_by_role("button", name="Check again").click()
    expect(modes).to_have_attribute("data-status", "ok")
    expect(health.get_by_text("0 failed,", exact=False)).to_be_visible()
