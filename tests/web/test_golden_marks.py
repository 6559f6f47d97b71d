"""Marking hits from the Usage section in Chromium (docs/web.md#marking-hits): after real searches, a
person opens one search's hits and marks one right, says none of another's is, and the folder's
`.ragdown-golden.jsonl` holds both lines as `ragdown eval` reads them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from ragdown.evaluation.golden import GOLDEN_NAME, Target, read_golden
from tests.serving.conftest import Served
from tests.web.conftest import sign_in

# Chromium: seconds each, like every browser test, so out of the quick loop.
pytestmark = pytest.mark.slow


def test_marking_hits_grows_the_folders_golden_set(
    page: Page, make_served: Callable[..., Served], shots: Path
) -> None:
    served: Served = make_served(query_log=True)
    with served.admin() as http:
        for query in ("restore the database", "the lunch menu", "Restore the  DATABASE"):
            assert http.get("/api/search", params={"folder": "ops", "q": query}).status_code == 200

    sign_in(page, served.url + "/")
    page.get_by_role("link", name="Settings").click()
    usage = page.get_by_role("region", name="Usage")
    expect(usage.get_by_role("heading", name="Recent searches")).to_be_visible()
    recent = usage.get_by_role("list").filter(has_text="the lunch menu").first
    restore = recent.get_by_role("listitem").filter(has_text="restore the database")
    expect(restore).to_contain_text("ops · 2 times")  # one line however it was written
    lunch = recent.get_by_role("listitem").filter(has_text="the lunch menu")

    restore.get_by_role("button", name="Mark hits").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("heading")).to_have_text("Mark the hits of “Restore the DATABASE”")
    expect(dialog).to_contain_text(f"ops/{GOLDEN_NAME}")
    dialog.get_by_role("radio", name=re.compile(re.escape("backups.md#Restore"))).check()
    page.screenshot(path=shots / "usage-mark-hits.png")
    dialog.get_by_role("button", name="Mark as right").click()
    expect(restore.locator(".golden-status")).to_have_text("answer: backups.md#Restore")

    lunch.get_by_role("button", name="Mark hits").click()
    dialog.get_by_role("button", name="None of these is right").click()
    expect(lunch.locator(".golden-status")).to_have_text("marked unanswerable")

    lines = read_golden(served.docs / "ops" / GOLDEN_NAME)  # what `ragdown eval` parses
    assert [(line.query, line.expected, line.unanswerable, line.draft) for line in lines] == [
        ("Restore the DATABASE", (Target("backups.md", "Restore"),), False, False),
        ("the lunch menu", (), True, False),
    ]

    # Shown again, the page reads the marks back from the file.
    page.reload()
    usage = page.get_by_role("region", name="Usage")
    expect(usage.locator(".golden-status", has_text="marked unanswerable")).to_have_count(2)  # recent, gap
    expect(usage.locator(".golden-status", has_text="answer: backups.md#Restore")).to_have_count(1)
