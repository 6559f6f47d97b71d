"""What the web UI's search and tag pages read (docs/web.md#search): a hit's `snippet` is its text
without Markdown syntax, and /api/docs with `tag` lists the documents carrying the tag or one under it."""

from __future__ import annotations

from collections.abc import Callable

from tests.serving.conftest import Served

FORMATTED = (
    "---\ntags: [db/postgres]\n---\n# Formatting\n\n## Redis tuning\n\n"
    "Set **maxmemory** in [the config](https://example.com/redis) and read [[cache|the cache note]].\n"
)


def test_a_hits_snippet_is_its_text_without_the_markdown(make_served: Callable[..., Served]) -> None:
    served = make_served()
    (served.docs / "ops" / "formatting.md").write_text(FORMATTED, encoding="utf-8")
    served.engine.sync()
    with served.admin() as http:
        hits = http.get("/api/search", params={"folder": "ops", "q": "maxmemory config"}).json()["hits"]
    hit = next(h for h in hits if h["path"] == "ops/formatting.md")
    assert "**maxmemory**" in hit["text"]  # the Markdown is still there for those who want it
    assert "Set maxmemory in the config and read the cache note." in hit["snippet"]
    assert not any(mark in hit["snippet"] for mark in ("**", "](", "[[", "#"))


def test_the_documents_of_a_tag_and_of_the_tags_under_it(make_served: Callable[..., Served]) -> None:
    served = make_served()
    (served.docs / "ops" / "formatting.md").write_text(FORMATTED, encoding="utf-8")
    served.engine.sync()
    with served.admin() as http:

        def paths(tag: str) -> list[str]:
            answer = http.get("/api/docs", params={"folder": "ops", "tag": tag})
            assert answer.status_code == 200, answer.text
            return [d["path"] for d in answer.json()["docs"]]

        assert paths("db") == ["ops/backups.md", "ops/formatting.md"]  # db/postgres is under db
        assert paths("#DB/Postgres") == ["ops/formatting.md"]  # written as a person may
        assert paths("ops") == ["ops/backups.md"]
        assert paths("nothing") == []
        refused = http.get("/api/docs", params={"folder": "ops", "tag": "!!"})
    assert refused.status_code == 400
    assert "not a valid tag" in refused.json()["error"]
