"""The web UI as a person uses it (docs/web.md), in headless Chromium against a real server: sign in,
open a folder, follow a wikilink, search, write and save, a conflict with a change made on disk,
rename with links rewritten, the MCP switch, and copying the MCP config. Assertions are on what the
page shows and what lands on disk, not on how the page is built."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect

from tests.serving.conftest import MCP_INIT, TOKEN, Served
from tests.web.conftest import sign_in

pytestmark = pytest.mark.slow


def test_a_wrong_token_is_refused_and_the_right_one_shows_the_folders(page: Page, shots: Path) -> None:
    page.goto("/")
    page.get_by_label("Admin token").fill("not-the-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not the admin token")
    sign_in(page)
    main = page.locator("main")
    expect(main.get_by_role("link", name="Ops runbooks")).to_be_visible()
    expect(main.get_by_role("link", name="Private")).to_be_visible()
    expect(main).to_contain_text("/mcp/ops")
    expect(main).to_contain_text("human-only")
    page.screenshot(path=shots / "folders.png")


def test_a_folder_a_wikilink_and_backlinks(page: Page, shots: Path) -> None:
    sign_in(page)
    page.locator("main").get_by_role("link", name="Ops runbooks").click()
    side = page.locator("#side")
    side.get_by_role("link", name="Vacuum").click()
    document = page.locator("article.doc")
    expect(document.get_by_role("heading", name="Vacuum")).to_be_visible()
    document.get_by_role("link", name="backups").click()
    expect(page.locator("article.doc").get_by_role("heading", name="Backups", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/doc/ops/backups\.md"))
    backlinks = page.get_by_role("region", name="Backlinks")
    expect(backlinks).to_contain_text("Linked from 1 document")
    expect(backlinks.get_by_role("link", name="Vacuum")).to_be_visible()
    expect(page.locator(".chips")).to_contain_text("#db")
    expect(page.locator(".chips")).to_contain_text("Restores")
    page.screenshot(path=shots / "document.png", full_page=True)


def test_search_opens_a_hit_at_its_line(page: Page, shots: Path) -> None:
    sign_in(page)
    page.locator("main").get_by_role("link", name="Ops runbooks").click()
    expect(page.get_by_role("heading", level=1, name="Ops runbooks")).to_be_visible()
    page.keyboard.press("/")
    page.keyboard.type("redis eviction")
    page.keyboard.press("Enter")
    hits = page.locator("ol.hits > li")
    expect(hits.first).to_contain_text("ops/cache.md")
    expect(hits.first.locator("mark").first).to_have_text(re.compile("redis|eviction", re.IGNORECASE))
    page.screenshot(path=shots / "search.png")
    hits.first.get_by_role("link").click()
    expect(page).to_have_url(re.compile(r"#/doc/ops/cache\.md\?line=\d+"))
    expect(page.locator("article.doc .target")).to_contain_text(re.compile("Redis"))


def test_write_save_and_a_conflict_with_a_change_on_disk(page: Page, served: Served, shots: Path) -> None:
    sign_in(page)
    page.locator("main").get_by_role("link", name="Ops runbooks").click()
    page.get_by_role("button", name="New document").click()
    page.get_by_label("Title").fill("Failover plan")
    page.get_by_role("button", name="Create").click()
    editor = page.get_by_label("Source of ops/Failover plan.md")
    expect(editor).to_have_value("# Failover plan\n")
    editor.press("End")
    editor.press("Enter")
    editor.type("Promote the replica, then see [[back")
    expect(page.get_by_role("option", name="backups")).to_be_visible()
    editor.press("Enter")
    expect(page.locator(".toolbar .path")).to_have_text("ops/Failover plan.md · unsaved")
    page.keyboard.press("Control+s")
    expect(page.locator(".toolbar .path")).to_have_text("ops/Failover plan.md")
    on_disk = served.docs / "ops" / "Failover plan.md"
    written = on_disk.read_text(encoding="utf-8")
    assert written == "# Failover plan\nPromote the replica, then see [[backups]]\n"
    page.screenshot(path=shots / "editor.png")

    on_disk.write_text("# Failover plan\n\nAn agent rewrote this.\n", encoding="utf-8")
    editor.type(" first.")
    page.get_by_role("button", name="Save", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("changed since you opened it")
    page.screenshot(path=shots / "conflict.png")
    dialog.get_by_role("button", name="Save over it").click()
    expect(page.locator(".toolbar .path")).to_have_text("ops/Failover plan.md")  # no longer "unsaved"
    assert on_disk.read_text(encoding="utf-8").endswith("[[backups]] first.\n")


def test_rename_rewrites_the_links_to_it(page: Page, served: Served) -> None:
    sign_in(page)
    page.goto("/#/doc/ops/backups.md")
    page.get_by_role("button", name="Rename / move").click()
    page.get_by_label("New path").fill("ops/runbooks/restores.md")
    page.get_by_role("button", name="Move", exact=True).click()
    expect(page.locator("#toast")).to_contain_text("links updated in 1 document")
    expect(page).to_have_url(re.compile(r"#/doc/ops/runbooks/restores\.md"))
    assert (served.docs / "ops" / "runbooks" / "restores.md").exists()
    vacuum = (served.docs / "ops" / "db" / "vacuum.md").read_text(encoding="utf-8")
    assert "[[backups]]" not in vacuum
    assert "restores" in vacuum


def test_a_superseded_document_says_what_hides_it(page: Page, served: Served) -> None:
    """docs/web.md#screens: the notice names the superseding document and links to it."""
    (served.docs / "ops" / "backups-v2.md").write_text("---\nsupersedes: backups.md\n---\n# Backups v2\n")
    served.engine.sync()
    sign_in(page)
    page.goto("/#/doc/ops/backups.md")
    notice = page.locator("p.superseded")
    expect(notice).to_have_text("Hidden from search: superseded by ops/backups-v2.md")
    notice.get_by_role("link", name="ops/backups-v2.md").click()
    expect(page.locator("article.doc").get_by_role("heading", name="Backups v2")).to_be_visible()
    expect(page.locator("p.superseded")).to_have_count(0)


def test_the_mcp_switch_opens_and_closes_the_endpoint(page: Page, served: Served) -> None:
    def endpoint() -> int:
        headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
        return httpx.post(f"{served.url}/mcp/private", json=MCP_INIT, headers=headers, timeout=10).status_code

    assert endpoint() == 404
    sign_in(page)
    switch = page.get_by_label("MCP for private")
    expect(switch).not_to_be_checked()
    switch.check()
    expect(page.locator("#toast")).to_contain_text("MCP on: /mcp/private")
    assert endpoint() == 200
    switch.uncheck()
    expect(page.locator("#toast")).to_have_text("MCP off")
    assert endpoint() == 404


def test_copy_mcp_config_gives_the_command_with_this_servers_url(
    page: Page, served: Served, shots: Path
) -> None:
    sign_in(page)
    page.locator("main").get_by_role("link", name="Ops runbooks").click()
    page.get_by_role("button", name="Copy MCP config").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"{served.url}/mcp/ops")
    page.screenshot(path=shots / "mcp-config.png")
    dialog.get_by_role("button", name="Copy command").click()
    expect(page.locator("#toast")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    header = '--header "Authorization: Bearer <RAGDOWN_TOKEN>"'
    assert copied == f"claude mcp add --transport http ops {served.url}/mcp/ops {header}"


def test_upload_and_an_image_that_loads_through_the_api(page: Page, served: Served) -> None:
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cf000000030101005b1e0d4a0000000049454e44ae426082"
    )
    (served.docs / "ops" / "dot.png").write_bytes(png)
    sign_in(page)
    page.locator("main").get_by_role("link", name="Ops runbooks").click()
    upload: FilePayload = {
        "name": "diagram.md",
        "mimeType": "text/markdown",
        "buffer": b"# Diagram\n\n![[dot.png]]\n",
    }
    page.locator("#upload").set_input_files([upload])
    expect(page.locator("#toast")).to_have_text("Uploaded 1 document")
    assert (served.docs / "ops" / "diagram.md").read_text(encoding="utf-8") == "# Diagram\n\n![[dot.png]]\n"
    page.locator("#side").get_by_role("link", name="Diagram").click()
    image = page.locator("article.doc img")
    # Straight from the API (the session cookie goes along), never re-hosted as a blob: URL.
    expect(image).to_have_attribute("src", "/api/file?path=ops%2Fdot.png")
    page.wait_for_function("document.querySelector('article.doc img').complete")
    assert page.evaluate("document.querySelector('article.doc img').naturalWidth") == 1


def test_leaving_unsaved_changes_asks_first(page: Page, served: Served) -> None:
    sign_in(page)
    page.goto("/#/edit/ops/cache.md")
    editor = page.get_by_label("Source of ops/cache.md")
    editor.press("End")
    editor.type(" More.")
    page.once("dialog", lambda dialog: dialog.dismiss())  # "Leave without saving?" → stay
    page.locator("#side").get_by_role("link", name="Backups").click()
    expect(page).to_have_url(re.compile(r"#/edit/ops/cache\.md"))
    expect(editor).to_have_value(re.compile("^# Cache More\\."))
    page.once("dialog", lambda dialog: dialog.accept())  # → leave, the edit is dropped
    page.locator("#side").get_by_role("link", name="Backups").click()
    expect(page).to_have_url(re.compile(r"#/doc/ops/backups\.md"))
    assert "More." not in (served.docs / "ops" / "cache.md").read_text(encoding="utf-8")


def test_settings_show_usage_and_change_a_folder(
    page: Page, make_served: Callable[..., Served], shots: Path
) -> None:
    served: Served = make_served(query_log=True)
    with served.admin() as http:
        http.get("/api/search", params={"folder": "ops", "q": "zzzz qqqq"})
    sign_in(page, served.url + "/")  # this test's own server, with the query log on
    page.get_by_role("link", name="Settings").click()
    usage = page.get_by_role("region", name="Usage")
    expect(usage).to_contain_text("zzzz qqqq")
    form = page.get_by_role("form", name="Settings of private")
    form.get_by_label("Title").fill("Private notes")
    form.get_by_label("MCP: agents can reach it").check()
    form.get_by_label("Hook: sections per prompt (top_k)").fill("2")
    form.get_by_role("button", name="Save folder settings").click()
    expect(page.locator("#toast")).to_have_text("Saved")
    with served.admin() as http:
        private = http.get("/api/folders/private").json()["folder"]
    assert (private["title"], private["mcp"], private["hook"]) == ("Private notes", True, {"top_k": 2})
    expect(page.get_by_role("region", name="Server")).to_contain_text("under hash-384's floor")
    server = page.get_by_role("form", name="Server settings")
    server.get_by_label("Characters per hit").fill("500")
    server.get_by_label("Hook: sections per prompt").fill("3")
    # Wait for the save's own answer: the folder save's "Saved" toast may still be showing.
    with page.expect_response(
        lambda r: r.url.endswith("/api/settings") and r.request.method == "PATCH"
    ) as saved:
        server.get_by_role("button", name="Save server settings").click()
    assert saved.value.ok
    expect(page.locator("#toast")).to_have_text("Saved")
    assert (served.engine.settings.text_limit, served.engine.hook_settings().top_k) == (500, 3)
    server = page.get_by_role("form", name="Server settings")
    expect(server).to_contain_text("Saved here; this overrides the built-in default (2000)")
    server.get_by_label("Characters per hit").fill("")  # empty: back to the default
    server.get_by_role("button", name="Save server settings").click()
    expect(server).not_to_contain_text("overrides the built-in default (2000)")
    assert served.engine.settings.text_limit == 2000
    page.get_by_role("heading", name="Usage").scroll_into_view_if_needed()
    page.screenshot(path=shots / "settings.png")


def test_a_session_survives_a_reload_and_signing_out_ends_it(page: Page, served: Served) -> None:
    page.goto("/")
    page.evaluate("localStorage.setItem('ragdown-token', 'kept by an older page')")
    page.reload()
    assert page.evaluate("JSON.stringify(localStorage)") == "{}"  # an old page's token is removed
    sign_in(page)
    (cookie,) = page.context.cookies()
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/api")
    page.reload()
    expect(page.get_by_role("heading", level=1, name="Folders")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Admin token")).to_be_visible()
    assert page.context.cookies() == []
    # The old cookie, put back by hand, no longer signs anyone in: the server ended the session.
    fields = ("name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite")
    assert cookie.keys() <= set(fields)
    page.context.add_cookies(
        [
            {
                "name": cookie["name"],
                "value": cookie["value"],
                "domain": cookie["domain"],
                "path": cookie["path"],
                "expires": cookie["expires"],
                "httpOnly": cookie["httpOnly"],
                "secure": cookie["secure"],
                "sameSite": cookie["sameSite"],
            }
        ]
    )
    page.goto("/#/settings")
    expect(page.get_by_label("Admin token")).to_be_visible()


def test_a_phone_in_dark_mode_reads_a_document(browser: Browser, served: Served, shots: Path) -> None:
    context = browser.new_context(
        base_url=served.url, viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True
    )
    phone = context.new_page()
    sign_in(phone)
    phone.goto("/#/doc/ops/backups.md")
    heading = phone.locator("article.doc").get_by_role("heading", name="Backups", exact=True)
    expect(heading).to_be_visible()
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing runs off the side of a phone
    background = phone.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(21, 24, 29)"
    phone.screenshot(path=shots / "phone-dark.png")
    context.close()
