"""A primary and two readers as real processes with the index on object storage (moto's S3 server on
loopback; docs/design.md#index-on-object-storage): each process has its own data dir, none of them
holds the index, the readers answer from the bucket, a write through one reader is found by the
other within the refresh bound, and a killed primary leaves a readable index behind."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import httpx
import pytest

from tests.serving.test_roles import Proc, cluster_primary, cluster_reader, ops_folder, wait_for, wait_synced

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ADMIN = "object-store-admin-token"


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "moto-secret-4f1c",
        "AWS_REGION": "us-east-1",
    }
    bucket = f"index-{uuid.uuid4().hex[:10]}"
    boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id="testing",
        aws_secret_access_key="moto-secret-4f1c",
        region_name="us-east-1",
    ).create_bucket(Bucket=bucket)
    yield {**env, "RAGDOWN_INDEX_URI": f"s3://{bucket}/ragdown", "RAGDOWN_INDEX_REFRESH_SECONDS": "3"}
    server.stop()


async def test_readers_answer_from_the_bucket_and_see_each_others_writes(
    tmp_path: Path, s3_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in s3_env.items():  # this process reads the bucket's meta.json too
        monkeypatch.setenv(name, value)
    docs = ops_folder(
        tmp_path,
        {"redis.md": "# Redis\n\n## Eviction\n\nRedis evicts keys under memory pressure.\n"},
    )
    primary, internal = cluster_primary(docs, tmp_path / "data-primary", **s3_env, RAGDOWN_ADMIN_TOKEN=ADMIN)
    readers: list[Proc] = []
    try:
        wait_synced(primary)
        # Readers A and B have no view of the folder (an empty RAGDOWN_DOCS_DIR, as the chart clears
        # the image's default): each reads its own copy from the bucket. Reader L is a reader as
        # before, with a read-only view of the folder, for comparison.
        readers = [
            cluster_reader(docs, tmp_path / f"data-{name}", internal, **s3_env, RAGDOWN_DOCS_DIR="")
            for name in ("a", "b")
        ]
        local_view = cluster_reader(docs, tmp_path / "data-l", internal, **s3_env)
        readers.append(local_view)
        for reader in readers:
            wait_for(partial(is_reader, reader), what="a reader")
        # No process keeps the index in its data dir: it is in the bucket.
        for name in ("primary", "a", "b", "l"):
            data = tmp_path / f"data-{name}"
            assert not (data / "meta.json").exists()
            assert not any(p.name.startswith("lance") for p in data.iterdir()) if data.exists() else True
        asked = {"query": "redis eviction under memory pressure", "top_k": 1}
        from_primary = await primary.call("ragdown_recall", asked)
        assert from_primary.startswith("[1] redis.md:")
        for reader in readers:
            assert await reader.call("ragdown_recall", asked) == from_primary
        # Every read tool answers the same from the bucket's copy as from the folder.
        for tool, arguments in (
            ("ragdown_read_doc", {"path": "redis.md"}),
            ("ragdown_read_doc", {"path": "redis.md", "start_line": 3, "end_line": 5}),
            ("ragdown_list", {}),
            ("ragdown_backlinks", {"path": "redis.md"}),
            ("ragdown_stats", {}),
            ("ragdown_context", {"prompt": "how does redis evict keys"}),
        ):
            expected = await local_view.call(tool, arguments)
            for reader in readers[:2]:
                assert await reader.call(tool, arguments) == expected, tool
        for name in ("a", "b"):
            assert (tmp_path / f"data-{name}/folder/ops/redis.md").read_bytes() == (
                docs / "ops/redis.md"
            ).read_bytes()
        reader_a, reader_b, _ = readers
        written = await reader_a.call(
            "ragdown_write", {"path": "queues.md", "text": "# Queues\n\nKafka consumer lag alerts.\n"}
        )
        assert "queues.md" in written
        assert (docs / "ops/queues.md").exists()
        # The reader that forwarded the write sees it in its very next search, not a refresh bound later.
        found_by_a = await reader_a.call("ragdown_recall", {"query": "kafka consumer lag", "top_k": 1})
        assert found_by_a.startswith("[1] queues.md:")

        async def found_by_b() -> bool:
            answer = await reader_b.call("ragdown_recall", {"query": "kafka consumer lag", "top_k": 1})
            return answer.startswith("[1] queues.md:")

        for _ in range(100):  # within the refresh bound plus the primary's sync, on a loaded machine
            if await found_by_b():
                break
            await _sleep(0.2)
        assert await found_by_b()
        for _ in range(100):  # and B's copy of the folder follows, so it can read the new file
            if "Kafka consumer lag" in await reader_b.call("ragdown_read_doc", {"path": "queues.md"}):
                break
            await _sleep(0.2)
        assert "Kafka consumer lag" in await reader_b.call("ragdown_read_doc", {"path": "queues.md"})

        # A folder's settings changed from the web API reach the readers' copies without a sync.
        changed = httpx.patch(
            f"{primary.url}/api/folders/ops",
            json={"title": "Ops runbooks"},
            headers={"Authorization": f"Bearer {ADMIN}"},
            timeout=30,
        )
        assert changed.status_code == 200, changed.text
        copied = tmp_path / "data-b/folder/ops/.ragdown.json"
        assert wait_for(
            lambda: copied.exists() and "Ops runbooks" in copied.read_text(encoding="utf-8"), what="the copy"
        )

        # A full rebuild beside the old table: reader B keeps answering across the switch, then follows.
        from ragdown.indexing.index_location import IndexLocation

        location = IndexLocation(tmp_path, s3_env["RAGDOWN_INDEX_URI"])
        before = location.read_meta(fresh=True)
        assert before is not None
        rebuilt = await reader_a.call("ragdown_reindex", {"full": True})
        assert "error" not in rebuilt.lower()
        answers = [await reader_b.call("ragdown_recall", asked) for _ in range(25)]
        assert all(answer == from_primary for answer in answers)
        after = location.read_meta(fresh=True)
        assert after is not None
        assert after.lance_dir != before.lance_dir

        # The primary killed: the readers still answer from the bucket, and a new primary opens it.
        primary.process.kill()
        primary.process.wait()
        assert (await reader_a.call("ragdown_recall", asked)) == from_primary
        restarted, _ = cluster_primary(docs, tmp_path / "data-primary-2", **s3_env)
        try:
            wait_synced(restarted, files=2)
            assert (await restarted.call("ragdown_recall", asked)) == from_primary
            status = restarted.status()
            assert status["chunks"] >= 2
        finally:
            restarted.stop()
    finally:
        for proc in (*readers, primary):
            proc.stop()
        for proc in (*readers, primary):
            printed = proc.stderr.decode(errors="replace")
            print(printed[-2000:])
            assert f"(index in {s3_env['RAGDOWN_INDEX_URI']})" in printed  # where the index is
            assert s3_env["AWS_SECRET_ACCESS_KEY"] not in printed


async def _sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


def is_reader(proc: Proc) -> bool:
    return bool(proc.status()["role"] == "reader")
