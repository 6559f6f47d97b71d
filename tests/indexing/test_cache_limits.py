"""LanceDB's caches are bounded per process (docs/reliability.md): every write makes new table
versions and a new full-text index, and with LanceDB's default bounds (gigabytes) a long-running
server's memory grew with every write."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ragdown.engine import Engine
from ragdown.indexing import store
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc


@pytest.fixture(autouse=True)
def default_limits() -> Iterator[None]:
    yield
    defaults = ServerSettings()
    store.set_cache_limits(defaults.index_cache_mb, defaults.metadata_cache_mb)


def churn(engine: Engine, write: WriteDoc, rounds: int) -> None:
    for n in range(rounds):
        write(f"ops/note-{n % 5}.md", f"# Note {n}\n\nredis eviction round {n} " + "filler words " * 40)
        engine.sync()
        engine.search("redis eviction round", 8)


@pytest.mark.slow
@pytest.mark.parametrize("megabytes", [1, 4])
def test_the_caches_stay_within_their_bounds_however_many_writes(
    make_engine: Callable[..., Engine], write: WriteDoc, megabytes: int
) -> None:
    settings = ServerSettings(index_cache_mb=megabytes, metadata_cache_mb=megabytes, watch=False)
    engine = make_engine(settings=settings)
    churn(engine, write, 40)
    session = store.lance_session()
    assert session.approx_num_items > 0  # the caches are in use
    assert session.size_bytes <= 2 * (megabytes << 20)


def test_the_bounds_come_from_the_settings(make_engine: Callable[..., Engine]) -> None:
    first = make_engine(settings=ServerSettings(index_cache_mb=3, metadata_cache_mb=2, watch=False))
    session = store.lance_session()
    assert first.store.db is not None
    store.set_cache_limits(3, 2)
    assert store.lance_session() is session  # unchanged limits keep the shared session
    store.set_cache_limits(5, 2)
    assert store.lance_session() is not session
