"""`ragdown serve` once its command line is checked (cli.command_serve): the node and its role, the
app, metrics on their own port, and uvicorn until the process stops (docs/design.md#processes-and-roles)."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from ragdown import __version__
from ragdown.bounds import SERVER_CONFIG
from ragdown.engine import Engine
from ragdown.errors import CliError, FolderNotFoundError
from ragdown.folders.dir_checks import check_data_dir, check_docs_dir, default_data_dir
from ragdown.folders.registry import list_folders
from ragdown.folders.saved import in_effect, read_saved
from ragdown.indexing.embedders.registry import check_embedder_name
from ragdown.serving import listen
from ragdown.serving.banner import ProgressBar, base_url, say_synced, startup_lines, wait_for_folder
from ragdown.serving.folder_tools import TOOLS
from ragdown.serving.guard import Guard
from ragdown.serving.http import create_app
from ragdown.serving.metrics import Metrics, serve_metrics
from ragdown.serving.node import Node
from ragdown.serving.root_tools import ROOT_TOOLS
from ragdown.settings import ServerSettings

INDEX_GAUGE_INTERVAL_S = 5.0
BACKLOG = 2048  # uvicorn's own


def serve(settings: ServerSettings, stop_copy: threading.Event) -> int:
    """Serve the folders of `settings.docs_dir` until stopped; `stop_copy` ends a reader's copy of the
    folder (docs/design.md#readers-without-the-folder) when the server does."""
    assert settings.docs_dir is not None
    if settings.role == "reader":
        wait_for_folder(settings.docs_dir)
    try:
        docs = check_docs_dir(settings.docs_dir)
    except FolderNotFoundError as error:
        raise CliError(f"RAGDOWN_DOCS_DIR: {error}") from None
    data_dir = settings.data_dir or default_data_dir(docs, folders_mode=True)
    check_data_dir(data_dir, docs, settings.data_dir_source())
    check_embedder_name(settings.embedder)
    # What was saved from the web UI goes over the environment (docs/web.md#server-settings).
    environment, settings = settings, in_effect(settings, read_saved(docs))
    # The ports before the index and the model: a refusal now is one line, not native threads
    # aborting at exit (docs/design.md#refusals-at-start).
    sockets = listen.bind(settings.host, settings.port, listen.PUBLIC, backlog=BACKLOG)
    try:
        metrics_free = check_metrics_port(settings)
        node, app, engine, role = start_node(docs, data_dir, settings, environment)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    stop_metrics = start_metrics(app, settings, role, engine, node) if metrics_free else lambda: None
    print(f"ragdown: listening on {base_url(settings)} (Ctrl-C stops)", file=sys.stderr)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        log_config=None,  # its records go through serving/log_format.py like every other
        timeout_keep_alive=75,
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=sockets)  # bound above, so it cannot fail to bind now
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C; or uvicorn's own exit when its app failed
        pass
    finally:
        stop_copy.set()
        stop_metrics()
        node.close()
        app.mcp.engine.close()
        for sock in sockets:
            sock.close()
    if not server.started:  # its own error was logged: its app did not start
        raise CliError(f"the server on {base_url(settings)} did not start; the lines above say why")
    return 0


def check_metrics_port(settings: ServerSettings) -> bool:
    """Whether the metrics port is free. One the user set that is taken stops `serve`; the default
    one taken (another program's 9090) costs the metrics, said in one line, not the server."""
    if not settings.metrics_port:
        return True
    try:
        listen.check_free(settings.host, settings.metrics_port, listen.METRICS)
    except CliError as error:
        if "RAGDOWN_METRICS_PORT" in os.environ:
            raise
        print(f"ragdown: metrics are off: {error}", file=sys.stderr)
        return False
    return True


def start_node(
    docs: Path, data_dir: Path, settings: ServerSettings, environment: ServerSettings
) -> tuple[Node, Any, Engine, str]:
    """The node in its role, its engine and the app around it: the primary starts its first sync
    and serves readers; a reader forwards writes and watches for a chance to take over."""
    node = Node(docs, data_dir, settings, folders_mode=True, server_config=docs / SERVER_CONFIG)
    try:
        primary = node.take_role()
        if primary and settings.internal_port:  # readers' way in: checked before the index opens
            listen.check_free(settings.host, settings.internal_port, listen.INTERNAL)
    except BaseException:
        node.close()
        raise
    role = "primary" if primary else "reader"
    for line in startup_lines(docs, data_dir, settings, role):
        print(line, file=sys.stderr)
    if primary:
        bar = ProgressBar()
        engine = node.open_primary(progress=bar)
        assert node.first_sync is not None
        node.first_sync.add_done_callback(lambda done: say_synced(done, engine, bar))
    else:
        engine = node.open_reader()
    app = create_app(engine, settings, environment)
    if primary:
        node.serve_internal(app)
    else:
        assert node.client is not None
        app.mcp.become(engine, node.forwarder(engine))
        node.watch_for_takeover(app, engine)
    return node, app, engine, role


def start_metrics(app: Any, settings: ServerSettings, role: str, engine: Engine, node: Any) -> Any:
    """Prometheus metrics on their own port (never routed by the ingress); a port already taken
    costs the metrics, not the server."""
    if not settings.metrics_port:
        return lambda: None
    metrics = Metrics()
    metrics.set_build_info(__version__, role, engine.embedder.name)
    tools = sorted({*TOOLS.names(), *ROOT_TOOLS.names()})
    metrics.precreate([f.name for f in list_folders(engine.docs_dir)], tools)
    app.mcp.metrics = metrics
    try:
        stop_server = serve_metrics(metrics, settings.host, settings.metrics_port, Guard.of(settings))
    except OSError as error:
        print(f"ragdown: metrics are off, port {settings.metrics_port} is taken ({error})", file=sys.stderr)
        return lambda: None
    stopped = threading.Event()

    def refresh() -> None:
        # Index sizes and the last sync, read every few seconds rather than on each scrape.
        last_at = ""
        while not stopped.wait(INDEX_GAUGE_INTERVAL_S):
            try:
                current = app.mcp.engine
                for folder, (documents, chunks) in current.folder_counts().items():
                    metrics.set_index(folder, documents, chunks)
                metrics.set_embed_queue_depth(current.pending_files)
                report = current.last_sync
                if report is not None and report.at != last_at:
                    last_at = report.at
                    metrics.observe_sync(report.ms / 1000, time.time())
            except Exception:  # a scrape gauge must never take the server down
                logging.getLogger(__name__).exception("could not refresh the index gauges")

    threading.Thread(target=refresh, name="ragdown-metrics", daemon=True).start()

    def stop() -> None:
        stopped.set()
        stop_server()

    return stop
