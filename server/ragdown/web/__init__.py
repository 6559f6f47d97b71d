"""The web UI (docs/web.md): its static page, script and stylesheet (`static/`), and the Markdown
renderer the document routes use."""
