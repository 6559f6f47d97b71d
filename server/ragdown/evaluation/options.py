"""The options of `ragdown eval` (docs/evaluation.md), apart from what runs them: every command's
parser is built at start, and the scoring's modules (pydantic models, the chunker) would cost each of
them ~20 ms (docs/design.md#start-up)."""

from __future__ import annotations

import argparse

# Beside `.ragdown.json`: a dot file, so never indexed, and it travels with the folder in git.
GOLDEN_NAME = ".ragdown-golden.jsonl"
NDCG_DEPTH = 10
DEFAULT_TOP_K = NDCG_DEPTH
MAX_TOP_K = 100  # as `ragdown search --top-k`
DEFAULT_LIMIT = 50  # lines of a draft

HELP = "Score DOCS's own questions (GOLDEN, default DOCS/.ragdown-golden.jsonl): hit@1, hit@5, MRR, nDCG@10."

# --min-<name>: the metric it bounds, by the name tables print.
BOUNDS = {"hit1": "hit@1", "hit5": "hit@5", "mrr": "MRR", "ndcg": "nDCG@10"}


def add_eval_arguments(sub: argparse.ArgumentParser) -> None:
    """The options after `ragdown eval DOCS` (the folder's own options come from cli.py)."""
    sub.add_argument(
        "golden", metavar="GOLDEN", nargs="?", help=f"the golden file (default: DOCS/{GOLDEN_NAME})"
    )
    sub.add_argument(
        "--top-k", type=int, default=DEFAULT_TOP_K, help=f"hits per question, 1-{MAX_TOP_K} (default 10)"
    )
    sub.add_argument("--json", metavar="FILE", help="write the whole result as JSON to FILE (- for stdout)")
    sub.add_argument(
        "--compare", metavar="SETTINGS", help="run again under these search settings (a JSON object)"
    )
    sub.add_argument(
        "--hook", action="store_true", help="score what the hook injects instead of the search's hits"
    )
    for name, metric in BOUNDS.items():
        sub.add_argument(
            f"--min-{name}", type=float, metavar="X", help=f"exit 1 when {metric} is below X (0-1)"
        )


def add_draft_arguments(parser: argparse.ArgumentParser) -> None:
    """`eval`'s options for a draft; GOLDEN, when given, is the set whose questions are skipped (the
    folder's own golden file otherwise)."""
    parser.add_argument(
        "--draft-from-log",
        action="store_true",
        help="draft a golden file from the query log's searches of FOLDER (and the hook's prompts that "
        "injected nothing) instead of scoring one",
    )
    parser.add_argument("--log", metavar="FILE", help="the query log (default: the server's, see docs)")
    parser.add_argument(
        "--log-folder", metavar="NAME", help="FOLDER's name in the log (default: FOLDER's own name)"
    )
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help=f"lines at most (default {DEFAULT_LIMIT})"
    )
    parser.add_argument("--since", type=int, metavar="DAYS", help="only what was asked in the last DAYS days")
    parser.add_argument("--out", metavar="FILE", help="write the draft here (default: stdout)")
    parser.add_argument("--force", action="store_true", help="replace an existing --out FILE")
