"""The admin's other routes (docs/tools.md#admin-routes) over real HTTP: server settings saved over the
environment (in effect at once, `null` restores, bad values and unloadable embedders change
nothing), the query log's summary and emptying it, and deleting loose Markdown (only that)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from ragdown.indexing.embedders.openai_compat import OpenAIEmbedder
from tests.serving.conftest import MCP_INIT, Served


def test_the_usage_summary_follows_what_was_searched_and_read(make_served: Callable[..., Served]) -> None:
    served = make_served(query_log=True)
    with served.admin() as http:
        assert http.get("/api/query-log").json()["summary"]["searches"] == 0
        http.get("/api/search", params={"folder": "ops", "q": "redis eviction"})
        http.get("/api/search", params={"folder": "ops", "q": "zzzz qqqq"})
        usage = http.get("/api/query-log").json()
        assert usage["enabled"] is True
        assert usage["summary"]["searches"] == 2
        assert "zzzz qqqq" in [g["query"] for g in usage["summary"]["gaps"]]
        assert http.delete("/api/query-log").json() == {"cleared": True}
        assert http.get("/api/query-log").json()["summary"]["searches"] == 0


def test_without_the_log_the_summary_says_it_is_off(served: Served) -> None:
    with served.admin() as http:
        usage = http.get("/api/query-log").json()
    assert usage["enabled"] is False
    assert usage["summary"]["searches"] == 0


def test_only_loose_markdown_can_be_deleted_through_loose(make_served: Callable[..., Served]) -> None:
    served = make_served()
    with served.admin() as http:
        for name in ("ops", "ops/backups.md", "../x.md", ".ragdown-server.json", "nope.md"):
            refused = http.delete("/api/loose", params={"name": name})
            assert refused.status_code == 404, name
        gone = http.delete("/api/loose", params={"name": "loose.md"})
        assert gone.json() == {"deleted": "loose.md", "loose_files": []}
    assert not (served.docs / "loose.md").exists()
    assert (served.docs / "ops" / "backups.md").exists()
    read_only = make_served(read_only=True)
    (read_only.docs / "again.md").write_text("# Again\n", encoding="utf-8")
    with read_only.admin() as http:
        assert http.delete("/api/loose", params={"name": "again.md"}).status_code == 403
        assert http.get("/api/query-log").status_code == 200
    with read_only.http() as http:
        assert http.get("/api/query-log").status_code == 403


def test_saved_settings_go_over_the_environment_and_null_gives_it_back(
    make_served: Callable[..., Served],
) -> None:
    served = make_served()
    config = served.docs / ".ragdown-server.json"
    with served.admin() as http:
        before = http.get("/api/settings").json()
        assert before["settings"]["text_limit"] == before["env"]["text_limit"] == 2000
        changed = http.patch(
            "/api/settings", json={"text_limit": 300, "query_log": True, "hook": {"top_k": 2}}
        )
        assert changed.status_code == 200, changed.text
        assert changed.json()["settings"]["text_limit"] == 300
        assert changed.json()["saved"] == {"text_limit": 300, "query_log": True, "hook": {"top_k": 2}}
        assert served.engine.settings.text_limit == 300  # in effect at once
        assert served.engine.query_log is not None
        status = http.get("/api/status").json()["settings"]
        assert (status["text_limit"], status["hook"]["top_k"]) == (300, 2)
        restored = http.patch("/api/settings", json={"text_limit": None, "hook": {"top_k": None}})
        assert restored.json()["settings"]["text_limit"] == 2000
        assert restored.json()["saved"] == {"query_log": True}
    assert json.loads(config.read_text(encoding="utf-8")) == {"query_log": True}


def test_root_mcp_saved_from_the_ui_opens_bare_mcp(make_served: Callable[..., Served]) -> None:
    served = make_served()
    with served.http() as http:
        assert http.post("/mcp", json={}).json() == {"error": "Pick a folder: /mcp/<folder>"}
    with served.admin() as http:
        assert http.patch("/api/settings", json={"root_mcp": True}).status_code == 200
    with served.http() as http:
        answer = http.post("/mcp", json=MCP_INIT, headers={"Accept": "application/json, text/event-stream"})
        assert answer.status_code == 200


def test_bad_settings_are_refused_in_plain_words_and_write_nothing(
    make_served: Callable[..., Served],
) -> None:
    served = make_served()
    cases = [
        ({"text_limit": "300"}, "text_limit must be a whole number"),
        ({"text_limit": -1}, "text_limit must be"),
        ({"watch": "yes"}, "watch must be true or false"),
        ({"token": "x"}, "unknown server setting: token"),
        ({"hook": {"top_k": 99}}, "hook.top_k must be from 0 to 50"),
        ({"embedder": "nope"}, "embedder must be"),
        ({}, "send at least one setting"),
    ]
    with served.admin() as http:
        for body, error in cases:
            refused = http.patch("/api/settings", json=body)
            assert refused.status_code == 400, body
            assert refused.json()["error"].startswith(error), refused.json()
    assert not (served.docs / ".ragdown-server.json").exists()
    read_only = make_served(read_only=True)
    with read_only.admin() as http:
        assert http.patch("/api/settings", json={"text_limit": 300}).status_code == 403


def test_an_embedder_that_cannot_load_changes_nothing(
    make_served: Callable[..., Served], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGDOWN_EMBEDDING_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    # The retries at once, not 7.5 s of backoff (tests/indexing/test_embedders_openai.py tests the backoff).
    monkeypatch.setattr(OpenAIEmbedder, "_delay", lambda *_: 0.0)
    served = make_served()
    with served.admin() as http:
        refused = http.patch(
            "/api/settings", json={"embedder": "openai:text-embedding-3-small", "text_limit": 10}
        )
        assert refused.status_code == 400
        assert refused.json()["error"].startswith(
            "the embedder openai:text-embedding-3-small cannot be loaded"
        )
        assert http.get("/api/status").json()["embedder"] == "hash-384"
    assert not (served.docs / ".ragdown-server.json").exists()
    assert served.engine.settings.text_limit == 2000


@pytest.mark.slow  # loads the real MiniLM
def test_a_new_embedder_rebuilds_beside_the_old_and_searches_go_on(
    make_served: Callable[..., Served],
) -> None:
    served = make_served()
    with served.admin() as http:
        changed = http.patch("/api/settings", json={"embedder": "minilm"})
        assert changed.status_code == 200, changed.text
        assert changed.json()["saved"] == {"embedder": "minilm"}
        served.engine.sync()  # the rebuild the switch started, joined
        assert http.get("/api/status").json()["embedder"].startswith("all-MiniLM-L6-v2")
        hits = http.get("/api/search", params={"folder": "ops", "q": "restore a database"}).json()["hits"]
    assert hits[0]["path"] == "ops/backups.md"
