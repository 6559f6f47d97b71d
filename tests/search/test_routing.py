"""Identifier routing (docs/search.md#identifier-routing): the exact routed and not-routed tables, and each
rule."""

from __future__ import annotations

import pytest

from ragdown.search.routing import is_routed, strip_token, strong_names

NOT_ROUTED = [
    "up-to-date",
    "e.g.",
    "10:30",
    "well-known",
    "don't",
    "3.5",
    "4.2.1",
    "U.S.",
    "and/or",
    "a 2nd try",
    "the 1990s",
    "5pm",
    "the `typescript` compiler",
    "- a list item",
]
ROUTED = [
    "pg_restore",
    "edit config.yaml.",
    "db.r6g.large",
    "ops/backups.md",
    "/etc/hosts",
    "a/b/c",
    "--percent=5",
    "rm -rf",
    "maxChars",
    "StreamableHTTP",
    "r6g",
    "s3",
    "4xlarge",
    "runs `veltra build x`",
]


@pytest.mark.parametrize("query", NOT_ROUTED)
def test_plain_prose_is_not_routed(query: str) -> None:
    assert not is_routed(query)


@pytest.mark.parametrize("query", ROUTED)
def test_queries_naming_something_are_routed(query: str) -> None:
    assert is_routed(query)


@pytest.mark.parametrize(
    "query",
    [
        "how do I restore a database backup",
        "what happened in the 2nd incident of the 1990s at 5pm?",
        "who approves production deploys, e.g. on Fridays?",
        "is the cache up-to-date and/or well-known",
        "check the 3.5 or 4.2.1 release notes",
        "a lone / or // in prose",
        "yes -- no -",
    ],
)
def test_everyday_questions_stay_on_rrf(query: str) -> None:
    assert not is_routed(query)


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("how does queue_depth alert", "snake_case"),
        ("where is settings.py?", "dotted path at the end of a sentence"),
        ("see (ops/backups.md)", "wrapping punctuation stripped"),
        ("open ./run", "./ prefix"),
        ("edit ~/notes", "~/ prefix"),
        ("copy ../x", "../ prefix"),
        ("use -v for verbose", "short flag"),
        ("run it with --dry-run", "long flag"),
        ("the getUser handler", "camelCase"),
        ("deploy on m5.4xlarge", "dotted with letters"),
        ("the k8s cluster", "letters and digits"),
        ('what does "pg_dump" print', "double-quoted identifier"),
    ],
)
def test_each_rule_routes(query: str, why: str) -> None:
    assert is_routed(query), why


@pytest.mark.parametrize(
    "token",
    ["1.2", "a.b", "x_", "_x", "-", "--", "2nd", "12am", "2020s", "ABC", "Hello", "a/b", "/"],
)
def test_tokens_that_name_nothing(token: str) -> None:
    assert not is_routed(token)


def test_strip_token_keeps_a_leading_dot_and_drops_wrapping_punctuation() -> None:
    assert strip_token("(./x),") == "./x"
    assert strip_token(".env") == ".env"
    assert strip_token('"<config.yaml>"!') == "config.yaml"


def test_strong_names_are_the_qualifying_spans_in_order() -> None:
    query = 'try `veltra build x` then "pg_restore" and `typescript` or "plain words"'
    assert strong_names(query) == ["veltra build x", "pg_restore"]


def test_a_backticked_identifier_is_a_strong_name() -> None:
    assert strong_names("what does `max_conns` do") == ["max_conns"]
    assert strong_names("the `typescript` compiler") == []
    assert strong_names("say `  ` twice") == []
