"""The index on local disk against the same index on object storage (moto's S3 server on loopback):
a reader's cold start, search latency, and the store requests a search and a no-change sync cost.

    .venv/bin/python bench/object_store.py [--corpus fastapi-docs | --corpus-dir DIR] [--work DIR]
        [--queries 200]

Indexes the corpus once on local disk with the default embedder (kept in --work), copies the table
and meta.json into a bucket of a moto server started here (once without the search snapshot, once
with it: docs/design.md#search-snapshot-on-object-storage), then for each location opens a reader
engine on an empty data dir (cold start: open + first search; full speed: until its BM25 postings
are ready, built or copied), times `--queries` searches
(`engine.recall`, the corpus's section headings, 10 hits), and opens a primary to time a no-change
sync. Requests are counted from the S3 server's request log. Refresh bound: 1 s (the default).
Loopback has none of a real store's latency: a request to S3 or GCS costs ~10–50 ms, so multiply the
request counts, not the times, to size a real deployment.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from _common import CORPORA, commit, median, percentile, require

if TYPE_CHECKING:
    from moto.server import ThreadedMotoServer

REFRESH_S = 1.0


class RequestCount(logging.Handler):
    """Counts the S3 server's request log lines (one per HTTP request)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def start_s3() -> tuple[ThreadedMotoServer, str, RequestCount]:
    from moto.server import ThreadedMotoServer

    counter = RequestCount()
    logging.getLogger("werkzeug").addHandler(counter)
    logging.getLogger("werkzeug").setLevel(logging.INFO)
    logging.getLogger("werkzeug").propagate = False
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    os.environ.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_REGION="us-east-1",
    )
    return server, endpoint, counter


def measure(
    docs: Path, index_uri: str | None, work: Path, queries: list[str], counter: RequestCount
) -> dict[str, float]:
    from ragdown.engine import Engine
    from ragdown.settings import ServerSettings

    settings = ServerSettings(index_uri=index_uri, index_refresh_seconds=REFRESH_S, watch=False)
    data_dir = Path(tempfile.mkdtemp(prefix="reader-", dir=work))
    started = time.perf_counter()
    reader = Engine.open(docs, data_dir, None, settings=settings, writable=False)
    reader.recall(queries[0], 10)
    cold = time.perf_counter() - started
    building = reader.store.start_lexicon()
    assert building is not None  # the reader holds its rows in memory
    building.result()
    full_speed = time.perf_counter() - started
    before = counter.count
    times = []
    for query in queries:
        started = time.perf_counter()
        reader.recall(query, 10)
        times.append((time.perf_counter() - started) * 1000)
    searched = counter.count - before
    elapsed = sum(times) / 1000
    reader.close()

    primary = Engine.open(docs, Path(tempfile.mkdtemp(prefix="primary-", dir=work)), None, settings=settings)
    before = counter.count
    started = time.perf_counter()
    primary.sync()
    sync_s = time.perf_counter() - started
    synced = counter.count - before
    primary.close()
    return {
        "cold": cold,
        "full speed": full_speed,
        "p50": median(times),
        "p95": percentile(times, 0.95),
        "requests per search": searched / len(queries),
        "seconds searched": elapsed,
        "sync": sync_s,
        "sync requests": synced,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default="fastapi-docs")
    parser.add_argument("--corpus-dir", type=Path, help="a folder to index instead of a named corpus")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ragdown-object-store-"))
    work.mkdir(parents=True, exist_ok=True)
    docs = args.corpus_dir or require(CORPORA / args.corpus)
    corpus = docs.name if args.corpus_dir else args.corpus

    from ragdown.engine import Engine

    local_dir = work / "local"
    engine = Engine.open(docs, local_dir, None, watch=False)
    engine.sync()
    assert engine.lifecycle.snapshots is not None
    engine.lifecycle.snapshots.wait()
    rows = engine.store.chunks(["title", "heading"], "chunk_index >= 0").to_pylist()
    lance_dir = engine.store.lance_dir
    engine.close()
    queries = sorted({r["heading"] or r["title"] for r in rows})[: args.queries]

    server, _endpoint, counter = start_s3()
    import boto3
    import pyarrow.fs as pafs

    boto3.client("s3").create_bucket(Bucket="bench")
    uri = "s3://bench/index"
    from ragdown.indexing.index_location import IndexLocation

    with_snapshot = "s3://bench/with-snapshot"
    for prefix in (uri, with_snapshot):
        location = IndexLocation(work, prefix)
        s3, root = location.filesystem()
        pafs.copy_files(str(local_dir / lance_dir), f"{root}/{lance_dir}", destination_filesystem=s3)
        pafs.copy_files(str(local_dir / "meta.json"), f"{root}/meta.json", destination_filesystem=s3)
    # The primary's snapshot, as it copies it beside the index (indexing/snapshot/remote.py).
    from ragdown.indexing.snapshot.layout import CURRENT, SNAPSHOT_DIR, read_current

    current = read_current(local_dir)
    assert current is not None, "the index has no search snapshot"
    s3, root = IndexLocation(work, with_snapshot).filesystem()
    snapshots = local_dir / SNAPSHOT_DIR
    target = f"{root}/{SNAPSHOT_DIR}"
    pafs.copy_files(str(snapshots / current.name), f"{target}/{current.name}", destination_filesystem=s3)
    pafs.copy_files(str(snapshots / CURRENT), f"{target}/{CURRENT}", destination_filesystem=s3)

    source = f"--corpus-dir {args.corpus_dir}" if args.corpus_dir else f"--corpus {args.corpus}"
    command = f"`.venv/bin/python bench/object_store.py {source}`"
    print(f"{date.today()} · commit {commit()} · {command}\n")
    print(f"{corpus}, {len(rows):,} chunks, {len(queries)} searches, refresh bound {REFRESH_S:g} s\n")
    columns = [
        "index on",
        "reader cold start (s)",
        "reader at full speed (s)",
        "search p50 ms",
        "search p95 ms",
        "requests per search",
        "no-change sync (s)",
        "requests per no-change sync",
    ]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    setups = (
        ("local disk", str(local_dir)),
        ("S3 (moto, loopback), table only", uri),
        ("S3 (moto, loopback), with its snapshot", with_snapshot),
    )
    for name, index_uri in setups:
        r = measure(docs, index_uri, work, queries, counter)
        remote = index_uri.startswith("s3://")
        requests = f"{r['requests per search']:.2f}" if remote else "—"
        sync_requests = f"{r['sync requests']:.0f}" if remote else "—"
        times = [f"{r['cold']:.2f}", f"{r['full speed']:.2f}", f"{r['p50']:.1f}", f"{r['p95']:.1f}"]
        cells = [name, *times, requests]
        print("| " + " | ".join([*cells, f"{r['sync']:.2f}", sync_requests]) + " |")
    server.stop()


if __name__ == "__main__":
    main()
