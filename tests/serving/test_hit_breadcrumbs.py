"""A search hit is named by its document's title and heading path (`Title › Heading`) in `/api/search`
(what the web UI shows), in the tools' text and in the hook, also for a document with a front-matter
title and no H1, the shape of every note `ragdown_remember` writes. The page itself:
tests/web/test_hit_titles.py."""

from __future__ import annotations

import asyncio

from tests.serving.conftest import TOKEN, Served, call_tool

NOTE = """---
title: Inspector test note
tags: [probe]
---

Written by an agent to try the inspector.

## Follow-up

Rotate the zanzibar quokka credentials next week.
"""


def with_note(served: Served) -> None:
    (served.docs / "ops" / "inspector-note.md").write_text(NOTE, encoding="utf-8")
    served.engine.sync()


def test_the_search_api_names_a_hit_by_title_and_heading(served: Served) -> None:
    with_note(served)
    with served.admin() as http:
        hits = http.get("/api/search", params={"folder": "ops", "q": "zanzibar quokka"}).json()["hits"]
    hit = next(h for h in hits if h["path"] == "ops/inspector-note.md" and h["heading"] == "Follow-up")
    assert hit["title"] == "Inspector test note"
    assert hit["breadcrumb"] == "Inspector test note › Follow-up"
    # A heading path that starts with the title (the H1) does not repeat it.
    backups = http_hits(served, "pg_restore fresh database")
    titled = [h for h in backups if h["heading"].startswith(h["title"] + " › ")]
    assert titled
    assert all(h["breadcrumb"] == h["heading"] for h in titled)


def http_hits(served: Served, query: str) -> list[dict[str, str]]:
    with served.admin() as http:
        answer = http.get("/api/search", params={"folder": "ops", "q": query})
    hits: list[dict[str, str]] = answer.json()["hits"]
    return hits


def test_the_tools_and_the_hook_name_it_the_same_way(served: Served) -> None:
    with_note(served)
    url = served.url + "/mcp/ops"
    recalled = asyncio.run(call_tool(url, TOKEN, "ragdown_recall", {"query": "zanzibar quokka"}))
    assert "inspector-note.md:10-10 — Inspector test note › Follow-up" in recalled
    context = asyncio.run(
        call_tool(url, TOKEN, "ragdown_context", {"prompt": "zanzibar quokka credentials", "session_id": "s"})
    )
    assert "Inspector test note › Follow-up" in context
