"""`ragdown stdio`'s session (docs/design.md#start-up): the engine that answers from the search
snapshot while the index opens, and the MCP server that answers the client's first message before
the SDK is imported."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ragdown import __version__
from ragdown.folders.registry import read_folder
from ragdown.folders.scope import Scope
from ragdown.serving.deferred import DeferredEngine, Stay
from ragdown.serving.stdio_handshake import early_answer, folder_instructions, read_first_line
from ragdown.settings import ServerSettings

if TYPE_CHECKING:
    from ragdown.engine import Engine
    from ragdown.engine.snapshot_engine import SnapshotEngine
    from ragdown.indexing.embedders import Embedder
    from ragdown.serving.tool_server import ToolServer


def stdio_engine(
    docs: Path, data_dir: Path, embedder: str | None, settings: ServerSettings
) -> DeferredEngine[SnapshotEngine]:
    """The folder's engine, loading in the background: first the embedder and the search snapshot,
    which answer searches at once, then the index, which takes over with the same embedder and the
    hook's memory."""
    loaded: list[tuple[Embedder, str]] = []
    changed: list[bool] = []  # the folder was compared with the snapshot and differs

    def early() -> SnapshotEngine | None:
        from ragdown.engine import load_embedder
        from ragdown.engine.snapshot_engine import SnapshotEngine

        loaded.append(load_embedder(data_dir, embedder, settings.threads, settings))
        snapshot = SnapshotEngine.open(docs, data_dir, *loaded[0], settings)
        if snapshot is not None:
            snapshot.warm()
        return snapshot

    def load(snapshot: SnapshotEngine | None) -> Engine:
        from ragdown.engine import Engine
        from ragdown.release_memory import release_after

        engine = Engine.open(
            docs,
            data_dir,
            embedder,
            threads=settings.threads,
            settings=settings,
            loaded=loaded[0] if loaded else None,
            memory=snapshot.memory if snapshot else None,  # what the hook gave stays given
        )
        # A folder changed since the snapshot: calls wait (a bounded while) for the index to have it.
        first_sync = engine.start(catch_up=bool(changed))
        engine.warm()
        release_after(first_sync, engine.index.searched()[0].start_lexicon())
        return engine

    return DeferredEngine(
        load, early, _stay_while_unchanged(docs, data_dir, embedder, settings.watch, changed)
    )


def _stay_while_unchanged(
    docs: Path, data_dir: Path, embedder: str | None, watch: bool, changed: list[bool]
) -> Stay:
    """The session's `stay` (serving/deferred.py): `changed` gets an entry when the folder differs."""

    def stay(wake: Callable[[], None]) -> Callable[[], None] | None:
        """While the folder is as the snapshot has it, the snapshot answers alone and LanceDB stays
        closed (~60 MB less held): the index opens on the first change the watch sees (the index's
        own watcher, started before the folder is compared, as it starts beside a first sync) or on
        the first call only the index answers. None: open it now (docs/design.md#start-up)."""
        from ragdown.indexing.snapshot.unchanged import unchanged_files
        from ragdown.indexing.watcher import FolderWatcher
        from ragdown.release_memory import release_free_memory

        sentinel = FolderWatcher(docs, wake, debounce_s=0.0) if watch else None
        if sentinel is not None:
            sentinel.start()
        unchanged = unchanged_files(docs, data_dir, embedder) is not None
        release_free_memory()  # the walk's and the comparison's pages, all freed now
        if unchanged:
            return sentinel.stop if sentinel is not None else (lambda: None)
        changed.append(True)
        if sentinel is not None:
            sentinel.stop()
        return None

    return stay


def serve_stdio(engine: DeferredEngine[SnapshotEngine], docs: Path, settings: ServerSettings) -> None:
    """Serve `engine` over stdin and stdout until the client closes stdin; the SDK imports while the
    client's first message is answered without it."""
    import anyio

    named = read_folder(docs.parent, docs.name)
    title = named.title if named else docs.name

    def build() -> ToolServer:
        from ragdown.serving.tools import Endpoint, build_server

        endpoint = Endpoint(
            engine=cast("Engine", engine),
            scope=Scope(),
            name=f"ragdown-{docs.name}",
            title=title,
            read_only=settings.read_only,
            disabled=settings.disabled_tool_names(),
            local=True,
        )
        return build_server(endpoint)

    server: Future[ToolServer] = Future()
    threading.Thread(target=lambda: _run_into(server, build), name="ragdown-mcp", daemon=True).start()
    first = read_first_line()
    answer = early_answer(
        first,
        name=f"ragdown-{docs.name}",
        title=title,
        version=__version__,
        instructions=folder_instructions(title),
    )
    if answer is not None:
        _write_all(1, answer[0])
    try:
        from ragdown.serving.tool_server import run_stdio_after

        anyio.run(run_stdio_after, server.result(), first, answer[1] if answer else None)
    finally:
        engine.close()


def _run_into(future: Future[ToolServer], build: Callable[[], ToolServer]) -> None:
    try:
        future.set_result(build())
    except BaseException as error:  # raised again where the server is wanted
        future.set_exception(error)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
