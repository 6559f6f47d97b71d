"""A RagdownFolder's own agent tokens (`spec.tokens`, docs/cluster.md#folder-tokens): read from Secrets,
sent to the indexer as SHA-256 digests only, failing closed, and rotated at the next resync.

The parts first (a stub Kube for the Secrets, the server's own folder JSON for drift), then the operator
as a process against the emulated API and a real indexer, with MCP calls through the official client."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragdown.folders.manage import create_folder, patch_folder
from ragdown.folders.registry import read_folder
from ragdown.serving.folders_api import folder_json
from ragdown_operator.errors import InvalidSpecError, KubeUnavailable, SecretForbidden, TokenUnavailable
from ragdown_operator.indexer import FolderState
from ragdown_operator.spec import FolderSpec, TokenRef
from ragdown_operator.tokens import read_tokens
from tests.operator.harness import ADMIN_TOKEN, LIST, MCP_HEADERS, TOKEN, World, eventually, world
from tests.serving.conftest import mcp_session

MANAGER = "RagdownFolder team/work"
TEAM_A = "team-a-token-0123456789abcdef"
TEAM_B = "team-b-token-fedcba9876543210"
ROTATED = "team-a-rotated-token-0011223344"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ref(name: str, secret: str = "team-a", key: str = "token") -> dict[str, Any]:
    return {"name": name, "secretKeyRef": {"name": secret, "key": key}}


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Secrets:
    """The Kube calls tokens.py makes, over a dict of Secrets (values as text); counts the reads."""

    def __init__(self, secrets: dict[str, dict[str, str]], fail: Exception | None = None) -> None:
        self.secrets = secrets
        self.fail = fail
        self.reads: list[str] = []

    async def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        self.reads.append(name)
        if self.fail is not None:
            raise self.fail
        found = self.secrets.get(name)
        if found is None:
            return None
        return {key: base64.b64encode(value.encode()).decode() for key, value in found.items()}


async def read(secrets: Secrets, *refs: dict[str, Any]) -> list[dict[str, str]]:
    parsed = [TokenRef.model_validate(r) for r in refs]
    # A stand-in for Kube, with the one call read_tokens makes.
    return await read_tokens(secrets, "team", parsed, ADMIN_TOKEN)  # type: ignore[arg-type]


# --- the parts ------------------------------------------------------------------------------------


def test_tokens_are_parsed_and_stated_only_when_the_spec_lists_them() -> None:
    plain = FolderSpec.of({"mcp": True}, "work")
    assert plain.tokens is None
    assert "tokens" not in plain.settings(MANAGER)  # left out: the folder's own tokens stay
    assert FolderSpec.of({"tokens": []}, "work").settings(MANAGER, [])["tokens"] == []
    listed = FolderSpec.of({"tokens": [ref("a"), ref("b", "team-b", "t.k")]}, "work")
    entries = [{"name": "a", "sha256": digest(TEAM_A)}, {"name": "b", "sha256": digest(TEAM_B)}]
    assert listed.settings(MANAGER, entries)["tokens"] == entries
    # Tokens that were not read are never sent as "none": that would open the folder.
    for unread in (None, [], entries[:1]):
        with pytest.raises(ValueError, match="not read"):
            listed.settings(MANAGER, unread)


@pytest.mark.parametrize(
    ("tokens", "where"),
    [
        ([ref("a"), ref("a", "other")], "spec.tokens"),
        ([ref("a b")], "spec.tokens.0.name"),
        ([ref("a", "Team_A")], "spec.tokens.0.secretKeyRef.name"),
        ([ref("a", key="a/b")], "spec.tokens.0.secretKeyRef.key"),
        ([{"name": "a", "value": TEAM_A}], "spec.tokens.0.secretKeyRef"),
        ([ref(f"t{i}") for i in range(21)], "spec.tokens"),
    ],
)
def test_an_invalid_token_list_names_the_field(tokens: list[dict[str, Any]], where: str) -> None:
    with pytest.raises(InvalidSpecError) as raised:
        FolderSpec.of({"tokens": tokens}, "work")
    assert str(raised.value).startswith(where + ":")
    assert TEAM_A not in str(raised.value)  # a token pasted into the spec is not repeated in the status


@pytest.mark.anyio
async def test_tokens_are_hashed_as_the_server_does_each_secret_read_once() -> None:
    secrets = Secrets({"team-a": {"token": TEAM_A + "\n", "ci": TEAM_B}})
    entries = await read(secrets, ref("z-ci", key="ci"), ref("a"))
    # A trailing newline (kubectl create secret --from-file) is no part of the token, as in a header.
    assert entries == [{"name": "a", "sha256": digest(TEAM_A)}, {"name": "z-ci", "sha256": digest(TEAM_B)}]
    assert secrets.reads == ["team-a"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("secrets", "reference", "reason", "says"),
    [
        ({}, ref("a"), "TokenSecretMissing", "no Secret team-a in namespace team"),
        ({"team-a": {"other": TEAM_A}}, ref("a"), "TokenSecretMissing", "Secret team-a has no key token"),
        ({"team-a": {"token": "short-token"}}, ref("a"), "TokenInvalid", "at least 16 characters"),
        ({"team-a": {"token": "a token with spaces"}}, ref("a"), "TokenInvalid", "visible ASCII"),
        ({"team-a": {"token": "tökén-0123456789abc"}}, ref("a"), "TokenInvalid", "visible ASCII"),
        ({"team-a": {"token": ADMIN_TOKEN}}, ref("a"), "TokenInvalid", "this is the admin token"),
    ],
)
async def test_a_token_that_cannot_be_read_names_the_secret_and_key_never_the_value(
    secrets: dict[str, dict[str, str]], reference: dict[str, Any], reason: str, says: str
) -> None:
    with pytest.raises(TokenUnavailable) as raised:
        await read(Secrets(secrets), reference)
    assert raised.value.reason == reason
    message = str(raised.value)
    assert says in message
    assert message.startswith("spec.tokens[0] (a): Secret team-a, key token: ")
    for value in (v for secret in secrets.values() for v in secret.values()):
        assert value not in message
        assert digest(value.strip()) not in message


@pytest.mark.anyio
async def test_a_secret_the_api_refuses_or_cannot_serve_is_a_reason_of_its_own() -> None:
    with pytest.raises(TokenUnavailable) as raised:
        await read(Secrets({}, SecretForbidden("403 reading Secret team-a")), ref("a"))
    assert raised.value.reason == "TokenSecretForbidden"
    assert "operator.tokenSecrets" in str(raised.value)
    with pytest.raises(TokenUnavailable) as raised:
        await read(Secrets({}, KubeUnavailable("the Kubernetes API did not answer")), ref("a"))
    assert raised.value.reason == "TokenSecretUnreadable"


def test_token_drift_is_read_from_the_servers_fingerprint(tmp_path: Path) -> None:
    """The operator compares its entries with what the server's own folder JSON shows, no digest in it."""
    spec = FolderSpec.of({"mcp": True, "tokens": [ref("b"), ref("a")]}, "work")
    entries = [{"name": "a", "sha256": digest(TEAM_A)}, {"name": "b", "sha256": digest(TEAM_B)}]
    wanted = spec.settings(MANAGER, entries)
    create_folder(tmp_path, "work", wanted, caller=MANAGER)

    def shown() -> FolderState:
        folder = read_folder(tmp_path, "work")
        assert folder is not None
        answer = folder_json(folder, 0, 0)
        assert digest(TEAM_A) not in json.dumps(answer)
        return FolderState(answer)

    assert shown().differs_from(wanted) == []
    rotated = [{"name": "a", "sha256": digest(ROTATED)}, entries[1]]
    assert shown().differs_from(spec.settings(MANAGER, rotated)) == ["tokens"]
    patch_folder(
        tmp_path, "work", {"tokens": list(reversed(entries))}, caller=MANAGER, can_rename=False
    )  # order: drift too
    assert shown().differs_from(wanted) == ["tokens"]
    cleared = FolderSpec.of({"mcp": True, "tokens": []}, "work").settings(MANAGER, [])
    assert shown().differs_from(cleared) == ["tokens"]
    patch_folder(tmp_path, "work", {"tokens": []}, caller=MANAGER, can_rename=False)
    assert shown().differs_from(cleared) == []
    # Left out of the spec, tokens are not compared at all.
    assert shown().differs_from(FolderSpec.of({"mcp": True}, "work").settings(MANAGER)) == []


# --- the operator as a process ----------------------------------------------------------------------


async def reaches(w: World, folder: str, token: str) -> int:
    """The status of an MCP tools/list on the indexer's /mcp/<folder> with `token`."""
    async with httpx.AsyncClient(base_url=w.indexer.url, timeout=30) as http:
        answer = await http.post(
            f"/mcp/{folder}", json=LIST, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"}
        )
    return answer.status_code


async def tools_through_the_client(w: World, folder: str, token: str) -> set[str]:
    async with mcp_session(f"{w.indexer.url}/mcp/{folder}", token) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


async def reason_is(w: World, name: str, reason: str) -> dict[str, Any] | None:
    ready = await w.condition(name, "Ready")
    return ready if ready and ready["status"] == "False" and ready["reason"] == reason else None


def nothing_told(w: World, *tokens: str) -> None:
    """No token, and no digest of one, in any status, event or operator log line."""
    told = [r.data for r in w.cluster if r.url.path.startswith("/apis/ragdown.dev") or "events" in r.url.path]
    text = json.dumps(told, default=str) + w.operator.log.read_text(encoding="utf-8", errors="replace")
    for token in tokens:
        assert token not in text
        assert digest(token) not in text


@pytest.mark.slow
@pytest.mark.anyio
async def test_team_tokens_come_from_secrets_close_the_folder_to_the_shared_token_and_rotate(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.apply("work", {"mcp": True, "tokens": [ref("team-a")]})
        # The Secret is not there yet: nothing is created, Ready says which Secret and key, and retries.
        missing = await eventually(lambda: reason_is(w, "work", "TokenSecretMissing"), "TokenSecretMissing")
        assert "Secret team-a, key token" in missing["message"]
        assert "not created until then" in missing["message"]
        assert not (w.indexer.docs / "work").exists()
        await w.put_secret("team-a", {"token": TEAM_A + "\n"})
        await w.settled("work")
        config = w.folder_config("work")
        assert config["tokens"] == [{"name": "team-a", "sha256": digest(TEAM_A)}]
        assert "ragdown_recall" in await tools_through_the_client(w, "work", TEAM_A)
        assert await reaches(w, "work", TOKEN) == 404  # the shared agents' token: as if no folder
        assert await reaches(w, "work", ADMIN_TOKEN) == 200

        # Rotation: the Secret changes, and the next resync (1 s here) re-reads and re-applies it.
        await w.put_secret("team-a", {"token": ROTATED})

        async def rotated() -> bool:
            return bool(w.folder_config("work")["tokens"] == [{"name": "team-a", "sha256": digest(ROTATED)}])

        await eventually(rotated, "the rotated token to reach the folder")
        assert await reaches(w, "work", ROTATED) == 200
        assert await reaches(w, "work", TEAM_A) == 403  # a token no folder takes any more
        await w.event_reasons("work", "SettingsApplied")

        # The Secret deleted: fail closed, keeping the tokens last applied (never the shared token).
        await w.delete_secret("team-a")
        gone = await eventually(
            lambda: reason_is(w, "work", "TokenSecretMissing"), "TokenSecretMissing again"
        )
        assert "keeps the tokens it had" in gone["message"]
        assert w.folder_config("work")["tokens"] == [{"name": "team-a", "sha256": digest(ROTATED)}]
        assert await reaches(w, "work", TOKEN) == 404
        nothing_told(w, TEAM_A, ROTATED)


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_open_folder_given_tokens_it_cannot_read_is_closed_then_opened_by_an_empty_list(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.apply("open", {"mcp": True})
        await w.settled("open")
        assert await reaches(w, "open", TOKEN) == 200
        await w.edit("open", {"tokens": [ref("team-b", "team-b")]})
        held = await eventually(lambda: reason_is(w, "open", "TokenSecretMissing"), "TokenSecretMissing")
        assert "MCP is off on folder open" in held["message"]  # then retried, and still so
        assert w.folder_config("open")["mcp"] is False
        assert await reaches(w, "open", TOKEN) == 404
        await w.event_reasons("open", "TokenSecretMissing")
        (first,) = [e for e in w.events("open") if e.get("reason") == "TokenSecretMissing"]
        assert "the shared agents' token no longer reaches it" in first["message"]
        async with httpx.AsyncClient(timeout=5) as http:
            metrics = (await http.get(f"http://127.0.0.1:{w.operator.metrics_port}/metrics")).text
        assert 'ragdown_operator_changes_total{change="mcp_held"} 1.0' in metrics

        await w.put_secret("team-b", {"token": TEAM_B})
        await w.settled("open")
        config = w.folder_config("open")
        assert (config["mcp"], config["tokens"]) == (True, [{"name": "team-b", "sha256": digest(TEAM_B)}])
        assert await reaches(w, "open", TEAM_B) == 200
        assert await reaches(w, "open", TOKEN) == 404

        # Left out of the spec, the tokens stay (and a warning says so); an empty list removes them.
        await w.edit("open", {"tokens": None})
        await w.settled("open")
        await w.event_reasons("open", "UnlistedTokens")
        assert w.folder_config("open")["tokens"] == [{"name": "team-b", "sha256": digest(TEAM_B)}]
        await w.edit("open", {"tokens": []})
        await w.settled("open")
        assert "tokens" not in w.folder_config("open")
        assert await reaches(w, "open", TOKEN) == 200
        nothing_told(w, TEAM_B)
