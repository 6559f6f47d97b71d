"""GET /api/doctor (docs/tools.md#admin-routes): the doctor's checks on the served folders, for the
admin only."""

from __future__ import annotations

from tests.serving.conftest import Served


def test_the_admin_gets_the_checks_and_an_agent_does_not(served: Served) -> None:
    with served.admin() as http:
        checks = http.get("/api/doctor").json()
    assert all(list(check) == ["check", "status", "message", "fix"] for check in checks)
    by_name = {check["check"]: check for check in checks}
    assert by_name["loose Markdown"]["status"] == "warn"
    assert "loose.md" in by_name["loose Markdown"]["message"]
    assert by_name["index"]["status"] == "ok"
    with served.http() as http:
        assert http.get("/api/doctor").status_code in (401, 403)
    with served.http(token=None) as http:
        assert http.get("/api/doctor").status_code == 401
