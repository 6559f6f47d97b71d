"""Front ends over the engine: the MCP servers (HTTP and stdio), the HTTP app, auth."""
