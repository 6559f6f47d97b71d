"""The large corpus (issue 27): >= 25,000 sections from the shared data, materialised outside the repo.

    .venv/bin/python bench/large_corpus.py                      # build (or reuse) it, count files and chunks
    .venv/bin/python bench/large_corpus.py --index /tmp/ragdown-large-data   # and index it once with ragdown

rust-book and fastapi-docs (copied), tldr-pages (unpacked) and the first 2,300 SciFact abstracts of
corpus.jsonl (one `<_id>.md` per document: `# title`, then the abstract): 9,991 files, 27,216 sections
as ragdown chunks them at 75c17c3 (rust-book 3,229, fastapi-docs 4,049, tldr-pages 12,287, SciFact 7,651;
all 5,183 abstracts would make 36,716, more to embed than the target needs). All under one folder,
default /tmp/ragdown-large-corpus ($RAGDOWN_LARGE_CORPUS). The folder is built once and reused while
its recipe stamp matches, so the indexes built on it (ragdown's, the peers') stay valid between runs.
Never copied into the repo.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, when imported from bench/peers

from _common import CORPORA, SHARED_BENCH, require

DEFAULT_ROOT = Path(os.environ.get("RAGDOWN_LARGE_CORPUS", "/tmp/ragdown-large-corpus"))
PARTS = ("rust-book", "fastapi-docs", "tldr-pages", "scifact")
# Bump when the layout changes: a folder with another stamp is rebuilt.
SCIFACT_DOCS = 2300
RECIPE = (
    "1: rust-book, fastapi-docs copied; tldr-pages-en.tar.gz unpacked; "
    f"the first {SCIFACT_DOCS} lines of scifact corpus.jsonl as <_id>.md"
)
STAMP = ".large-corpus.json"


def materialise(root: Path = DEFAULT_ROOT) -> Path:
    """The corpus folder, built under `root` unless a complete build with this recipe is there."""
    stamp = root / STAMP
    if stamp.exists() and json.loads(stamp.read_text()).get("recipe") == RECIPE:
        return root
    building = root.with_name(root.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    for name in ("rust-book", "fastapi-docs"):
        shutil.copytree(require(CORPORA / name), building / name)
    with tarfile.open(require(CORPORA / "tldr-pages-en.tar.gz")) as tar:
        tar.extractall(building / "tldr-pages", filter="data")
    scifact = building / "scifact"
    scifact.mkdir()
    with require(SHARED_BENCH / "scifact" / "corpus.jsonl").open(encoding="utf-8") as lines:
        for _, line in zip(range(SCIFACT_DOCS), lines, strict=False):
            doc = json.loads(line)
            title = " ".join(str(doc.get("title", "")).split()) or f"Document {doc['_id']}"
            (scifact / f"{doc['_id']}.md").write_text(
                f"# {title}\n\n{doc['text'].strip()}\n", encoding="utf-8"
            )
    # Files keep one mtime per build, so a reused folder never looks changed to an indexer.
    (building / STAMP).write_text(json.dumps({"recipe": RECIPE, "built": time.time()}) + "\n")
    shutil.rmtree(root, ignore_errors=True)
    building.rename(root)
    return root


def markdown_files(root: Path) -> list[Path]:
    """The .md files ragdown indexes: none under a name that starts with a dot (tldr's `common/..md`)."""
    return sorted(
        p
        for p in root.rglob("*.md")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def parts_of(root: Path) -> list[str]:
    """The corpus's top folders (PARTS for the large corpus; any folder for another corpus)."""
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def chunk_counts(root: Path) -> dict[str, int]:
    """Per part, the sections ragdown makes of it with its default embedder's chunk size (MiniLM,
    max_chars 500), counted with ragdown's own chunker (the code on PYTHONPATH)."""
    from ragdown.documents.metadata import parse_document
    from ragdown.indexing.embedders.minilm import MINILM

    counts: dict[str, int] = {}
    for part in parts_of(root):
        folder = root / part
        total = 0
        for path in markdown_files(folder):
            rel = path.relative_to(root).as_posix()
            total += len(
                parse_document(
                    path.read_text(encoding="utf-8", errors="replace"), rel, MINILM.max_chars
                ).chunks
            )
        counts[part] = total
    return counts


def describe(root: Path) -> dict[str, Any]:
    files = {part: len(markdown_files(root / part)) for part in parts_of(root)}
    chunks = chunk_counts(root)
    return {
        "root": str(root),
        "files": files,
        "files_total": sum(files.values()),
        "chunks": chunks,
        "chunks_total": sum(chunks.values()),
    }


def index(root: Path, data_dir: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    """`ragdown index` of the corpus into `data_dir`, niced (the machine is shared): its report, its wall."""
    started = time.perf_counter()
    out = subprocess.run(
        ["nice", sys.executable, "-m", "ragdown.cli", "index", str(root), "--data-dir", str(data_dir)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise RuntimeError(f"ragdown index failed ({out.returncode}): {out.stderr[-2000:]}")
    try:
        report = json.loads(out.stdout)
    except ValueError:
        report = {"stdout": out.stdout[-2000:]}
    return {"wall_s": round(wall, 1), "report": report}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="where the corpus is built")
    parser.add_argument("--index", type=Path, metavar="DATA_DIR", help="also index it with ragdown here")
    args = parser.parse_args()
    root = materialise(args.root)
    print(json.dumps(describe(root), indent=1), flush=True)
    if args.index:
        print(json.dumps(index(root, args.index), indent=1))


if __name__ == "__main__":
    main()
