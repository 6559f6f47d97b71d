"""GET /api/settings says what each server setting falls back to when nothing is saved for it, and
where that value comes from (docs/web.md#server-settings); `null` removes a saved value rather than
saving the default."""

from __future__ import annotations

from collections.abc import Callable

from tests.serving.conftest import Served


def test_defaults_name_the_variable_and_whether_the_environment_sets_it(
    make_served: Callable[..., Served],
) -> None:
    served = make_served(text_limit=1500)  # as RAGDOWN_TEXT_LIMIT=1500 would
    with served.admin() as http:
        assert http.patch("/api/settings", json={"hook": {"top_k": 3}}).status_code == 200
        defaults = http.get("/api/settings").json()["defaults"]
    assert defaults["text_limit"] == {"value": 1500, "variable": "RAGDOWN_TEXT_LIMIT", "set": True}
    assert defaults["max_per_document"] == {"value": 0, "variable": "RAGDOWN_MAX_PER_DOCUMENT", "set": False}
    # No variable names an embedder: the index's, the one in use, stays.
    assert defaults["embedder"] == {
        "value": served.engine.embedder.name,
        "variable": "RAGDOWN_EMBEDDER",
        "set": False,
    }
    # The hook's without the saved layer: the saved top_k of 3 is not its default.
    assert defaults["hook"]["top_k"] == {"value": 4, "variable": "RAGDOWN_HOOK_TOP_K", "set": False}
    assert defaults["hook"]["min_score"] == {"value": 0.0, "variable": "RAGDOWN_HOOK_MIN_SCORE", "set": True}


def test_null_removes_a_saved_value_instead_of_saving_the_default(make_served: Callable[..., Served]) -> None:
    served = make_served()
    with served.admin() as http:
        http.patch("/api/settings", json={"text_limit": 500, "hook": {"max_chars": 900}}).raise_for_status()
        answer = http.patch("/api/settings", json={"text_limit": None, "hook": {"max_chars": None}})
    assert answer.status_code == 200
    assert answer.json()["saved"] == {}
    assert served.engine.settings.text_limit == 2000
