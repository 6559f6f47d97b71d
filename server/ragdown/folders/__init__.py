"""Folders of the docs dir, their `.ragdown.json`, scopes, and the server's settings."""
