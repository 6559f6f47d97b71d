"""An engine that loads in the background, so a stdio client connects at once.

Loading the model (and, the first time, building its int8 copy) can take longer than a client
waits for the handshake; tool calls made meanwhile wait for the load instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragdown.engine import Engine

log = logging.getLogger(__name__)


class DeferredEngine:
    """Stands in for an `Engine`: attribute access waits until `load` has returned it."""

    def __init__(self, load: Callable[[], Engine]) -> None:
        self._future: Future[Engine] = Future()

        def run() -> None:
            try:
                self._future.set_result(load())
            except BaseException as error:
                log.error("the index could not be opened: %s", error)
                self._future.set_exception(error)

        threading.Thread(target=run, name="ragdown-load", daemon=True).start()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._future.result(), name)

    def close(self) -> None:
        if self._future.done() and self._future.exception() is None:
            self._future.result().close()
