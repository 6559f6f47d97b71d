"""The README's configuration table, made from the settings classes (`settings.py`): one row per field,
its variable, its default and its description. Written, never copied: run

    python -m ragdown.settings_table README.md

to rewrite the table between its two markers; without a file it prints the table. A test fails while
the README's table differs from what this makes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pydantic import AliasChoices
from pydantic.fields import FieldInfo

from ragdown.settings import EmbedderSettings, ServerSettings

BEGIN = "<!-- settings table: made from ragdown/settings.py: python -m ragdown.settings_table README.md -->"
END = "<!-- end of the settings table -->"
HEADER = "| variable | default | meaning |\n|---|---|---|"
_DOC_LINK = re.compile(r"\bdocs/[\w./-]+\.md(?:#[\w-]+)?")


def variables(name: str, field: FieldInfo) -> list[str]:
    """The environment variables a field reads, the first being its own name."""
    if isinstance(field.validation_alias, AliasChoices):
        return [str(choice) for choice in field.validation_alias.choices]
    prefix = str(ServerSettings.model_config.get("env_prefix", ""))
    return [(prefix + name).upper()]


def default_text(field: FieldInfo) -> str:
    extra = field.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("shown_default"), str):
        return str(extra["shown_default"])
    value = field.default
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    return f"`{value}`"


def row(name: str, field: FieldInfo) -> str:
    first, *others = variables(name, field)
    variable = f"`{first}`" + (f" (or {', '.join(f'`{o}`' for o in others)})" if others else "")
    meaning = _DOC_LINK.sub(lambda m: f"[{m.group(0)}]({m.group(0)})", field.description or "")
    cells = (variable, default_text(field), meaning)
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def table() -> str:
    """The server's own settings first, then those of the embedders it shares with every command."""
    fields = ServerSettings.model_fields
    inherited = EmbedderSettings.model_fields
    names = [name for name in fields if name not in inherited] + list(inherited)
    return "\n".join([HEADER, *(row(name, fields[name]) for name in names)])


def with_table(text: str) -> str:
    """`text` with the table between its markers made anew."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no settings table markers in the file: {BEGIN} … {END}")
    return text[: start + len(BEGIN)] + "\n" + table() + "\n\n" + text[end:]


def main(argv: list[str]) -> int:
    if not argv:
        print(table())
        return 0
    path = Path(argv[0])
    text = path.read_text(encoding="utf-8")
    path.write_text(with_table(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
