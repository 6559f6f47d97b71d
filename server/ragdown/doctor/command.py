"""`ragdown doctor [FOLDER] [--json]`: the checks' lines on stdout, exit 1 on any fail
(docs/doctor.md)."""

from __future__ import annotations

from ragdown.doctor.report import exit_code
from ragdown.doctor.run import as_json, run_checks, target_for
from ragdown.settings import ServerSettings


def doctor(folder: str | None, settings: ServerSettings, *, json_out: bool) -> int:
    checks = run_checks(target_for(folder, settings))
    print(as_json(checks) if json_out else "\n".join(check.line() for check in checks), flush=True)
    return exit_code(checks)
