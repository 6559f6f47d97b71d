"""What the operator's resync costs the indexer as folders grow: every RAGDOWN_OPERATOR_RESYNC_S, the
operator re-applies each RagdownFolder (`Reconciler.ensure_folder`: read the folder, compare, patch only
on drift). This runs exactly that code against a real `ragdown serve` indexer holding N managed folders
of five documents each, with no drift, and reports the wall time of one whole resync.

The Kubernetes side (kopf, the Ingress calls) is not measured: no cluster here, and the tests' API
emulator is not built for load.

    .venv/bin/python bench/operator_scale.py [--folders 10 100 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.serving.conftest import free_port, start_serve, stop_process  # noqa: E402

from ragdown_operator.constants import manager_of  # noqa: E402
from ragdown_operator.indexer import IndexerClient  # noqa: E402
from ragdown_operator.kube import Kube  # noqa: E402
from ragdown_operator.reconcile import Outcome, Reconciler  # noqa: E402
from ragdown_operator.settings import OperatorSettings  # noqa: E402
from ragdown_operator.spec import FolderSpec  # noqa: E402

TOKEN = "bench-token"
ADMIN_TOKEN = "bench-admin-token"


def make_docs(docs: Path, folders: int) -> list[str]:
    names = [f"folder-{i:03d}" for i in range(folders)]
    for name in names:
        (docs / name).mkdir(parents=True)
        config = {"title": name, "mcp": True, "managed_by": manager_of("bench", name)}
        (docs / name / ".ragdown.json").write_text(json.dumps(config), encoding="utf-8")
        for j in range(5):
            (docs / name / f"doc{j}.md").write_text(f"# Doc {j}\n\n{name} text {j}\n", encoding="utf-8")
    return names


def wait_indexed(url: str, files: int) -> None:
    while True:
        try:
            status = httpx.get(f"{url}/api/status", timeout=5).json()
            if status["files"] == files and not status["syncing"]:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)


async def one_resync(reconciler: Reconciler, names: list[str]) -> tuple[float, int]:
    """Wall seconds for one pass over every folder, and how many folders drifted (0 expected)."""
    started = time.perf_counter()
    drifted = 0
    for name in names:
        outcome = Outcome()
        spec = FolderSpec.of({"title": name, "mcp": True}, name)
        await reconciler.ensure_folder(spec, manager_of("bench", name), outcome)
        drifted += bool(outcome.events)
    return time.perf_counter() - started, drifted


async def measure(folders: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        names = make_docs(docs, folders)
        port = free_port()
        quiet = subprocess.DEVNULL
        server = start_serve(
            docs, Path(tmp) / "data", port, TOKEN, stdout=quiet, stderr=quiet, RAGDOWN_ADMIN_TOKEN=ADMIN_TOKEN
        )
        url = f"http://127.0.0.1:{port}"
        indexer = IndexerClient(url, ADMIN_TOKEN, 60)
        try:
            wait_indexed(url, folders * 5)
            reconciler = Reconciler(OperatorSettings(), indexer, Kube())
            await one_resync(reconciler, names)  # warm: the counts memo, connections
            seconds = []
            for _ in range(3):
                took, drifted = await one_resync(reconciler, names)
                assert drifted == 0, f"{drifted} folders drifted in a steady state"
                seconds.append(took)
            best = min(seconds)
            return best, best / folders * 1000
        finally:
            await indexer.close()
            stop_process(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--folders", type=int, nargs="+", default=[10, 100, 300])
    args = parser.parse_args()
    print("| folders | one resync (s) | per folder (ms) |")
    print("|---|---|---|")
    for count in args.folders:
        total, per_folder = asyncio.run(measure(count))
        print(f"| {count} | {total:.2f} | {per_folder:.1f} |", flush=True)


if __name__ == "__main__":
    main()
