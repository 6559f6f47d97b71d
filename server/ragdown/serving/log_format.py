"""Log lines that input cannot forge (docs/security.md#tenants).

Messages often carry what a caller sent: a tool or prompt name, a path, an exception's text. A name
holding a newline would otherwise start a line of its own that reads like a record the server wrote.
Every record is therefore one line: control characters in the message are escaped, and the lines of
a traceback after the first are indented, so nothing at the start of a line comes from input.
"""

from __future__ import annotations

import logging
import sys

from ragdown.documents.paths import escaped

FORMAT = "%(levelname)s %(name)s: %(message)s"
CONTINUATION = "\n    "


class OneRecordFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = escaped(record.getMessage())
        safe = logging.makeLogRecord({**record.__dict__, "msg": message, "args": None})
        head, _, rest = super().format(safe).partition("\n")
        if not rest:
            return head
        return head + "".join(CONTINUATION + escaped(line) for line in rest.split("\n"))


def configure_logging(verbose: bool) -> None:
    """The process's one log handler, on stderr. uvicorn is started with `log_config=None`, so its
    loggers reach this handler too instead of handlers of their own."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneRecordFormatter(FORMAT))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True)
