"""Shared fixtures: a temporary docs folder and data dir, and engines over real LanceDB."""

from __future__ import annotations

import ast
import itertools
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import watchfiles
from watchfiles.main import FileChange

from ragdown.engine import Engine
from ragdown.indexing.embedders.base import Embedder
from ragdown.indexing.embedders.hashing import HashEmbedder

WriteDoc = Callable[[str, str], Path]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    return root


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def write(docs: Path) -> WriteDoc:
    """Write a document under the docs folder, creating its directories."""

    def write_doc(relative: str, text: str) -> Path:
        path = docs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write_doc


@pytest.fixture
def make_engine(docs: Path, data_dir: Path) -> Iterator[Callable[..., Engine]]:
    """Engines over the fixture folder with the hash embedder unless told otherwise; closed at the end."""
    opened: list[Engine] = []

    def make(embedder: Embedder | None = None, source: str = "hash", **options: Any) -> Engine:
        engine = Engine(docs, data_dir, embedder or HashEmbedder(), source=source, **options)
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()


def synced_engine(make_engine: Callable[..., Engine], write: WriteDoc, documents: dict[str, str]) -> Engine:
    """An engine (hash embedder) over `documents` (path -> text), synced and compacted, as it is once
    writes pause: LanceDB scores rows its full-text index has not taken in yet on a scale of their own
    (docs/design.md#compaction), and tests compare the in-memory BM25 with the index's."""
    for path, text in documents.items():
        write(path, text)
    built = make_engine()
    built.sync()
    built.syncer.compaction.drain()
    return built


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """The umask most systems start with (022), whatever the test process had."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture(scope="session", autouse=True)
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Model builds and downloads go to a folder of the test session, never the user's cache."""
    folder = tmp_path_factory.mktemp("models")
    previous = os.environ.get("RAGDOWN_MODELS")
    os.environ["RAGDOWN_MODELS"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("RAGDOWN_MODELS", None)
    else:
        os.environ["RAGDOWN_MODELS"] = previous


@pytest.fixture(scope="session")
def minilm(models_dir: Path) -> Embedder:
    """The real packaged MiniLM, loaded once for the session."""
    from ragdown.indexing.embedders import create_embedder

    return create_embedder("minilm")


def run_cli(
    *args: str, env: dict[str, str] | None = None, input: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m ragdown.cli ARGS` as a real process, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "ragdown.cli", *args],
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Whether `condition` comes true within `timeout` seconds: a generous bound for work on another
    thread or process, never a timing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


class WatchProbe:
    """Every change watchfiles reports to the folder watcher, so a test can wait until a watch is
    attached (it reports a probe file) rather than sleep and hope."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reported: list[str] = []  # changed paths, in the order the watch reported them
        self._probes = itertools.count()
        real = watchfiles.watch

        def watch(*args: Any, **kwargs: Any) -> Iterator[set[FileChange]]:
            for changes in real(*args, **kwargs):
                self.reported += [path for _, path in changes]
                yield changes

        monkeypatch.setattr(watchfiles, "watch", watch)  # the watcher imports it when it starts a watch

    def saw(self, *names: str) -> bool:
        """Whether the watch has reported a change to a file of each of these names."""
        reported = {Path(path).name for path in list(self.reported)}
        return all(name in reported for name in names)

    def attached(self, folder: Path, timeout: float = 10.0) -> bool:
        """Whether a watch on `folder` reports a probe within `timeout`: a dot-file (no sync is ever
        scheduled for one), written again until seen, since a change made before the watch attached
        is never reported."""
        probe = folder / f".watch-probe-{next(self._probes)}"
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                probe.write_text(str(time.monotonic()), encoding="utf-8")
                if wait_for(lambda: self.saw(probe.name), timeout=0.2):
                    return True
            return False
        finally:
            probe.unlink(missing_ok=True)


@pytest.fixture
def watch_probe(monkeypatch: pytest.MonkeyPatch) -> WatchProbe:
    return WatchProbe(monkeypatch)


def parse_source(path: Path) -> ast.Module:
    """`ast.parse` of a source file. CPython 3.11's AST builder can miscount its recursion depth
    while other threads run (a leftover server thread of an earlier test) and raise SystemError on
    valid code; a second parse of the same text is then exact."""
    text = path.read_text(encoding="utf-8")
    try:
        return ast.parse(text)
    except SystemError:
        return ast.parse(text)
