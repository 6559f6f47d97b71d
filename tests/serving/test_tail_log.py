"""`tail_log.follow` against the real `QueryLog` writing (and rotating) while it runs, plus `main` as a
real process stopped by SIGTERM. Waits are bounded polls for the expected output, never timings."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragdown.search.query_log import QueryLog
from ragdown.serving.tail_log import Follower, follow

TIMEOUT_S = 30.0


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def at_least(items: list[bytes], count: int) -> Callable[[], bool]:
    return lambda: len(items) >= count


def numbers(text: str) -> list[int]:
    assert text == "" or text.endswith("\n"), "a partial line was printed"
    return [json.loads(line)["n"] for line in text.splitlines()]


class Running:
    """`follow` in a thread writing into a StringIO."""

    def __init__(self, path: Path, poll_s: float = 0.01, from_start: bool = True) -> None:
        self.out = io.StringIO()
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=follow,
            args=(path, self.out),
            kwargs={"stop": self.stop, "poll_s": poll_s, "from_start": from_start},
            daemon=True,
        )
        self.thread.start()

    def numbers(self) -> list[int]:
        return numbers(self.out.getvalue())

    def wait_until(self, expected: list[int]) -> None:
        wait_for(lambda: len(self.numbers()) >= len(expected), f"{len(expected)} lines")
        assert self.numbers() == expected

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=TIMEOUT_S)
        assert not self.thread.is_alive(), "follow did not return after stop"


@pytest.fixture
def running() -> Iterator[Callable[..., Running]]:
    started: list[Running] = []

    def start(path: Path, poll_s: float = 0.01) -> Running:
        started.append(Running(path, poll_s))
        return started[-1]

    yield start
    for run in started:
        run.stop.set()
        run.thread.join(timeout=TIMEOUT_S)


def inode(path: Path) -> int:
    return path.stat().st_ino


@pytest.fixture
def polled(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Waits until a running follower has polled `count` more times (in whatever state the file is)."""
    polls = [0]
    real = Follower.poll

    def poll(self: Follower) -> None:
        real(self)
        polls[0] += 1

    monkeypatch.setattr(Follower, "poll", poll)

    def wait(count: int) -> None:
        until = polls[0] + count
        wait_for(lambda: polls[0] >= until, f"{count} polls")

    return wait


@pytest.mark.slow  # a real process (or the real S3 API) for seconds: the slow tier
def test_lines_before_start_and_across_several_rotations_appear_once_in_order(
    tmp_path: Path, running: Callable[..., Running]
) -> None:
    path = tmp_path / "data" / "query-log.jsonl"
    query_log = QueryLog(path, max_bytes=1000)
    for n in range(5):
        query_log.write({"n": n})
    follower = running(path)
    follower.wait_until(list(range(5)))

    written = 5
    files = {inode(path)}
    while len(files) < 5:
        # A burst is far below max_bytes, so it rotates at most once; its last lines before the
        # rotation must be drained from the old file before the new file's lines are printed.
        for _ in range(4):
            query_log.write({"n": written, "pad": "x" * 40})
            written += 1
        files.add(inode(path))
        follower.wait_until(list(range(written)))
    follower.close()
    assert follower.numbers() == list(range(written))


def test_a_line_written_in_two_parts_is_printed_once_whole(
    tmp_path: Path, running: Callable[..., Running], polled: Callable[[int], None]
) -> None:
    path = tmp_path / "query-log.jsonl"
    path.write_bytes(b'{"n": 0}\n{"n": 1, "qu')
    follower = running(path)
    follower.wait_until([0])
    polled(3)  # several polls see only the first part
    with path.open("ab") as handle:
        handle.write(b'ery": "x"}\n{"n": 2}\n')
    follower.wait_until([0, 1, 2])
    assert follower.out.getvalue() == '{"n": 0}\n{"n": 1, "query": "x"}\n{"n": 2}\n'


def test_partial_line_is_held_until_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "query-log.jsonl"
    out = io.StringIO()
    follower = Follower(path, out)
    path.write_bytes(b'{"n": 0}\n{"n"')
    follower.poll()
    assert out.getvalue() == '{"n": 0}\n'
    with path.open("ab") as handle:
        handle.write(b": 1}")
    follower.poll()
    assert out.getvalue() == '{"n": 0}\n'
    with path.open("ab") as handle:
        handle.write(b"\n")
    follower.poll()
    assert out.getvalue() == '{"n": 0}\n{"n": 1}\n'
    follower.close()


def test_a_file_that_appears_later_is_followed_from_its_start(
    tmp_path: Path, running: Callable[..., Running], polled: Callable[[int], None]
) -> None:
    path = tmp_path / "not-yet" / "query-log.jsonl"
    follower = running(path)
    polled(3)  # a few polls find nothing
    query_log = QueryLog(path)
    for n in range(3):
        query_log.write({"n": n})
    follower.wait_until([0, 1, 2])
    query_log.write({"n": 3})
    follower.wait_until([0, 1, 2, 3])


def test_a_deleted_file_is_waited_for_and_followed_again(
    tmp_path: Path, running: Callable[..., Running], polled: Callable[[int], None]
) -> None:
    path = tmp_path / "query-log.jsonl"
    query_log = QueryLog(path)
    query_log.write({"n": 0})
    follower = running(path)
    follower.wait_until([0])
    path.unlink()
    polled(3)  # a few polls find no file
    query_log.write({"n": 1})
    query_log.write({"n": 2})
    follower.wait_until([0, 1, 2])


def test_a_file_truncated_in_place_is_read_again_from_its_start(
    tmp_path: Path, running: Callable[..., Running]
) -> None:
    path = tmp_path / "query-log.jsonl"
    path.write_text('{"n": 0}\n{"n": 1}\n')
    follower = running(path)
    follower.wait_until([0, 1])
    with path.open("r+") as handle:
        handle.truncate(0)
    path.write_text('{"n": 2}\n')
    follower.wait_until([0, 1, 2])


def test_two_rotations_between_polls_lose_nothing(tmp_path: Path) -> None:
    """The file in the middle has become `.1` by the time the follower looks: it is read too."""
    path = tmp_path / "query-log.jsonl"
    query_log = QueryLog(path, max_bytes=200)
    out = io.StringIO()
    follower = Follower(path, out)
    query_log.write({"n": 0})
    follower.poll()
    written, files = 1, {inode(path)}
    while len(files) < 3:
        query_log.write({"n": written, "pad": "x" * 30})
        written += 1
        files.add(inode(path))
    follower.poll()
    assert numbers(out.getvalue()) == list(range(written))
    # The next rotation is an ordinary one: the `.1` just read is not read again.
    rotated = inode(path)
    while inode(path) == rotated:
        query_log.write({"n": written, "pad": "x" * 30})
        written += 1
    follower.poll()
    follower.close()
    assert numbers(out.getvalue()) == list(range(written))


def test_an_older_rotated_file_is_not_printed_when_the_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "query-log.jsonl"
    path.with_name(path.name + ".1").write_text('{"n": -1}\n')
    path.write_text('{"n": 0}\n')
    out = io.StringIO()
    follower = Follower(path, out)
    follower.poll()
    path.unlink()
    path.write_text('{"n": 1}\n')
    follower.poll()
    follower.close()
    assert numbers(out.getvalue()) == [0, 1]


def test_from_the_end_skips_what_is_there_including_a_line_being_written(tmp_path: Path) -> None:
    path = tmp_path / "query-log.jsonl"
    path.write_bytes(b'{"n": 0}\n{"n": ')
    out = io.StringIO()
    follower = Follower(path, out, from_start=False)
    follower.poll()
    with path.open("ab") as handle:
        handle.write(b'1}\n{"n": 2}\n')
    follower.poll()
    follower.close()
    assert numbers(out.getvalue()) == [2]


def test_from_the_end_still_reads_a_file_that_appears_later_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "query-log.jsonl"
    out = io.StringIO()
    follower = Follower(path, out, from_start=False)
    follower.poll()
    path.write_text('{"n": 0}\n')
    follower.poll()
    follower.close()
    assert numbers(out.getvalue()) == [0]


def test_stop_returns_promptly_even_with_a_long_poll_interval(tmp_path: Path) -> None:
    path = tmp_path / "query-log.jsonl"
    QueryLog(path).write({"n": 0})
    follower = Running(path, poll_s=3600)
    follower.wait_until([0])
    follower.close()  # joins with a bound far below the hour-long poll interval


@pytest.mark.slow  # a real process (or the real S3 API) for seconds: the slow tier
def test_main_as_a_process_prints_the_log_and_exits_0_on_sigterm(tmp_path: Path) -> None:
    path = tmp_path / "query-log.jsonl"
    query_log = QueryLog(path, max_bytes=300)
    query_log.write({"n": 0, "query": "café ünïcode"})
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from ragdown.serving.tail_log import main; "
            "sys.exit(main(Path(sys.argv[1])))",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},  # main still writes UTF-8
    ) as process:  # its pipes closed on the way out
        stdout = process.stdout
        assert stdout is not None
        printed: list[bytes] = []

        def read() -> None:
            printed.extend(iter(stdout.readline, b""))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            wait_for(lambda: len(printed) >= 1 or process.poll() is not None, "the first line")
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            for n in range(1, 12):  # about one rotation per two lines
                query_log.write({"n": n, "pad": "x" * 40})
                if n % 2 == 0:
                    # At most one rotation between two polls (see the two-rotation test for two).
                    wait_for(at_least(printed, n + 1), f"line {n}")
            wait_for(at_least(printed, 12), "the lines written while it ran")
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=TIMEOUT_S) == 0, (
                process.stderr.read().decode() if process.stderr else ""
            )
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        reader.join(timeout=TIMEOUT_S)
    lines = [json.loads(line) for line in printed]
    assert [line["n"] for line in lines] == list(range(12))
    assert lines[0]["query"] == "café ünïcode"


def test_tail_log_loads_neither_lancedb_nor_pyarrow() -> None:
    """The sidecar runs beside every server pod on a small memory request: following a file needs
    neither the index nor the model."""
    probe = (
        "import sys\n"
        "from ragdown.cli import build_parser, main\n"
        "build_parser().parse_args(['tail-log', '--file', 'x'])\n"
        "import ragdown.serving.tail_log, ragdown.search.query_log\n"
        "print(sorted(m for m in ('lancedb', 'pyarrow', 'onnxruntime', 'numpy') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"
