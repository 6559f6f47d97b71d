"""This process's role on its data dir (BEHAVIOUR §2.6, ARCHITECTURE §2): the primary indexes,
watches and writes, and answers readers on `<data_dir>/primary.sock`; a reader searches the same
table, sends every write and the hook's memory to the primary, and in `auto` mode takes over when
the primary's lock comes free."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from ragdown.engine import Engine
from ragdown.folders.settings import ServerSettings
from ragdown.indexing.store import IndexNotReadyError
from ragdown.roles.client import PrimaryClient, RemoteSessionMemory
from ragdown.roles.lock import PrimaryLock
from ragdown.serving.http import RagdownApp

log = logging.getLogger(__name__)
INDEX_WAIT_S = 300.0


class Node:
    def __init__(self, docs: Path, data_dir: Path, settings: ServerSettings, **engine_options: Any) -> None:
        self.docs = docs
        self.data_dir = data_dir
        self.settings = settings
        self.engine_options = engine_options
        self.lock = PrimaryLock(data_dir)
        self.client: PrimaryClient | None = None
        self._stop = threading.Event()
        self._socket_server: uvicorn.Server | None = None

    def is_primary(self) -> bool:
        role = self.settings.role
        return role == "primary" or (role == "auto" and self.lock.try_acquire())

    def open_primary(self, embedder: str | None = None) -> Engine:
        engine = Engine.open(
            self.docs,
            self.data_dir,
            embedder or self.settings.embedder,
            threads=self.settings.threads,
            settings=self.settings,
            **self.engine_options,
        )
        engine.start()
        return engine

    def open_reader(self) -> Engine:
        """The index as the primary writes it, with the embedder it records; waits for it to exist."""
        deadline = time.monotonic() + INDEX_WAIT_S
        while True:
            try:
                engine = Engine.open(
                    self.docs,
                    self.data_dir,
                    None,
                    threads=self.settings.threads,
                    settings=self.settings,
                    writable=False,
                    **self.engine_options,
                )
                break
            except IndexNotReadyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        url = self.settings.primary_url or f"unix://{self.lock.socket_path}"
        self.client = PrimaryClient(url, self.settings.token)
        engine.memory = RemoteSessionMemory(self.client)
        return engine

    def serve_socket(self, app: RagdownApp) -> None:
        """The internal API (and MCP) on the socket readers reach, in a thread of its own."""
        config = uvicorn.Config(app, uds=str(self.lock.socket_path), log_level="warning")
        server = uvicorn.Server(config)
        self._socket_server = server
        threading.Thread(target=server.run, name="ragdown-primary-socket", daemon=True).start()

    def watch_for_takeover(self, app: RagdownApp, reader: Engine) -> None:
        """In `auto` mode, retry the lock; on success reopen writable, index, watch, and answer readers."""
        if self.settings.role != "auto":
            return

        def loop() -> None:
            while not self._stop.wait(self.settings.takeover_s):
                if self.lock.try_acquire():
                    log.warning("the primary is gone: this process takes over indexing and writes")
                    engine = self.open_primary(reader.source)
                    app.mcp.become(engine, None)
                    self.serve_socket(app)
                    return

        threading.Thread(target=loop, name="ragdown-takeover", daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        if self._socket_server is not None:
            self._socket_server.should_exit = True
        if self.client is not None:
            self.client.close()
        self.lock.release()
