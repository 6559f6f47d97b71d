"""Which embedder a folder's index is searched with, and loading it (docs/design.md#start-up).

Nothing here imports the search or the store, so a one-shot search can start the model loading on a
thread before it imports them."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from ragdown.indexing.active import recorded_embedder
from ragdown.indexing.embedders import create_embedder
from ragdown.indexing.index_location import index_location
from ragdown.settings import ServerSettings

if TYPE_CHECKING:
    from ragdown.indexing.embedders import Embedder

# An embedder and the registry name it was chosen by.
Loaded = tuple["Embedder", str]


def load_embedder(
    data_dir: Path, name: str | None, threads: int | None, settings: ServerSettings | None
) -> Loaded:
    """`name`, else the embedder the index was built with, else the default, loaded; and its name."""
    chosen = name or recorded_embedder(index_location(data_dir, settings or ServerSettings())) or "minilm"
    return create_embedder(chosen, threads=threads), chosen


def load_beside(data_dir: Path, name: str | None, settings: ServerSettings) -> Future[Loaded]:
    """`load_embedder` on a thread of its own, its model's session and tokenizer made too: ONNX
    Runtime's import, the model files' digests and the session (~0.3 s of a one-shot search) run
    while the caller imports the search and maps the snapshot. The embedder, or what stopped it
    loading, comes back through the future."""
    loading: Future[Loaded] = Future()

    def run() -> None:
        try:
            embedder, chosen = load_embedder(data_dir, name, settings.threads, settings)
            embedder.load()
        except BaseException as error:  # raised again where the embedder is wanted
            loading.set_exception(error)
        else:
            loading.set_result((embedder, chosen))

    threading.Thread(target=run, name="ragdown-embedder", daemon=True).start()
    return loading
