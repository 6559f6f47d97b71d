"""Tenants on Kubernetes (docs/security.md#tenants, item 14): folders whose agent tokens come from
Secrets through the operator. One team's token reaches its own folder only; a team that may create
RagdownFolders can neither take another team's folder over, nor turn the chart's admin token into a
folder token, nor learn a token from a status, an event or the operator's log.

The operator runs as a process against the emulated Kubernetes API with a real indexer
(tests/operator/harness.py); MCP calls go to the indexer's /mcp/<folder>."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.operator.harness import ADMIN_TOKEN, LIST, MCP_HEADERS, TOKEN, World, eventually, world

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TEAM_A = "team-a-secret-token-000111222333"
TEAM_B = "team-b-secret-token-444555666777"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def tokens(secret: str, key: str = "token", name: str = "team") -> list[dict[str, Any]]:
    return [{"name": name, "secretKeyRef": {"name": secret, "key": key}}]


async def status_of(w: World, folder: str, token: str) -> int:
    async with httpx.AsyncClient(base_url=w.indexer.url, timeout=30) as http:
        answer = await http.post(
            f"/mcp/{folder}", json=LIST, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"}
        )
    return answer.status_code


async def failing(w: World, name: str, reason: str) -> dict[str, Any] | None:
    synced = await w.condition(name, "Synced")
    return synced if synced and synced["status"] == "False" and synced["reason"] == reason else None


async def test_one_teams_token_reaches_its_own_folder_only_and_cannot_be_taken_over(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.put_secret("team-a", {"token": TEAM_A})
        await w.put_secret("team-b", {"token": TEAM_B})
        # The chart's own Secret, in the same namespace as every team's resources.
        await w.put_secret("rd-ragdown-token", {"adminToken": ADMIN_TOKEN, "token": TOKEN})
        await w.apply("a", {"mcp": True, "tokens": tokens("team-a")})
        await w.apply("b", {"mcp": True, "tokens": tokens("team-b")})
        await w.settled("a")
        await w.settled("b")
        before = w.folder_config("a")

        reach = {
            (folder, who): await status_of(w, folder, token)
            for folder in ("a", "b")
            for who, token in (("A", TEAM_A), ("B", TEAM_B), ("shared", TOKEN), ("admin", ADMIN_TOKEN))
        }
        assert reach == {
            ("a", "A"): 200,
            ("a", "B"): 404,  # as if there were no such folder
            ("a", "shared"): 404,
            ("a", "admin"): 200,
            ("b", "A"): 404,
            ("b", "B"): 200,
            ("b", "shared"): 404,
            ("b", "admin"): 200,
        }

        # Team B names folder a in a resource of its own, with its token: refused, a is unchanged.
        await w.apply("b-takes-a", {"folder": "a", "mcp": True, "tokens": tokens("team-b")})
        await eventually(lambda: failing(w, "b-takes-a", "FolderManagedElsewhere"), "FolderManagedElsewhere")
        assert w.folder_config("a") == before
        assert await status_of(w, "a", TEAM_B) == 404

        # A resource naming the chart's own Secret: the admin token is never made a folder's token.
        await w.apply("grab", {"mcp": True, "tokens": tokens("rd-ragdown-token", "adminToken")})
        refused = await eventually(lambda: failing(w, "grab", "TokenInvalid"), "TokenInvalid")
        assert "this is the admin token" in refused["message"]
        assert not (w.indexer.docs / "grab").exists()

        # Nothing anyone can read in the cluster or the log holds a token or its digest.
        told = [r.data for r in w.cluster if r.url.path.startswith("/apis/") or "events" in r.url.path]
        text = json.dumps(told, default=str) + w.operator.log.read_text(encoding="utf-8", errors="replace")
        for secret in (TEAM_A, TEAM_B, ADMIN_TOKEN):
            assert secret not in text
            assert hashlib.sha256(secret.encode()).hexdigest() not in text
