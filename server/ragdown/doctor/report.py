"""One check's answer: its name, ok / warn / fail, what was found and what to do (docs/doctor.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from ragdown.documents.paths import shown

Status = Literal["ok", "warn", "fail"]
# How many names a line repeats before it says how many more there are.
FIRST_FEW = 5


class Check(BaseModel):
    check: str
    status: Status
    message: str
    fix: str = ""

    def line(self) -> str:
        """The line `ragdown doctor` prints: status, check, what was found, and what to do."""
        text = f"{self.status:<4}  {self.check}: {self.message}"
        return f"{text}; {self.fix}" if self.fix else text


def ok(check: str, message: str) -> Check:
    return Check(check=check, status="ok", message=message)


def warn(check: str, message: str, fix: str) -> Check:
    return Check(check=check, status="warn", message=message, fix=fix)


def fail(check: str, message: str, fix: str) -> Check:
    return Check(check=check, status="fail", message=message, fix=fix)


def first_few(names: Sequence[str], limit: int = FIRST_FEW) -> str:
    """The first names (escaped, as any message shows a path) and how many more there are."""
    listed = ", ".join(shown(name) for name in names[:limit])
    more = len(names) - limit
    return f"{listed} and {more} more" if more > 0 else listed


def exit_code(checks: Sequence[Check]) -> int:
    """1 when any check failed, else 0 (a warning is for a person to read, not for CI to stop on)."""
    return 1 if any(check.status == "fail" for check in checks) else 0
