"""The Usage section's charts in Chromium (docs/web.md#usage-charts): searches, hook calls and their gaps
per day as inline SVG whose accessible names carry the numbers, in the page's light and dark colours;
and the notice of a log that is off, which leads to the field that turns it on."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.serving.conftest import Served, hook_calls
from tests.web.conftest import sign_in

# Chromium: seconds each, like every browser test, so out of the quick loop.
pytestmark = pytest.mark.slow


def named(text: str) -> re.Pattern[str]:
    return re.compile(re.escape(text))


def test_the_charts_show_each_days_searches_hook_calls_and_gaps(
    page: Page, make_served: Callable[..., Served], shots: Path
) -> None:
    served: Served = make_served(query_log=True)
    today = datetime.now(UTC).date().isoformat()
    before = (datetime.now(UTC).date() - timedelta(days=2)).isoformat()
    earlier = [  # two days ago: one search that found nothing, one hook call that added nothing
        {"ts": f"{before}T09:00:00Z", "kind": "recall", "folder": "ops", "query": "x", "hits": []},
        {"ts": f"{before}T09:01:00Z", "kind": "context", "folder": "ops", "injected": []},
    ]
    served.engine.query_log_path.parent.mkdir(parents=True, exist_ok=True)
    served.engine.query_log_path.write_text("".join(json.dumps(e) + "\n" for e in earlier), encoding="utf-8")
    with served.admin() as http:  # a section's own words clear the floor; the nonsense twice does not
        for query in ("Redis evicts keys by maxmemory-policy.", "zzzz qqqq", "zzzz qqqq"):
            http.get("/api/search", params={"folder": "ops", "q": query})
    hook_calls(served.url, 0.0, 1.0, 1.0)

    sign_in(page, served.url + "/")
    page.get_by_role("link", name="Settings").click()
    usage = page.get_by_role("region", name="Usage")
    expect(usage.get_by_role("heading", name="The last 28 days (UTC)")).to_be_visible()
    searches = usage.get_by_role("img", name=re.compile("^Searches per day"))
    expect(searches).to_have_accessible_name(
        named(
            f"4 searches in all, 3 found nothing good enough. "
            f"{before}: 1 search, 1 found nothing good enough; "
        )
    )
    expect(searches).to_have_accessible_name(named(f"{today}: 3 searches, 2 found nothing good enough."))
    hooks = usage.get_by_role("img", name=re.compile("^Hook calls per day"))
    expect(hooks).to_have_accessible_name(
        named(f"4 hook calls in all, 3 added nothing. {before}: 1 hook call, 1 added nothing; ")
    )
    expect(hooks).to_have_accessible_name(
        named(f"{today}: 3 hook calls, 2 added nothing. None on the other days.")
    )
    expect(usage.get_by_role("img", name=re.compile("^Gaps per day"))).to_have_accessible_name(
        named(
            f"searches that found nothing good enough: {before} 100% (1 of 1), {today} 67% (2 of 3); "
            f"hook calls that added nothing: {before} 100% (1 of 1), {today} 67% (2 of 3)."
        )
    )
    # Drawn as counted: two days with gaps, one with searches that found something; two days ago's one
    # gap is a third of today's three searches (one found something, two did not).
    expect(searches.locator("rect.gap")).to_have_count(2)
    expect(searches.locator("rect.good")).to_have_count(1)
    heights = searches.locator("rect.gap, rect.good").evaluate_all(
        "rects => rects.map(r => r.getBBox().height)"
    )
    old_gap, today_good, today_gap = sorted(heights)
    assert today_good == pytest.approx(old_gap)
    assert today_gap == pytest.approx(2 * old_gap)

    # The colours are the page's own, in light and in dark.
    usage.get_by_role("heading", name="The last 28 days (UTC)").scroll_into_view_if_needed()
    fill = "rect => getComputedStyle(rect).fill"
    assert searches.locator("rect.gap").first.evaluate(fill) == "rgb(154, 91, 0)"
    page.screenshot(path=shots / "usage-charts.png")
    page.emulate_media(color_scheme="dark")
    assert searches.locator("rect.gap").first.evaluate(fill) == "rgb(240, 179, 90)"
    page.screenshot(path=shots / "usage-charts-dark.png")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the charts fit its width
    for chart in usage.get_by_role("img").all():
        box = chart.bounding_box()
        assert box is not None
        assert 0 <= box["x"] <= box["x"] + box["width"] <= 390
    usage.locator(".charts").screenshot(path=shots / "usage-charts-phone.png")


def test_with_the_log_off_the_notice_leads_to_its_field(page: Page, served: Served) -> None:
    sign_in(page)
    page.get_by_role("link", name="Settings").click()
    usage = page.get_by_role("region", name="Usage")
    notice = usage.locator(".notice")
    expect(notice).to_contain_text("The query log is off")
    expect(notice).to_contain_text("RAGDOWN_QUERY_LOG=true does it for a whole deployment")
    notice.get_by_role("button", name="Keep the query log").click()
    expect(
        page.get_by_role("form", name="Server settings").get_by_label("Keep the query log")
    ).to_be_focused()
    expect(usage.get_by_role("img", name=re.compile("^Searches per day"))).to_have_accessible_name(
        re.compile(r"^Searches per day, \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d: no searches\.$")
    )
