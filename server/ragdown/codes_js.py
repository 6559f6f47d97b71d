"""The web UI's `codes.js`, made from `errors.Code`: the words an error answer carries that the page
branches on, defined once in Python. Written, never copied: run

    python -m ragdown.codes_js

to rewrite server/ragdown/web/static/codes.js; with `-` it prints the module instead. A test fails
while the file differs from what this makes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ragdown.errors import Code

CODES_JS = Path(__file__).resolve().parent / "web" / "static" / "codes.js"
HEADER = """\
// The codes an error answer carries beside its message (`{"error": …, "code": …}`) that a client
// branches on (docs/documents.md#write). Made from ragdown/errors.py's Code by
// `python -m ragdown.codes_js`: change them there, never here.
"""


def codes_js() -> str:
    """An ES module exporting `Code`, a frozen object of `Code`'s members (`CHANGED: "changed"`, …)."""
    members = "".join(f'  {code.name}: "{code.value}",\n' for code in Code)
    return f"{HEADER}export const Code = Object.freeze({{\n{members}}});\n"


def main(argv: list[str]) -> int:
    if argv == ["-"]:
        print(codes_js(), end="")
        return 0
    CODES_JS.write_text(codes_js(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
