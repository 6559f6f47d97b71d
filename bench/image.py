"""The image's size by layer and its start-up to ready, on the CI's stand-in base.

    .venv/bin/python bench/image.py [--runs 3] [--no-build]

Builds ragdown:ci on the Debian stand-in for python:3.12-slim (tests/container/build_images.sh, as
the container tests do), then reports each layer's share (`docker history`), the largest packages of
the runtime venv, and, `--runs` times, the seconds from `docker run` to `/readyz` answering 200 and
to the first sync being done (`/api/status` says ready) for a server with the baked int8 MiniLM on a
copy of the bundled examples, run as the chart runs it (read-only root, tmpfs /tmp, uid 10001).
Needs root and a running dockerd.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from datetime import date
from pathlib import Path

import httpx

from _common import commit, median

REPO = Path(__file__).resolve().parents[1]
IMAGE = os.environ.get("RAGDOWN_CI_IMAGE", "ragdown:ci")
TOKEN = "bench-token"
MB = 1_000_000  # docker reports decimal megabytes


def docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout


def layers() -> list[tuple[str, int]]:
    """(what made the layer, bytes) of the non-empty layers, base first."""
    rows = docker("history", "--no-trunc", "--format", "{{json .}}", IMAGE).splitlines()
    runtime = (REPO / "Dockerfile").read_text(encoding="utf-8").rsplit("\nFROM ", 1)[1]
    copied = iter(line.split()[-1] for line in runtime.splitlines() if line.startswith("COPY --from"))
    found = []
    for row in reversed(rows):
        entry = json.loads(row)
        size = int(docker_size(entry["Size"]))
        made_by = entry["CreatedBy"]
        if not made_by:
            found.append(("base (the stand-in for python:3.12-slim)", size))
        elif "COPY" in made_by:
            found.append((f"COPY {next(copied)}", size))
        elif size:
            found.append(
                (made_by.replace("/bin/sh -c #(nop) ", "").replace("/bin/sh -c ", "RUN ")[:40], size)
            )
    return found


def docker_size(text: str) -> float:
    units = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float(text)


def largest_packages(count: int = 8) -> list[str]:
    out = docker(
        "run", "--rm", "--entrypoint", "sh", IMAGE, "-c",
        f"du -sm /opt/venv/lib/python3*/site-packages/* | sort -rn | head -{count}",
    )  # fmt: skip
    return [f"{line.split()[1].rsplit('/', 1)[1]} {line.split()[0]}" for line in out.splitlines()]


def start_up(data: Path) -> tuple[float, float]:
    """Seconds from `docker run` to /readyz 200, and to the first sync done."""
    name = f"ragdown-bench-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    docker(
        "run", "-d", "--name", name, "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL",
        "-v", f"{data}:/data", "-p", "127.0.0.1::3000", "-e", f"RAGDOWN_TOKEN={TOKEN}",
        "-e", "RAGDOWN_METRICS_PORT=0", IMAGE,
    )  # fmt: skip
    try:
        port = docker("port", name, "3000/tcp").splitlines()[0].rsplit(":", 1)[1]
        url = f"http://127.0.0.1:{port}"
        ready_s = synced_s = 0.0
        while not synced_s:
            try:
                if not ready_s and httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    ready_s = time.monotonic() - started
                status = httpx.get(
                    f"{url}/api/status", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=2
                )
                if ready_s and status.status_code == 200 and status.json().get("ready"):
                    synced_s = time.monotonic() - started
            except httpx.HTTPError:
                pass
            if time.monotonic() - started > 300:
                raise SystemExit(docker("logs", name)[-3000:])
            time.sleep(0.05)
        return ready_s, synced_s
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-build", action="store_true", help="measure the ragdown:ci already built")
    args = parser.parse_args()
    if not args.no_build:
        subprocess.run([str(REPO / "tests/container/build_images.sh")], check=True, stdout=subprocess.DEVNULL)
    print(f"## Image — {date.today()}, commit {commit()}\n")
    print("| layer | MB |\n|---|---|")
    total = 0
    for made_by, size in layers():
        total += size
        print(f"| {made_by} | {size / MB:.1f} |")
    print(f"| **image** | **{total / MB:.0f}** |\n")
    print("largest in the venv (MiB):", ", ".join(largest_packages()))
    ready, synced = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data"
            shutil.copytree(REPO / "examples", data / "docs")
            (data / "index").mkdir()
            for path in [data, *data.rglob("*")]:
                os.chown(path, 10001, 10001)
            r, s = start_up(data)
        ready.append(r)
        synced.append(s)
    times = ", ".join(f"{r:.1f}" for r in ready)
    print(f"start-up, {args.runs} runs: /readyz {times} s (median {median(ready):.1f})")
    times = ", ".join(f"{s:.1f}" for s in synced)
    print(f"first sync done {times} s (median {median(synced):.1f})")


if __name__ == "__main__":
    main()
