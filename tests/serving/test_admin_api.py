"""The admin's other routes (docs/tools.md#admin-routes) over real HTTP: the query log's summary and
emptying it, and deleting loose Markdown (only that)."""

from __future__ import annotations

from collections.abc import Callable

from tests.serving.conftest import Served


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
