"""The server's settings from the environment (`ragdown.settings`): the `RAGDOWN_*` names and
the two bare ones a platform sets (`PORT`, `SECURE_LOCAL_NET`), safe defaults, values checked when
the server starts rather than when a request first uses them, and tokens kept out of its repr."""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from ragdown.settings import ServerSettings


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only what a test sets: the suite's own RAGDOWN_* (a models dir) and the machine's are set aside."""
    for name in list(os.environ):
        if name.startswith("RAGDOWN_") or name in ("PORT", "SECURE_LOCAL_NET"):
            monkeypatch.delenv(name)


def test_the_defaults_serve_only_this_machine_and_only_with_a_token() -> None:
    settings = ServerSettings()
    assert (settings.host, settings.port) == ("127.0.0.1", 3000)
    assert (settings.token, settings.admin_token, settings.internal_token) == (None, None, None)
    assert settings.secure_local_net is False
    assert (settings.read_only, settings.root_mcp, settings.role) == (False, False, "auto")
    assert settings.disabled_tool_names() == frozenset()
    assert settings.hook_layer() == {}


def test_settings_are_read_from_ragdown_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_HOST", "0.0.0.0")
    monkeypatch.setenv("RAGDOWN_WATCH", "false")
    monkeypatch.setenv("RAGDOWN_READ_ONLY", "1")
    monkeypatch.setenv("RAGDOWN_ROLE", "reader")
    monkeypatch.setenv("RAGDOWN_PRIMARY_URL", "http://indexer:8081")
    monkeypatch.setenv("RAGDOWN_TAKEOVER_S", "0.5")
    monkeypatch.setenv("RAGDOWN_DOCS_DIR", "/srv/docs")
    monkeypatch.setenv("RAGDOWN_COLOUR", "red")  # unknown: ignored, as other parts read their own
    settings = ServerSettings()
    assert (settings.host, settings.watch, settings.read_only) == ("0.0.0.0", False, True)
    assert (settings.role, settings.primary_url, settings.takeover_s) == (
        "reader",
        "http://indexer:8081",
        0.5,
    )
    assert str(settings.docs_dir) == "/srv/docs"


@pytest.mark.parametrize("name", ["PORT", "RAGDOWN_PORT"])
def test_the_port_comes_from_port_or_ragdown_port(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "8080")
    assert ServerSettings().port == 8080


@pytest.mark.parametrize("name", ["SECURE_LOCAL_NET", "RAGDOWN_SECURE_LOCAL_NET"])
def test_a_trusted_network_is_said_by_either_name(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "true")
    assert ServerSettings().secure_local_net is True


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PORT", "0"),
        ("PORT", "65536"),
        ("RAGDOWN_INTERNAL_PORT", "-1"),
        ("RAGDOWN_THREADS", "0"),
        ("RAGDOWN_MAX_CONCURRENT", "0"),
        ("RAGDOWN_MAX_QUEUE", "-1"),
        ("RAGDOWN_TAKEOVER_S", "0"),
        ("RAGDOWN_ROLE", "leader"),
        ("RAGDOWN_WATCH", "sometimes"),
        ("RAGDOWN_HOOK_TOP_K", "-1"),
        ("RAGDOWN_HOOK_MIN_RATIO", "1.5"),
        ("RAGDOWN_HOOK_MIN_SCORE", "nan"),
        ("RAGDOWN_HOOK_MIN_SCORE", "inf"),
        ("RAGDOWN_INDEX_CACHE_MB", "0"),
    ],
)
def test_a_value_out_of_range_stops_the_start(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError):
        ServerSettings()


def test_tokens_never_show_in_the_settings_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "RAGDOWN_TOKEN": "agent-secret-1",
        "RAGDOWN_ADMIN_TOKEN": "admin-secret-2",
        "RAGDOWN_INTERNAL_TOKEN": "internal-secret-3",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    settings = ServerSettings()
    assert (settings.token, settings.admin_token, settings.internal_token) == tuple(secrets.values())
    shown = f"{settings!r} {settings}"
    assert not any(value in shown for value in secrets.values())


def test_disabled_tools_are_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_DISABLED_TOOLS", " ragdown_write, ,ragdown_edit ,ragdown_write,")
    assert ServerSettings().disabled_tool_names() == frozenset({"ragdown_write", "ragdown_edit"})


def test_the_hook_layer_holds_only_what_the_environment_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_HOOK_TOP_K", "0")
    monkeypatch.setenv("RAGDOWN_HOOK_MIN_SCORE", "0.25")
    assert ServerSettings().hook_layer() == {"top_k": 0, "min_score": 0.25}
    monkeypatch.setenv("RAGDOWN_HOOK_MIN_RATIO", "1")
    monkeypatch.setenv("RAGDOWN_HOOK_MAX_CHARS", "500")
    assert ServerSettings().hook_layer() == {"top_k": 0, "min_score": 0.25, "min_ratio": 1, "max_chars": 500}
