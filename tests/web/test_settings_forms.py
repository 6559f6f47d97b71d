"""The settings forms in Chromium (docs/web.md#settings-forms): an emptied field goes back to the
default and removes the saved value (it never saves 0), each field shows what applies when it is
empty, the help says in plain words where a value comes from, and the server's and a folder's forms
share one layout."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.serving.conftest import Served
from tests.web.conftest import sign_in

pytestmark = pytest.mark.slow


def open_settings(page: Page, served: Served) -> None:
    sign_in(page, served.url + "/")
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("form", name="Server settings").wait_for()


def save(page: Page, form: Locator, button: str, path: str) -> None:
    """Click the form's save button and wait for the server's answer to it."""
    with page.expect_response(
        lambda r: r.url.split("?")[0].endswith(path) and r.request.method == "PATCH"
    ) as saved:
        form.get_by_role("button", name=button).click()
    assert saved.value.ok, saved.value.text()
    expect(page.locator("#toast")).to_have_text("Saved")


def saved_settings(served: Served) -> dict[str, Any]:
    with served.admin() as http:
        saved: dict[str, Any] = http.get("/api/settings").json()["saved"]
    return saved


def test_an_emptied_server_field_goes_back_to_the_default_and_is_not_saved(
    page: Page, make_served: Callable[..., Served]
) -> None:
    served = make_served()
    open_settings(page, served)
    form = page.get_by_role("form", name="Server settings")
    limit = form.get_by_label("Characters per hit")
    expect(limit).to_have_value("")
    expect(limit).to_have_attribute("placeholder", "2000")  # what applies while the field is empty
    limit.fill("500")
    save(page, form, "Save server settings", "/api/settings")
    assert saved_settings(served) == {"text_limit": 500}
    assert served.engine.settings.text_limit == 500

    form = page.get_by_role("form", name="Server settings")
    expect(form.get_by_label("Characters per hit")).to_have_value("500")  # the screen shown again
    form.get_by_label("Characters per hit").fill("")
    save(page, form, "Save server settings", "/api/settings")
    assert "text_limit" not in saved_settings(served)  # removed, not saved as 0 ("never cut")
    assert served.engine.settings.text_limit == 2000
    limit = page.get_by_role("form", name="Server settings").get_by_label("Characters per hit")
    expect(limit).to_have_value("")


def test_a_yes_no_setting_has_a_default_choice_that_removes_the_saved_value(
    page: Page, make_served: Callable[..., Served]
) -> None:
    served = make_served()
    open_settings(page, served)
    form = page.get_by_role("form", name="Server settings")
    watch = form.get_by_label("Watch the folders for changes")
    expect(watch.locator("option:checked")).to_have_text("Default (off)")  # the test server's watch
    watch.select_option("true")
    save(page, form, "Save server settings", "/api/settings")
    assert saved_settings(served) == {"watch": True}
    form = page.get_by_role("form", name="Server settings")
    expect(form.get_by_label("Watch the folders for changes").locator("option:checked")).to_have_text("On")
    form.get_by_label("Watch the folders for changes").select_option("")
    save(page, form, "Save server settings", "/api/settings")
    assert saved_settings(served) == {}


def test_the_help_says_where_a_value_comes_from_in_plain_words(
    page: Page, make_served: Callable[..., Served]
) -> None:
    served = make_served(text_limit=1500)  # as RAGDOWN_TEXT_LIMIT=1500 would
    open_settings(page, served)
    form = page.get_by_role("form", name="Server settings")
    expect(page.locator("main")).not_to_contain_text("Saved over the environment")
    limit = form.get_by_label("Characters per hit")
    expect(limit).to_have_attribute("placeholder", "1500")
    expect(limit).to_have_accessible_description(
        "0 never cuts a hit. Nothing saved here: RAGDOWN_TEXT_LIMIT=1500 from the environment applies."
    )
    expect(form.get_by_label("Sections per document in a search")).to_have_accessible_description(
        "0: no cap. Nothing saved here: the built-in default (0) applies. "
        "RAGDOWN_MAX_PER_DOCUMENT would set it."
    )
    limit.fill("700")
    save(page, form, "Save server settings", "/api/settings")
    limit = page.get_by_role("form", name="Server settings").get_by_label("Characters per hit")
    expect(limit).to_have_accessible_description(
        "0 never cuts a hit. Saved here; this overrides RAGDOWN_TEXT_LIMIT=1500 from the environment. "
        "Empty the field to use that again."
    )


def test_an_emptied_folder_hook_field_removes_the_folders_value(
    page: Page, make_served: Callable[..., Served]
) -> None:
    served = make_served()
    open_settings(page, served)
    form = page.get_by_role("form", name="Settings of private")
    top_k = form.get_by_label("Hook: sections per prompt (top_k)")
    server_top_k = served.engine.hook_settings().top_k
    expect(top_k).to_have_value("")
    expect(top_k).to_have_attribute("placeholder", str(server_top_k))  # the server's, which applies
    top_k.fill("2")
    save(page, form, "Save folder settings", "/api/folders/private")
    config = served.docs / "private" / ".ragdown.json"
    assert json.loads(config.read_text(encoding="utf-8"))["hook"] == {"top_k": 2}

    form = page.get_by_role("form", name="Settings of private")
    expect(form.get_by_label("Hook: sections per prompt (top_k)")).to_have_value("2")  # shown again
    form.get_by_label("Hook: sections per prompt (top_k)").fill("")
    save(page, form, "Save folder settings", "/api/folders/private")
    assert "hook" not in json.loads(config.read_text(encoding="utf-8"))


LAYOUT = """form => [...form.querySelectorAll('.field')].map(row => {
  const label = row.querySelector(':scope > label');
  const field = row.querySelector(':scope > input, :scope > select');
  const help = row.querySelector(':scope > .help');
  return {
    label: label && label.getBoundingClientRect().left,
    field: field && field.getBoundingClientRect().left,
    labelled: Boolean(field && label && label.htmlFor === field.id),
    help: Boolean(help && help.textContent.trim()),
    shows: Boolean(field && (field.type === 'checkbox' || field.tagName === 'SELECT'
      || field.value || field.placeholder)),
  };
})"""


def test_the_server_and_folder_forms_share_one_layout(page: Page, make_served: Callable[..., Served]) -> None:
    served = make_served()
    open_settings(page, served)
    server = page.get_by_role("form", name="Server settings").evaluate(LAYOUT)
    folder = page.get_by_role("form", name="Settings of ops").evaluate(LAYOUT)
    assert len(server) >= 11
    assert len(folder) >= 9
    rows = server + folder
    # Every setting: a label tied to its field, a line of help, and a value or what applies instead.
    assert all(r["labelled"] and r["help"] and r["shows"] for r in rows), rows
    # Labels in one column and fields in another, the same in both forms.
    assert len({r["label"] for r in rows}) == 1, rows
    assert len({r["field"] for r in rows}) == 1, rows
    for name in ("Server settings", "Settings of ops"):
        buttons = page.get_by_role("form", name=name).locator(".actions > button.primary")
        expect(buttons).to_have_count(1)
