"""Markdown as text: front matter, tags, sections and chunks. Pure functions over strings."""
