"""Fixtures for the index on object storage: a real S3 API (moto's server on loopback), a fresh
bucket per test, and engines of one folder over it (docs/design.md#index-on-object-storage)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.indexing.embedders.hashing import HashEmbedder
from ragdown.indexing.index_location import IndexLocation
from ragdown.indexing.meta import IndexMeta
from ragdown.settings import ServerSettings

REFRESH_S = 0.2
# How long a reader may take to follow the store: a generous bound on a loaded machine, not a timing.
FOLLOW_S = 20.0


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def index_uri(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket on the S3 server, with the AWS SDK's standard variables pointing at it."""
    import boto3

    for name, value in {
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    bucket = f"index-{uuid.uuid4().hex[:10]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/team/notes"


@pytest.fixture
def open_engine(docs: Path, tmp_path: Path, index_uri: str) -> Iterator[Callable[..., Engine]]:
    opened: list[Engine] = []

    def open_one(name: str = "primary", *, writable: bool = True) -> Engine:
        settings = ServerSettings(index_uri=index_uri, index_refresh_seconds=REFRESH_S, watch=False)
        engine = Engine(
            docs,
            tmp_path / name,
            HashEmbedder(),
            source="hash",
            settings=settings,
            writable=writable,
            watch=False,
        )
        opened.append(engine)
        return engine

    yield open_one
    for engine in opened:
        engine.close()


@pytest.fixture
def location(tmp_path: Path, index_uri: str) -> IndexLocation:
    """The store as another process sees it: its own (unused) data dir, the same index URI."""
    return IndexLocation(tmp_path / "elsewhere", index_uri)


def published(location: IndexLocation) -> IndexMeta:
    """The meta.json on the store now (one must be there)."""
    meta = location.read_meta(fresh=True)
    assert meta is not None
    return meta
