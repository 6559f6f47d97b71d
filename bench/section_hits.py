"""One hit per section (docs/search.md#one-hit-per-section) on rust-book + fastapi-docs, in-process.

    .venv/bin/python bench/section_hits.py [--data-dir DIR] [--limit 5]

Copies the two corpora into one folder (`rust-book/…`, `fastapi-docs/…`, the layout of
bench/peers/queries.json), indexes it with `minilm` (kept in `--data-dir` between runs) and asks the
34 labelled questions of bench/peers/queries.json through `engine.search` under the policies before
and after: every chunk (the rule off), one hit per section (its best chunk), merged (the adjacent
chunks of the section joined), without and with the heading evidence (docs/search.md#heading-evidence),
and routed queries with a fixed evidence weight or one following the dense gap
(docs/search.md#evidence-follows-the-dense-gap). For each it prints:

- files in the top N: a labelled file among the first N hits (slots, as an agent reads them);
- peers' metric: a labelled file among the first 5 distinct files of 10 hits (bench/peers/run.py);
- labelled file first, and the mean reciprocal rank of the first hit in a labelled file (10 hits);
- slots of the first N taken by a section already shown (the same path and heading), and in how many
  questions;
- characters of hit text in the first N (what an agent reads), mean per question.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from _common import CORPORA, REPO, commit, require
from ragdown.engine import Engine
from ragdown.search.hybrid import Hit
from ragdown.search.policy import SearchPolicy

QUERIES = REPO / "bench" / "peers" / "queries.json"
OLD = SearchPolicy(one_per_section=False, heading_boost=0, routed_gap=False)
POLICIES = {
    "every chunk, no heading evidence, routed fixed (before)": OLD,
    "one per section (best chunk)": replace(OLD, one_per_section=True),
    "one per section, merged": replace(OLD, one_per_section=True, merge_sections=True),
    "every chunk + heading evidence": SearchPolicy(one_per_section=False, routed_gap=False),
    "one per section + heading evidence": SearchPolicy(routed_gap=False),
    "one per section + heading evidence + routed gap (default)": SearchPolicy(),
}


def copy_corpora(root: Path) -> Path:
    docs = root / "corpus"
    for name in ("rust-book", "fastapi-docs"):
        shutil.copytree(require(CORPORA / name), docs / name)
    return docs


def repeated_slots(hits: list[Hit]) -> int:
    seen: set[tuple[str, str]] = set()
    repeats = 0
    for hit in hits:
        key = (hit.path, hit.heading)
        repeats += key in seen
        seen.add(key)
    return repeats


def measure(
    engine: Engine, queries: list[dict[str, Any]], policy: SearchPolicy, limit: int
) -> dict[str, float]:
    found = peers = first = repeats = repeating = chars = 0
    reciprocal = 0.0
    for q in queries:
        labels = set(q["files"])
        hits = engine.search(q["query"], max(limit, 10), policy=policy)
        top = hits[:limit]
        found += bool(labels & {h.path for h in top})
        peers += bool(labels & set(list(dict.fromkeys(h.path for h in hits))[:5]))
        first += bool(top) and top[0].path in labels
        rank = next((i for i, h in enumerate(hits) if h.path in labels), None)
        reciprocal += 0.0 if rank is None else 1.0 / (rank + 1)
        repeats += repeated_slots(top)
        repeating += repeated_slots(top) > 0
        chars += sum(len(h.text) for h in top)
    n = len(queries)
    return {
        "found": found,
        "peers": peers,
        "first": first,
        "mrr": reciprocal / n,
        "repeats": repeats,
        "repeating": repeating,
        "chars": chars / n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, help="keep the index here (default: a temporary folder)")
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()
    queries = json.loads(require(QUERIES).read_text(encoding="utf-8"))["queries"]
    with tempfile.TemporaryDirectory(prefix="ragdown-sections-") as tmp:
        docs = copy_corpora(Path(tmp))
        engine = Engine.open(docs, args.data_dir or Path(tmp) / "data", "minilm", watch=False)
        engine.sync()
        rows = engine.store.count_rows()
        results = {name: measure(engine, queries, policy, args.limit) for name, policy in POLICIES.items()}
        engine.close()
    n = len(queries)
    print(f"rust-book + fastapi-docs: {rows} chunks, {n} questions · commit {commit()}\n")
    print(
        f"| policy | files in the top {args.limit} | peers' metric (5 distinct files of 10) | labelled first "
        f"| MRR (10 hits) | repeated-section slots of {n * args.limit} (questions) "
        f"| text chars in the top {args.limit} |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(
            f"| {name} | {r['found']}/{n} | {r['peers']}/{n} | {r['first']}/{n} | {r['mrr']:.3f} "
            f"| {r['repeats']} ({r['repeating']}) | {r['chars']:.0f} |"
        )


if __name__ == "__main__":
    main()
