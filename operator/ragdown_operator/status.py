"""The resource's status: conditions Ready / Synced / Routed (as metav1.Condition), counts, endpoint."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragdown_operator.constants import CONDITION_TYPES, READY, ROUTED, SYNCED


@dataclass(frozen=True)
class Condition:
    type: str
    ok: bool
    reason: str
    message: str


def now() -> str:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def conditions(
    previous: Sequence[Mapping[str, Any]], changed: Sequence[Condition], generation: int | None
) -> list[dict[str, Any]]:
    """The conditions after `changed`: each keeps its lastTransitionTime unless its status flips.
    Ready is derived: True only when Synced and Routed both are."""
    by_type = {c.get("type"): dict(c) for c in previous if isinstance(c, Mapping)}
    for condition in changed:
        _set(by_type, condition, generation)
    synced = by_type.get(SYNCED, {}).get("status") == "True"
    routed = by_type.get(ROUTED, {}).get("status") == "True"
    if synced and routed:
        _set(by_type, Condition(READY, True, "Reconciled", "settings applied and route in place"), generation)
    else:
        failing = [by_type[t] for t in (SYNCED, ROUTED) if t in by_type and by_type[t]["status"] != "True"]
        first = failing[0] if failing else {"reason": "Pending", "message": "not reconciled yet"}
        _set(by_type, Condition(READY, False, first["reason"], first["message"]), generation)
    return [by_type[t] for t in CONDITION_TYPES if t in by_type]


def _set(by_type: dict[Any, dict[str, Any]], condition: Condition, generation: int | None) -> None:
    status = "True" if condition.ok else "False"
    old = by_type.get(condition.type)
    moved = old is None or old.get("status") != status
    entry: dict[str, Any] = {
        "type": condition.type,
        "status": status,
        "reason": condition.reason,
        "message": condition.message[:32768],
        "lastTransitionTime": now() if moved or old is None else old.get("lastTransitionTime", now()),
    }
    if generation is not None:
        entry["observedGeneration"] = generation
    by_type[condition.type] = entry
