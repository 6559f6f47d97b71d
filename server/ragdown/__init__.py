"""ragdown: Markdown folders for AI agents, over MCP."""

__version__ = "0.1.0"
