"""What `serve` checks in its settings before it starts anything (docs/design.md#refusals-at-start):
each a refusal of one line naming the variable."""

from __future__ import annotations

import os

from ragdown.errors import CliError
from ragdown.folders.dir_checks import check_creatable
from ragdown.serving.listen import PUBLIC
from ragdown.settings import ServerSettings


def check_serve_settings(settings: ServerSettings) -> None:
    check_tokens(settings)
    check_disabled_tools(settings)
    check_query_log_file(settings)
    check_distinct_ports(settings)


def check_tokens(settings: ServerSettings) -> None:
    """Each role its own token (docs/security.md): a token that opened two doors would give an
    agent the admin's or the primary's rights."""
    named = [
        ("RAGDOWN_TOKEN", settings.token),
        ("RAGDOWN_ADMIN_TOKEN", settings.admin_token),
        ("RAGDOWN_INTERNAL_TOKEN", settings.internal_token),
    ]
    given = [(name, value) for name, value in named if value]
    for index, (name, value) in enumerate(given):
        for other, other_value in given[index + 1 :]:
            if value == other_value:
                raise CliError(f"{name} and {other} are the same: give each role a token of its own")
    if settings.internal_port and not settings.internal_token:
        raise CliError("RAGDOWN_INTERNAL_PORT is set: set RAGDOWN_INTERNAL_TOKEN too (readers send it)")
    primary_url = settings.primary_url or ""
    if primary_url and not primary_url.startswith(("http://", "https://", "unix://")):
        raise CliError(
            f"RAGDOWN_PRIMARY_URL must start with http://, https:// or unix://, got {primary_url!r}"
        )
    if primary_url.startswith(("http://", "https://")) and not settings.internal_token:
        raise CliError(
            "RAGDOWN_PRIMARY_URL is a network address: set RAGDOWN_INTERNAL_TOKEN to the primary's "
            "internal token"
        )


def check_disabled_tools(settings: ServerSettings) -> None:
    """A misspelt name in RAGDOWN_DISABLED_TOOLS would leave the tool on without a word."""
    if not settings.disabled_tool_names():
        return
    # The tool definitions bring the MCP SDK: `ragdown stdio` answers its client before that import.
    from ragdown.serving.folder_tools import TOOLS
    from ragdown.serving.root_tools import ROOT_TOOLS

    known = {*TOOLS.names(), *ROOT_TOOLS.names()}
    unknown = ", ".join(sorted(settings.disabled_tool_names() - known))
    if unknown:
        tools = ", ".join(sorted(known))
        raise CliError(f"RAGDOWN_DISABLED_TOOLS names no tool: {unknown} (the tools: {tools})")


def check_distinct_ports(settings: ServerSettings) -> None:
    """The internal API and the metrics on ports of their own: the same number as the public port
    would otherwise be reported as a port another process took."""
    public = PUBLIC.variable()
    others = [("RAGDOWN_INTERNAL_PORT", settings.internal_port)]
    if "RAGDOWN_METRICS_PORT" in os.environ:  # the default one only costs the metrics (launch.py)
        others.append(("RAGDOWN_METRICS_PORT", settings.metrics_port))
    for name, port in others:
        if port == settings.port:
            raise CliError(f"{name} and {public} are both {port}; give each a port of its own")


def check_query_log_file(settings: ServerSettings) -> None:
    """A query log that could never be written is said at start, not as a warning per search."""
    file = settings.query_log_file
    if settings.query_log and file is not None:
        if os.path.isdir(file):
            raise CliError(f"RAGDOWN_QUERY_LOG_FILE {file} is a directory; name a file in it")
        check_creatable(file.parent, f"the folder of RAGDOWN_QUERY_LOG_FILE {file}")
