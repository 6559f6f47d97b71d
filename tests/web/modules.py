"""The web UI's scripts as a browser loads them (docs/web.md#the-page): `app.js`, then every module it
imports, and theirs, over HTTP."""

from __future__ import annotations

import re

import httpx

# `import … from "./name.js"` (over lines too) and a bare `import "./name.js"`: the page's modules
# import each other by relative URL only.
IMPORT = re.compile(r'(?:\bfrom|^import)\s*"\./([^"/]+)"', re.M)


def page_scripts(http: httpx.Client) -> dict[str, httpx.Response]:
    """Each module the page loads, by file name, with the server's answer for it."""
    found: dict[str, httpx.Response] = {}
    waiting = ["app.js"]
    while waiting:
        name = waiting.pop()
        if name in found:
            continue
        found[name] = answer = http.get(f"/ui/{name}")
        waiting.extend(IMPORT.findall(answer.text))
    return found
