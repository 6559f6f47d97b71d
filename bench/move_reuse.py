"""What the embedding cache saves (docs/design.md#embedding-cache): a corpus indexed with MiniLM,
then every file moved to another folder and synced, then a full rebuild with the same model.

    .venv/bin/python bench/move_reuse.py [--corpus rust-book]

The corpus is copied to a scratch folder (read from ../shared/bench/corpora, never changed).
Prints each sync's wall time, the chunks written and how many of them took a vector from the index.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from _common import CORPORA, commit, require
from ragdown.engine import Engine
from ragdown.indexing.embedders import create_embedder


def timed(label: str, engine: Engine, *, full: bool = False) -> None:
    started = time.perf_counter()
    report = engine.sync(full=full)
    seconds = time.perf_counter() - started
    print(
        f"| {label} | {seconds:.1f} | {report.added} | {report.removed} | {report.chunks} | {report.reused} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default="rust-book")
    args = parser.parse_args()
    source = require(CORPORA / args.corpus)
    with tempfile.TemporaryDirectory(prefix="ragdown-move-") as scratch:
        docs = Path(scratch) / "docs"
        shutil.copytree(source, docs / "before")
        engine = Engine(docs, Path(scratch) / "data", create_embedder("minilm"), source="minilm", watch=False)
        try:
            print(f"commit {commit()}, {args.corpus}, MiniLM int8\n")
            print("| sync | seconds | added | removed | chunks | reused |")
            print("|---|---|---|---|---|---|")
            timed("first index", engine)
            shutil.move(docs / "before", docs / "after")
            timed("every file moved", engine)
            timed("full rebuild, same model", engine, full=True)
        finally:
            engine.close()


if __name__ == "__main__":
    main()
