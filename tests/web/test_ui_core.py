"""What a new user tripped over in the web UI's core screens (issue 28): a stray "null" on a page,
Ctrl/Cmd+S that saved only from the text area, keystrokes lost to a page that took the focus, an
MCP chip that kept its old state, a conflict dialog that did not show what "Save over it" discards,
bar links on the sign-in screen, a `[[` menu over the line being typed and a side-bar count one
behind. Each test is a flow in Chromium against a real server (docs/web.md#screens)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Route, expect

from tests.serving.conftest import Served
from tests.web.conftest import sign_in

pytestmark = pytest.mark.slow


def test_no_null_under_new_folder_nor_above_a_document_without_tags(page: Page, served: Served) -> None:
    (served.docs / "loose.md").unlink()  # the quick start's state: no Markdown outside the folders
    sign_in(page)
    main = page.locator("main")
    expect(main.get_by_role("button", name="New folder")).to_be_visible()
    assert "null" not in main.inner_text()
    page.goto("/#/doc/ops/cache.md")  # no tags, no aliases
    expect(page.locator("article.doc").get_by_role("heading", name="Cache", exact=True)).to_be_visible()
    assert "null" not in main.inner_text()
    expect(page.locator(".chips")).to_have_count(0)


def test_ctrl_s_saves_from_preview_and_after_going_back_to_write(page: Page, served: Served) -> None:
    on_disk = served.docs / "ops" / "cache.md"
    sign_in(page)
    page.goto("/#/edit/ops/cache.md")
    editor = page.get_by_label("Source of ops/cache.md")
    status = page.locator(".toolbar .path")
    editor.press("Control+End")
    editor.type("One.")
    preview = page.get_by_role("button", name="Preview")
    preview.click()
    expect(page.locator("article.preview")).to_contain_text("One.")
    page.keyboard.press("Control+s")
    expect(status).to_have_text("ops/cache.md")  # saved: no longer "unsaved"
    assert on_disk.read_text(encoding="utf-8").endswith("One.")

    page.get_by_role("button", name="Write").click()
    editor.press("Control+End")
    editor.type(" Two.")
    page.get_by_role("button", name="Preview").click()
    page.get_by_role("button", name="Write").click()  # the focus is on the button, not the text
    expect(status).to_have_text("ops/cache.md · unsaved")
    page.keyboard.press("Meta+s")
    expect(status).to_have_text("ops/cache.md")
    assert on_disk.read_text(encoding="utf-8").endswith("One. Two.")
    # Leaving asks nothing now: there is nothing unsaved.
    page.get_by_role("link", name="Close").click()
    expect(page).to_have_url(re.compile(r"#/doc/ops/cache\.md$"))


def test_what_is_typed_after_slash_while_a_page_loads_stays_in_the_search_box(page: Page) -> None:
    sign_in(page)
    page.goto("/#/folder/ops")
    expect(page.get_by_role("heading", level=1, name="Ops runbooks")).to_be_visible()
    held: list[Route] = []
    page.route("**/api/render?*", lambda route: held.append(route))  # the document answers when the test says
    page.locator("#side").get_by_role("link", name="Backups").click()
    page.keyboard.press("/")
    page.keyboard.type("pg re")
    page.wait_for_function("document.activeElement.id === 'search-input'")
    assert len(held) == 1
    held[0].continue_()
    expect(page.locator("article.doc").get_by_role("heading", name="Backups", exact=True)).to_be_visible()
    page.keyboard.type("store")
    expect(page.locator("#search-input")).to_have_value("pg restore")


def test_turning_mcp_off_updates_the_chip_on_the_screen(page: Page) -> None:
    sign_in(page)
    main = page.locator("main")
    row = main.locator("li", has=page.get_by_role("link", name="Ops runbooks"))
    expect(row).to_contain_text("/mcp/ops")
    page.get_by_label("MCP for ops").uncheck()
    expect(page.locator("#toast")).to_have_text("MCP off")
    expect(row).to_contain_text("human-only")
    expect(row).not_to_contain_text("/mcp/ops")

    main.get_by_role("link", name="Ops runbooks").click()
    where = main.locator(".toolbar .path")
    expect(where).to_have_text("human-only: agents cannot reach it")
    page.get_by_label("MCP for ops").check()
    expect(where).to_have_text(re.compile(r"^http://127\.0\.0\.1:\d+/mcp/ops$"))


def test_the_conflict_dialog_shows_the_change_on_disk_beside_the_edit(page: Page, served: Served) -> None:
    on_disk = served.docs / "ops" / "cache.md"
    sign_in(page)
    page.goto("/#/edit/ops/cache.md")
    editor = page.get_by_label("Source of ops/cache.md")
    editor.press("Control+End")
    editor.type("My own line.\n")
    on_disk.write_text(on_disk.read_text(encoding="utf-8") + "An agent wrote this.\n", encoding="utf-8")
    page.get_by_role("button", name="Save", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("changed since you opened it")
    # What "Save over it" would throw away, and what it would write instead.
    expect(dialog.locator(".diff .disk")).to_have_text(["An agent wrote this."])
    expect(dialog.locator(".diff .mine")).to_have_text(["My own line."])
    dialog.get_by_role("button", name="Keep editing").click()
    expect(editor).to_have_value(re.compile("My own line\\.\\n$"))


def test_the_sign_in_screen_shows_no_settings_nor_sign_out(page: Page) -> None:
    page.goto("/")
    expect(page.get_by_label("Admin token")).to_be_visible()
    bar = page.locator("header.bar")
    expect(bar.get_by_role("link", name="Settings")).to_be_hidden()
    expect(bar.get_by_role("button", name="Sign out")).to_be_hidden()
    sign_in(page)
    expect(bar.get_by_role("link", name="Settings")).to_be_visible()
    bar.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Admin token")).to_be_visible()
    expect(bar.get_by_role("link", name="Settings")).to_be_hidden()
    expect(bar.get_by_role("button", name="Sign out")).to_be_hidden()


def test_the_wikilink_menu_opens_below_the_line_being_typed(page: Page) -> None:
    sign_in(page)
    page.goto("/#/edit/ops/cache.md")
    editor = page.get_by_label("Source of ops/cache.md")
    editor.press("Control+End")
    editor.type("\nSee [[back")
    expect(page.get_by_role("option", name="backups")).to_be_visible()
    # Where the caret's line ends on screen: the text area's top, its border and padding, and as many
    # lines as the text holds up to the caret (none wraps at this width).
    line_bottom = page.evaluate(
        """() => {
          const area = document.querySelector('.editor textarea');
          const style = getComputedStyle(area);
          const lines = area.value.slice(0, area.selectionStart).split('\\n').length;
          return area.getBoundingClientRect().top + parseFloat(style.borderTopWidth)
            + parseFloat(style.paddingTop) + lines * parseFloat(style.lineHeight) - area.scrollTop;
        }"""
    )
    line_height = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('.editor textarea')).lineHeight)"
    )
    menu = page.locator("ul.complete").bounding_box()
    assert menu is not None
    assert line_bottom - 1 <= menu["y"] <= line_bottom + line_height, (menu, line_bottom)


def test_the_wikilink_menu_on_the_text_areas_last_line_opens_above_it(page: Page, served: Served) -> None:
    lines = "".join(f"Line {n}.\n" for n in range(80))
    (served.docs / "ops" / "long.md").write_text(f"# Long\n\n{lines}", encoding="utf-8")
    served.engine.sync()
    sign_in(page)
    page.goto("/#/edit/ops/long.md")
    editor = page.get_by_label("Source of ops/long.md")
    editor.press("Control+End")
    editor.type("See [[back")
    expect(page.get_by_role("option", name="backups")).to_be_visible()
    line = page.evaluate(
        """() => {
          const area = document.querySelector('.editor textarea');
          const style = getComputedStyle(area);
          const height = parseFloat(style.lineHeight);
          const lines = area.value.slice(0, area.selectionStart).split('\\n').length;
          const bottom = area.getBoundingClientRect().top + parseFloat(style.borderTopWidth)
            + parseFloat(style.paddingTop) + lines * height - area.scrollTop;
          return { top: bottom - height, bottom, areaBottom: area.getBoundingClientRect().bottom };
        }"""
    )
    assert line["top"] < line["areaBottom"] <= line["bottom"] + 8  # the caret's line: at the foot
    menu = page.locator("ul.complete").bounding_box()
    assert menu is not None
    assert menu["y"] + menu["height"] <= line["top"] + 1, (menu, line)


def test_the_side_bar_counts_a_new_document_at_once(page: Page) -> None:
    sign_in(page)
    page.locator("main").get_by_role("link", name="Ops runbooks").click()
    ops = page.locator("#side .folders li", has=page.get_by_role("link", name="Ops runbooks"))
    count = ops.locator(".count")
    expect(count).to_have_text("3")
    page.get_by_role("button", name="New document").click()
    page.get_by_label("Title").fill("Failover plan")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_label("Source of ops/Failover plan.md")).to_be_visible()
    expect(count).to_have_text("4")
