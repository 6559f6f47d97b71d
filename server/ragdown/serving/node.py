"""This process's role on its data dir (docs/design.md#processes-and-roles): the primary indexes,
watches and writes, and answers readers on `<data_dir>/primary.sock`; a reader searches the same
table, sends every write and the hook's memory to the primary, and in `auto` mode takes over when
the primary's lock comes free."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import uvicorn

from ragdown import __version__
from ragdown.engine import Engine, index_location, load_embedder
from ragdown.engine.snapshot_reader import SnapshotReader
from ragdown.errors import CliError, IndexNotReadyError
from ragdown.indexing.active import recorded_embedder
from ragdown.indexing.sync import ProgressCallback, SyncReport
from ragdown.release_memory import release_after, release_free_memory
from ragdown.roles.client import PrimaryClient, RemoteSessionMemory
from ragdown.roles.lock import PrimaryLock
from ragdown.roles.token import local_token
from ragdown.serving.auth import CALLER
from ragdown.serving.deferred import DeferredEngine
from ragdown.serving.http import RagdownApp
from ragdown.serving.internal import internal_app
from ragdown.settings import ServerSettings

if TYPE_CHECKING:
    from ragdown.hook.session_memory import SessionMemory
    from ragdown.indexing.embedders import Embedder

log = logging.getLogger(__name__)
INDEX_WAIT_S = 300.0


def warm_in_background(engine: Engine) -> None:
    """The model and the search structures load while the server starts, not in the first call;
    what loading them freed goes back to the system once the BM25 build ends (docs/design.md#memory)."""

    def warm() -> None:
        engine.warm()
        release_after(engine.index.searched()[0].start_lexicon())

    threading.Thread(target=warm, name="ragdown-warm", daemon=True).start()


class Forwarder:
    """A reader's write tools, sent to the primary. After one succeeds the reader looks at the index
    at once rather than within the refresh bound, so its next search sees the write
    (docs/design.md#index-on-object-storage). `reachable` is what `/readyz` reports."""

    def __init__(self, client: PrimaryClient, engine: Engine) -> None:
        self.client = client
        self.engine = engine

    def __call__(
        self, name: str, folder: str | None, sub: str, arguments: dict[str, Any]
    ) -> tuple[str, bool]:
        text, is_error = self.client.tool(name, folder, sub, arguments, CALLER.get())
        if not is_error:
            self.engine.see_latest()
        return text, is_error

    def reachable(self) -> bool:
        return self.client.reachable()


class Node:
    def __init__(self, docs: Path, data_dir: Path, settings: ServerSettings, **engine_options: Any) -> None:
        self.docs = docs
        self.data_dir = data_dir
        self.settings = settings
        self.engine_options = engine_options
        self.lock = PrimaryLock(data_dir)
        self.client: PrimaryClient | None = None
        self.first_sync: Future[SyncReport] | None = None
        self._stop = threading.Event()
        self._internal_servers: list[uvicorn.Server] = []

    def is_primary(self) -> bool:
        role = self.settings.role
        return role == "primary" or (role == "auto" and self.lock.try_acquire())

    def serves_socket(self) -> bool:
        """Whether the primary answers readers on `primary.sock`: in `auto` mode, and as an explicit
        primary without an internal port, whose readers on this machine have no other way in (a
        cluster's primary, with its port, is reached by URL)."""
        return self.settings.role == "auto" or not self.settings.internal_port

    def take_role(self) -> bool:
        """This process's role, True for the primary. An explicit primary that serves the socket
        takes the lock as well, since only the lock holder binds it: another primary holding it means
        two writers on one data dir, refused before anything opens."""
        primary = self.is_primary()
        explicit = primary and self.settings.role == "primary" and self.serves_socket()
        if explicit and not self.lock.try_acquire():
            raise CliError(
                f"RAGDOWN_ROLE=primary, but another ragdown serve is the primary on {self.data_dir} "
                "already (it holds primary.lock); stop it, or start this one with RAGDOWN_ROLE=auto "
                "to be its reader"
            )
        return primary

    def open_primary(self, embedder: str | None = None, progress: ProgressCallback | None = None) -> Engine:
        """The engine, writable, with its first sync started (`self.first_sync`; `progress` follows it)."""
        engine = Engine.open(
            self.docs,
            self.data_dir,
            embedder or self.settings.embedder,
            threads=self.settings.threads,
            settings=self.settings,
            **self.engine_options,
        )
        self.first_sync = engine.start(progress)
        warm_in_background(engine)
        return engine

    def open_reader(self) -> Engine:
        """The index as the primary writes it, with the embedder it records; waits for it to exist.
        While the primary's search snapshot answers for the index, the reader answers from it alone
        and opens the index only once something needs it (docs/design.md#readers-from-the-snapshot)."""
        deadline = time.monotonic() + INDEX_WAIT_S
        # No embedder before the primary says which: loading one first would build a model a reader
        # (a read-only mount) cannot keep, again every half second.
        while index_location(self.data_dir, self.settings).read_meta(fresh=True) is None:
            if time.monotonic() > deadline:
                raise IndexNotReadyError("the index does not exist yet; start the primary server first")
            time.sleep(0.5)
        url = self.settings.primary_url or f"unix://{self.lock.socket_path}"
        self.client = PrimaryClient(
            url, lambda: self.settings.internal_token or local_token(self.data_dir, create=False)
        )
        memory = RemoteSessionMemory(self.client)
        loaded = load_embedder(self.data_dir, None, self.settings.threads, self.settings)
        snapshot = SnapshotReader.following(
            self.docs, self.data_dir, loaded, self.settings, memory=memory, **self.engine_options
        )
        self.client.start_probing()
        if snapshot is None:
            return self._open_index(loaded, memory, deadline)

        def warm() -> None:
            snapshot.warm()
            release_free_memory()  # the model's load and the first search freed more than they keep

        threading.Thread(target=warm, name="ragdown-warm", daemon=True).start()

        def load(_: SnapshotReader | None) -> Engine:
            # The snapshot stopped following the index: rebuilt with another model, maybe.
            recorded = recorded_embedder(index_location(self.data_dir, self.settings))
            now = (
                loaded
                if recorded in (None, loaded[1])
                else load_embedder(self.data_dir, None, self.settings.threads, self.settings)
            )
            return self._open_index(now, memory, time.monotonic() + INDEX_WAIT_S)

        deferred = DeferredEngine(
            load,
            lambda: snapshot,
            snapshot.watch,
            answers=None,
        )
        return cast("Engine", deferred)

    def _open_index(self, loaded: tuple[Embedder, str], memory: SessionMemory, deadline: float) -> Engine:
        """The index itself, read-only, with `loaded` (the embedder it records) and the primary's
        session memory; retried until `deadline` while the primary is still creating it."""
        while True:
            try:
                engine = Engine.open(
                    self.docs,
                    self.data_dir,
                    None,
                    threads=self.settings.threads,
                    settings=self.settings,
                    loaded=loaded,
                    writable=False,
                    memory=memory,
                    **self.engine_options,
                )
                break
            except IndexNotReadyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        warm_in_background(engine)
        return engine

    def forwarder(self, engine: Engine) -> Forwarder:
        """Write tools sent to the primary (Forwarder)."""
        assert self.client is not None
        return Forwarder(self.client, engine)

    def serve_internal(self, app: RagdownApp) -> None:
        """The internal API readers call, never on the public port: on `<data_dir>/primary.sock`
        (owner-only) when `serves_socket`, and on RAGDOWN_INTERNAL_PORT when set; each in a thread."""
        token = self.settings.internal_token or local_token(self.data_dir, create=True)
        assert token is not None
        internal = internal_app(app.mcp, token)
        if self.serves_socket():
            server = self._run(
                uvicorn.Config(internal, uds=str(self.lock.socket_path), log_level="warning", log_config=None)
            )
            # uvicorn leaves the socket open to every local user: owner-only once it is there (the
            # token guards it meanwhile, and after if a filesystem will not take the mode).
            self._wait_for(lambda: server.started, timeout_s=60.0)
            try:
                self.lock.socket_path.chmod(0o600)
            except OSError as error:
                log.warning("could not make %s owner-only: %s", self.lock.socket_path, error)
        if self.settings.internal_port:
            config = uvicorn.Config(
                internal,
                host=self.settings.host,
                port=self.settings.internal_port,
                log_level="warning",
                log_config=None,
            )
            self._run(config)

    def _run(self, config: uvicorn.Config) -> uvicorn.Server:
        server = uvicorn.Server(config)
        self._internal_servers.append(server)
        threading.Thread(target=server.run, name="ragdown-internal", daemon=True).start()
        return server

    @staticmethod
    def _wait_for(check: Any, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not check() and time.monotonic() < deadline:
            time.sleep(0.01)

    def watch_for_takeover(self, app: RagdownApp, reader: Engine) -> None:
        """In `auto` mode, retry the lock; on success reopen writable, index, watch, and answer readers."""
        if self.settings.role != "auto":
            return

        def loop() -> None:
            while not self._stop.wait(self.settings.takeover_s):
                if self.lock.try_acquire():
                    log.warning("the primary is gone: this process takes over indexing and writes")
                    engine = self.open_primary(reader.index.source)
                    app.mcp.become(engine, None)
                    if app.mcp.metrics is not None:
                        app.mcp.metrics.set_build_info(__version__, "primary", engine.embedder.name)
                    self.serve_internal(app)
                    return

        threading.Thread(target=loop, name="ragdown-takeover", daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        for server in self._internal_servers:
            server.should_exit = True
        if self.client is not None:
            self.client.close()
        self.lock.release()
