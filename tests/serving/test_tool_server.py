"""What an agent sees of a tool call (serving/tool_server.py, docs/tools.md#calls-errors-and-limits):
plain argument errors, unknown arguments refused, a lone value where a list goes, the package
version, clean descriptions, and a read past the end refused. Through the official MCP client over
real HTTP."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from ragdown import __version__
from ragdown.serving.tool_server import Strings, describe, where
from tests.serving.conftest import Served, text_of

pytestmark = pytest.mark.anyio


def test_descriptions_lose_the_docstring_indentation_but_keep_paragraphs() -> None:
    doc = """Search the documents and return the best sections, each with its path
        and line range.

        `folder`: which folder."""
    assert describe(doc) == (
        "Search the documents and return the best sections, each with its path and line range.\n\n"
        "`folder`: which folder."
    )
    assert describe(None) == ""


def test_locations_read_as_an_agent_writes_them() -> None:
    assert where(("top_k",)) == "top_k"
    assert where(("edits", 0, "old_text")) == "edits[0].old_text"
    assert where(()) == "the arguments"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("ops", ["ops"]),
        (["ops", "db"], ["ops", "db"]),
        ('["ops", "db"]', ["ops", "db"]),  # a client that sends every argument as text
        ("[not json", ["[not json"]),
        ('{"a": 1}', ['{"a": 1}']),
    ],
)
def test_a_lone_string_is_a_list_of_one(given: object, expected: list[str]) -> None:
    assert TypeAdapter(Strings).validate_python(given) == expected


async def test_argument_errors_are_one_plain_sentence(served: Served) -> None:
    async with served.mcp() as client:
        result = await client.call_tool("ragdown_recall", {"query": "restore", "top_k": 0})
        assert result.is_error
        assert text_of(result) == "ragdown_recall: top_k must be at least 1, got 0"
        both = text_of(await client.call_tool("ragdown_recall", {"top_k": "many", "format": "xml"}))
        assert both.startswith("ragdown_recall: ")
        assert "query is required" in both
        assert "top_k must be a whole number, got 'many'" in both
        assert "format must be one of 'text' or 'json', got 'xml'" in both
        assert "pydantic" not in both
        edit = text_of(
            await client.call_tool("ragdown_edit", {"path": "backups.md", "edits": [{"new_text": "x"}]})
        )
        assert edit == "ragdown_edit: edits[0].old_text is required"


async def test_an_argument_the_tool_does_not_take_is_refused_not_dropped(served: Served) -> None:
    async with served.mcp() as client:
        result = await client.call_tool("ragdown_recall", {"query": "restore", "limit": 3, "tags": "ops"})
        assert result.is_error
        assert text_of(result) == (
            "ragdown_recall: unknown argument limit, tags (ragdown_recall takes query, top_k, path_prefix, "
            "tag, written_by, format, max_chars)"
        )
        stats = await client.call_tool("ragdown_stats", {"verbose": True})
        assert stats.is_error
        assert text_of(stats).startswith("ragdown_stats: unknown argument verbose (ragdown_stats takes ")
        assert not (await client.call_tool("ragdown_recall", {"query": "restore", "tag": "ops"})).is_error


async def test_tags_and_edits_take_a_single_value(served: Served) -> None:
    async with served.mcp() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        tags = tools["ragdown_remember"].input_schema["properties"]["tags"]
        assert tags["anyOf"] == [
            {"items": {"type": "string"}, "type": "array"},
            {"type": "string"},
            {"type": "null"},
        ]
        saved = text_of(
            await client.call_tool(
                "ragdown_remember", {"title": "Pager rota", "content": "Weekly.", "tags": "oncall"}
            )
        )
        path = saved.removeprefix("saved ")
        assert 'tags: ["oncall"]' in (served.docs / "ops" / path).read_text(encoding="utf-8")
        header = text_of(await client.call_tool("ragdown_read_doc", {"path": "cache.md"})).splitlines()[0]
        base = header.split("(hash ")[1][:12]
        edited = await client.call_tool(
            "ragdown_edit",
            {
                "path": "cache.md",
                "edits": {"old_text": "maxmemory-policy", "new_text": "its policy"},
                "base_hash": base,
            },
        )
        assert not edited.is_error, text_of(edited)
        assert "its policy" in (served.docs / "ops/cache.md").read_text(encoding="utf-8")


async def test_server_info_names_the_package_version_and_descriptions_are_flat(served: Served) -> None:
    async with served.mcp() as client:
        assert client.server_info is not None
        assert client.server_info.version == __version__
        for tool in (await client.list_tools()).tools:
            assert tool.description
            assert "\n " not in tool.description, tool.name
            assert "  " not in tool.description, tool.name


async def test_a_read_past_the_end_is_refused_not_an_empty_success(served: Served) -> None:
    async with served.mcp() as client:
        past = await client.call_tool("ragdown_read_doc", {"path": "cache.md", "start_line": 99})
        assert past.is_error
        assert (
            text_of(past)
            == "start_line 99 is past the end of cache.md, which has 5 line(s): read from 1 to 5"
        )
        backwards = await client.call_tool(
            "ragdown_read_doc", {"path": "cache.md", "start_line": 4, "end_line": 2}
        )
        assert backwards.is_error
        assert "end_line 2 is before start_line 4" in text_of(backwards)
        clipped = text_of(
            await client.call_tool("ragdown_read_doc", {"path": "cache.md", "start_line": 5, "end_line": 99})
        )
        assert clipped.splitlines()[0].startswith("cache.md:5-5 of 5 ")
        assert clipped.splitlines()[1] == "Redis evicts keys by maxmemory-policy."
