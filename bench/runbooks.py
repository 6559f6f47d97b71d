"""mcp-ragdown's generated runbook benchmark (scripts/bench: retrieval.ts, threshold.ts, gate.ts)
against the real engine, plus identifier and alias question sets.

    .venv/bin/python bench/runbooks.py [--embedder minilm] [--data-dir DIR] [--min-score X]

The corpus is `runbooks_gen.py` (bit-identical to gen.ts): 30 runbooks written as Markdown into a
temporary folder, indexed with `Engine.open(..., watch=False)` and `sync()`. A hit is right when its
path and breadcrumb (`Title › Section…`) are the gold section's, as in retrieval.ts. Tables:

a. retrieval per question type: top-1, R@3, R@5, MRR (ranks past 10 count as misses) for hybrid
   (`engine.search`), dense only and BM25 only (the two pools of `ragdown.search.hybrid.retrieve`);
b. min_score: best-hit cosine of on-topic questions (p10, median) against off-topic prompts
   (median, max), as threshold.ts computes it;
c. identifier and alias questions: how often the right chunk comes first;
d. the hook (`engine.context`, the real gates, bypasses and budget) swept as gate.ts sweeps it:
   min_score 0.30/0.35/0.40 × min_ratio 1.00 → 0 at top_k 4 and max_chars 100000, against the
   ungated hook (min_score 0, min_ratio 0) and the embedder's own defaults;
e. abstention: what `SearchPolicy(abstain=True)` refuses (no hits at all) against `abstain=False`,
   for answerable, unanswerable, off-topic and nonsense queries.

When `engine.search` takes a `policy`, the "before" columns switch identifier routing and the alias
boost off (`SearchPolicy(route_identifiers=False, alias_boost=False)`); otherwise only the current
pipeline is measured. The threshold table switches abstention off when the policy has it, so that
off-topic prompts show their raw cosine instead of an empty result. The hook sweep runs each prompt's
search once and replays it (`memoized_search`): the search is deterministic over a fixed index, and
the defaults row, run without the cache, checks that the replay changes nothing.

The identifier and alias sets of the mcp-ragdown README (diversity.ts, links.ts) are not published,
so these are our own, over the same generated corpus:

- identifier: each query names a string that occurs in exactly one section of the corpus, in a form
  docs/search.md#identifier-routing routes: `localhost:<port>/healthz` and `.../metrics` URLs and
  `journalctl -u <slug>`
  (Troubleshooting), and each production-only `veltra <cmd> <slug>` step in backticks (Deployment ›
  Production). Candidates that are not unique (shared ports, team-wide notify steps) are dropped.
- alias: a second copy of the corpus whose front matter adds one codename per runbook
  (`aliases: [Cobalt]`, a mineral that occurs nowhere else); the prose-owner, table-cell,
  scoped-section, nested-list and code-block questions are asked with the codename in place of the
  title. Only BM25 sees an alias (on the document's first chunk), so without the boost the answer
  section has to win on its own words.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from _common import commit
from ragdown.documents.chunks import breadcrumb
from ragdown.engine import Engine
from ragdown.evaluation.metrics import hit_rate, mean_reciprocal_rank
from ragdown.search.filters import SearchFilters, where_clause
from ragdown.search.hybrid import Hit, retrieve
from ragdown.search.policy import SearchPolicy
from ragdown.search.routing import is_routed
from runbooks_gen import Corpus, Doc, Question, generate, render_blocks, render_doc

DEPTH = 10  # retrieval.ts ranks the top 10 of each retriever
TOP_K = 4
HOOK_MAX_CHARS = 100_000  # large enough that the budget (docs/hook.md#gates step 10) never drops a gated hit
# gate.ts's top steps, then finer below 0.80: MiniLM's cosines spread wider than granite's, so its
# knee sits lower.
MIN_SCORES = [0.30, 0.35, 0.40]
RATIOS = [1.0, 0.95, 0.9, 0.85, 0.8, 0.78, 0.76, 0.74, 0.72, 0.7, 0.65, 0.6, 0.0]
RECOMMEND_AT = 0.35  # the recommendation's min_score (MiniLM's default)
RELATIVE_TARGET = 0.99  # hook recall ≥ 99% of the ungated hook's
STANDARD_TYPES = [
    "prose-owner",
    "table-cell",
    "scoped-section",
    "nested-list",
    "ordered-step",
    "code-block",
    "reverse-lookup",
]
# threshold.ts's and gate.ts's ten, then everyday prompts a hook sees that no runbook answers.
OFF_TOPIC = [
    "what is the weather in Paris tomorrow",
    "a recipe for carbonara",
    "who won the world cup in 1998",
    "refactor this function to async/await",
    "write a haiku about autumn",
    "how do I train a golden retriever puppy",
    "explain the plot of Hamlet",
    "best hiking boots for wet weather",
    "convert 40 degrees celsius to fahrenheit",
    "what year did the Berlin Wall fall",
    "tell me a joke",
    "tell me a joke about penguins",
    "will it rain in London this weekend",
    "how long should I boil an egg",
    "give me a vegetarian lasagna recipe",
    "what's a good name for a cat",
    "recommend a fantasy novel for a long flight",
    "how many calories are in a banana",
    "what time is it in Tokyo right now",
    "translate 'good morning' into Spanish",
    "how do I get red wine out of a carpet",
    "summarise the French revolution in three sentences",
    "what should I pack for a beach holiday",
    "is it safe to feed grapes to a dog",
    "how do I fix a squeaky door hinge",
    "explain quantum entanglement to a child",
    "suggest a birthday present for my mother",
    "what are the rules of chess castling",
    "thanks, that's all for today",
    "good morning! how are you?",
]
# Queries no runbook can answer, for abstention: made-up words, foreign subjects, trivia.
NONSENSE = [
    "zxqv glorp frobnicate",
    "blorptastic quuxification of snargles",
    "flibbertigibbet wobble snorkack",
    "asdf qwer zxcv hjkl",
    "lorem ipsum dolor sit amet",
    "quantum chromodynamics lattice",
    "mitochondrial dna inheritance",
    "plate tectonics and earthquakes",
    "baroque counterpoint exercises",
    "impressionist painters of the 1870s",
    "medieval french poetry meter",
    "best lasagna recipe",
    "sourdough starter hydration",
    "how to knit a scarf",
    "who won the 1998 world cup",
    "the offside rule in football",
    "capital city of mongolia",
    "symptoms of vitamin d deficiency",
    "how do penguins stay warm",
    "cheap flights to lisbon in may",
]
# One codename per runbook for the alias set; none occurs in the generated corpus.
ALIASES = [
    "Agate",
    "Basalt",
    "Beryl",
    "Cinnabar",
    "Cobalt",
    "Corundum",
    "Dolomite",
    "Feldspar",
    "Flint",
    "Garnet",
    "Gneiss",
    "Granite",
    "Gypsum",
    "Jasper",
    "Kyanite",
    "Lazurite",
    "Malachite",
    "Marble",
    "Mica",
    "Nephrite",
    "Onyx",
    "Opal",
    "Pumice",
    "Pyrite",
    "Quartz",
    "Rhodonite",
    "Schist",
    "Shale",
    "Topaz",
    "Zircon",
]
ALIAS_TYPES = ["prose-owner", "table-cell", "scoped-section", "nested-list", "code-block"]


@dataclass(frozen=True)
class Probe:
    """A query with the one section that answers it."""

    id: str
    type: str
    q: str
    doc: Doc
    section: str

    @property
    def path(self) -> str:
        return f"{self.doc.slug}.md"

    @property
    def breadcrumb(self) -> str:
        return self.doc.breadcrumb(self.section)


def is_gold(hit_path: str, crumb: str, probe: Probe) -> bool:
    """Same document and breadcrumb; a sub-heading of the gold section counts too (gate.ts)."""
    want = probe.breadcrumb
    return hit_path == probe.path and (crumb == want or crumb.startswith(want + " ›"))


def located(row: dict[str, Any] | Hit) -> tuple[str, str]:
    """(path, `Title › Section…`) of a hit or a retrieved row; `heading` already starts with the
    title when the document has it as its H1, as every generated runbook does."""
    if isinstance(row, Hit):
        return row.path, breadcrumb(row.title, row.heading)
    return row["path"], breadcrumb(row["title"], row["heading"])


def rank_of(hits: Sequence[tuple[str, str]], probe: Probe) -> float:
    """1-based rank of the first gold hit among (path, heading) pairs; inf when absent."""
    for i, (path, heading) in enumerate(hits[:DEPTH]):
        if is_gold(path, heading, probe):
            return i + 1
    return float("inf")


# ---------- search modes ----------
def policy_kwargs(engine: Engine, **switches: bool) -> dict[str, Any]:
    """`policy=SearchPolicy(...)` with these switches."""
    return {"policy": SearchPolicy(**switches)}


def separate_rankings(engine: Engine, query: str) -> dict[str, list[tuple[str, str]]]:
    """Dense and BM25 on their own, from the same pools the hybrid search fuses (as scifact.py)."""
    vector = engine.embedder.embed_query(query)
    where = where_clause(SearchFilters(), engine.store.superseded_paths())
    pools = retrieve(engine.store, query, vector, 4 * DEPTH, where)
    # entries are (row, similarity, ...) tuples, whichever version of retrieve this is
    return {name: [located(entry[0]) for entry in pools.get(name, [])] for name in ("dense", "lexical")}


def hybrid_modes(engine: Engine) -> dict[str, dict[str, Any]]:
    """Search keyword arguments per hybrid column: the pipeline as it is, and "before" if possible."""
    before = policy_kwargs(engine, route_identifiers=False, alias_boost=False)
    return {"hybrid": {}, **({"hybrid (before)": before} if before else {})}


def ranks(engine: Engine, probes: Sequence[Probe]) -> dict[str, list[float]]:
    """Rank of the gold section per probe, per retrieval mode."""
    modes = hybrid_modes(engine)
    out: dict[str, list[float]] = defaultdict(list)
    for probe in probes:
        for name, kwargs in modes.items():
            hits = engine.search(probe.q, DEPTH, **kwargs)
            out[name].append(rank_of([located(h) for h in hits], probe))
        separate = separate_rankings(engine, probe.q)
        out["dense"].append(rank_of(separate["dense"], probe))
        out["bm25"].append(rank_of(separate["lexical"], probe))
    return out


def metrics(values: Sequence[float]) -> tuple[float, float, float, float]:
    """top-1, R@3, R@5 and MRR through `ragdown.evaluation.metrics` (what `ragdown eval` computes)."""
    ranks = [None if r == float("inf") else int(r) for r in values]
    return hit_rate(ranks, 1), hit_rate(ranks, 3), hit_rate(ranks, 5), mean_reciprocal_rank(ranks)


# ---------- the hook (docs/hook.md#gates) ----------
@dataclass(frozen=True)
class HookRun:
    """One hook setting over the answerable questions and the off-topic prompts."""

    label: str
    found: list[bool]  # per answerable question: a gold section was injected
    chunks: int  # chunks injected over all answerable questions
    noise: int  # of which not gold
    elsewhere: int  # of which from another runbook than the gold section's
    off_chunks: list[int]  # chunks injected per off-topic prompt

    def row(self, ungated: HookRun | None) -> list[Any]:
        n = len(self.found)
        found = sum(self.found)
        relative = pct(found / sum(ungated.found)) if ungated is not None and any(ungated.found) else "—"
        return [
            self.label,
            pct(found / n),
            relative,
            f"{self.chunks / n:.2f}",
            f"{self.noise / n:.2f}",
            f"{self.elsewhere / n:.2f}",
            sum(k > 0 for k in self.off_chunks),
            sum(self.off_chunks),
        ]


HOOK_HEAD = [
    "setting",
    "recall",
    "recall / ungated",
    "chunks/q",
    "off-target/q",
    "other runbooks/q",
    f"off-topic prompts injected (of {len(OFF_TOPIC)})",
    "off-topic chunks",
]


def hook_run(engine: Engine, label: str, probes: Sequence[Probe], overrides: dict[str, float]) -> HookRun:
    """`engine.context(q, overrides=...)` without a session: what it injects is `result.injected`.
    A question counts as found when any injected chunk is its gold section (gate.ts)."""
    found: list[bool] = []
    chunks = noise = elsewhere = 0
    for probe in probes:
        injected = engine.context(probe.q, overrides=overrides).injected
        gold = [is_gold(*located(h), probe) for h in injected]
        found.append(any(gold))
        chunks += len(injected)
        noise += gold.count(False)
        elsewhere += sum(h.path != probe.path for h in injected)
    off = [len(engine.context(q, overrides=overrides).injected) for q in OFF_TOPIC]
    return HookRun(label, found, chunks, noise, elsewhere, off)


def hook_overrides(min_score: float, min_ratio: float) -> dict[str, float]:
    return {"top_k": TOP_K, "min_score": min_score, "min_ratio": min_ratio, "max_chars": HOOK_MAX_CHARS}


@contextmanager
def memoized_search(engine: Engine) -> Iterator[None]:
    """Answer repeated `engine.search` calls from a cache while the hook is swept: the hook calls
    `self.search(prompt, 2 × top_k)`, which does not depend on the gate settings."""
    real = engine.search
    cache: dict[tuple[Any, ...], list[Hit]] = {}

    def search(
        query: str, limit: int = 10, filters: SearchFilters | None = None, policy: Any = None
    ) -> list[Hit]:
        key = (query, limit, filters, policy)
        if key not in cache:
            cache[key] = real(query, limit, filters, policy)
        return cache[key]

    engine.search = search  # type: ignore[method-assign]  # this instance only; the del below restores it
    try:
        yield
    finally:
        del engine.search


def recommend(runs: dict[float, HookRun], ungated: HookRun) -> float | None:
    """The largest min_ratio whose recall is ≥ 99% of the ungated hook's with no off-topic injection."""
    meeting = [
        ratio
        for ratio, run in runs.items()
        if sum(run.found) >= RELATIVE_TARGET * sum(ungated.found) and not any(run.off_chunks)
    ]
    return max(meeting) if meeting else None


# ---------- abstention ----------
ABSTAIN_DEPTH = 5


def top_hits(engine: Engine, queries: Sequence[str], abstain: bool) -> list[list[Hit]]:
    kwargs = policy_kwargs(engine, abstain=abstain)
    return [engine.search(q, ABSTAIN_DEPTH, **kwargs) for q in queries]


def why_not_refused(engine: Engine, query: str) -> tuple[int, float]:
    """What abstention looks at (docs/search.md#pipeline / `knows_nothing`): the lexical matches in the pool
    and the best dense cosine."""
    vector = engine.embedder.embed_query(query)
    where = where_clause(SearchFilters(), engine.store.superseded_paths())
    pools = retrieve(engine.store, query, vector, 4 * ABSTAIN_DEPTH, where)
    best = max((entry[1] for entry in pools.get("dense", [])), default=0.0)
    return len(pools.get("lexical", [])), float(best)


def abstention_rows(
    engine: Engine, probes: Sequence[Probe], others: dict[str, Sequence[str]]
) -> list[list[Any]]:
    """Per query set: no hits at all with abstention off and on; for answerable questions also
    the gold section in the top 5, and how many lose it when abstention is on."""
    rows: list[list[Any]] = []
    off = top_hits(engine, [p.q for p in probes], abstain=False)
    on = top_hits(engine, [p.q for p in probes], abstain=True)
    gold_off = [
        rank_of([located(h) for h in hits], p) <= ABSTAIN_DEPTH for p, hits in zip(probes, off, strict=True)
    ]
    gold_on = [
        rank_of([located(h) for h in hits], p) <= ABSTAIN_DEPTH for p, hits in zip(probes, on, strict=True)
    ]
    lost = sum(a and not b for a, b in zip(gold_off, gold_on, strict=True))
    rows.append(
        [
            "answerable (gen.ts)",
            len(probes),
            sum(not h for h in off),
            sum(not h for h in on),
            sum(gold_off),
            sum(gold_on),
            lost,
        ]
    )
    for name, queries in others.items():
        off_hits = top_hits(engine, queries, abstain=False)
        on_hits = top_hits(engine, queries, abstain=True)
        rows.append(
            [name, len(queries), sum(not h for h in off_hits), sum(not h for h in on_hits), "—", "—", "—"]
        )
    return rows


# ---------- question sets ----------
def standard_probes(corpus: Corpus, questions: Sequence[Question]) -> list[Probe]:
    return [Probe(q.id, q.type, q.q, corpus.doc(q.doc), q.section) for q in questions if q.section and q.doc]


def section_texts(corpus: Corpus) -> list[tuple[Doc, str, str]]:
    return [(d, s.key, render_blocks(s.blocks, "md")) for d in corpus.docs for s in d.sections]


def identifier_probes(corpus: Corpus) -> list[Probe]:
    sections = section_texts(corpus)

    def unique(needle: str) -> tuple[Doc, str] | None:
        found = [(d, key) for d, key, text in sections if needle in text]
        return found[0] if len(found) == 1 else None

    probes: list[Probe] = []
    for d in corpus.docs:
        code = d.section("troubleshooting").blocks[1]["text"]
        health = re.search(r"localhost:(\d+)/healthz", code)
        metrics_port = re.search(r"localhost:(\d+)/metrics", code)
        candidates: list[tuple[str, str, str]] = []
        if health:
            needle = f"localhost:{health.group(1)}/healthz"
            candidates.append(("healthz-url", needle, f"What answers on {needle}?"))
        if metrics_port:
            needle = f"localhost:{metrics_port.group(1)}/metrics"
            candidates.append(("metrics-url", needle, f"curl -s http://{needle} shows queue_depth rising"))
        needle = f"journalctl -u {d.slug}"
        candidates.append(("journalctl", needle, f"{needle} shows errors, where is that documented?"))
        staging = {it[1][1] for it in d.section("deploy-staging").blocks[1]["items"]}
        for item in d.section("deploy-production").blocks[1]["items"]:
            command = item[1][1]
            if command not in staging:
                candidates.append(("prod-only-step", command, f"Which step runs `{command}`?"))
        for kind, needle, query in candidates:
            hit = unique(needle)
            if hit is not None:
                probes.append(Probe(f"{d.slug}:{kind}:{needle}", kind, query, hit[0], hit[1]))
    return probes


def aliased_markdown(doc: Doc, alias: str) -> str:
    text = render_doc(doc, "md")
    return text.replace("\ntags: ", f"\naliases: [{alias}]\ntags: ", 1)


def alias_probes(corpus: Corpus) -> list[Probe]:
    alias_of = dict(zip((d.slug for d in corpus.docs), ALIASES, strict=True))
    return [
        Probe(
            q.id, q.type, q.q.replace(corpus.doc(q.doc).title, alias_of[q.doc]), corpus.doc(q.doc), q.section
        )
        for q in corpus.questions
        if q.type in ALIAS_TYPES and q.section
    ]


# ---------- output ----------
def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def retrieval_tables(probes: Sequence[Probe], by_mode: dict[str, list[float]], types: Sequence[str]) -> str:
    parts = []
    for mode, values in by_mode.items():
        rows = []
        for t in types:
            picked = [v for p, v in zip(probes, values, strict=True) if p.type == t]
            if picked:
                rows.append([t, len(picked), *(f"{m:.3f}" for m in metrics(picked))])
        standard = [v for p, v in zip(probes, values, strict=True) if p.type in STANDARD_TYPES]
        if standard:
            rows.append(
                [
                    f"**all {len(standard)} answerable**",
                    len(standard),
                    *(f"{m:.3f}" for m in metrics(standard)),
                ]
            )
        parts.append(f"**{mode}**\n\n" + table(["type", "n", "top-1", "R@3", "R@5", "MRR"], rows))
    return "\n\n".join(parts)


def first_rate_table(name: str, probes: Sequence[Probe], by_mode: dict[str, list[float]]) -> str:
    """Right chunk first, per probe kind and overall, one column per retrieval mode."""
    kinds = list(dict.fromkeys(p.type for p in probes))
    rows = []
    for kind in [*kinds, None]:
        idx = [i for i, p in enumerate(probes) if kind is None or p.type == kind]
        label = f"**all ({name})**" if kind is None else kind
        rows.append(
            [label, len(idx), *(pct(sum(v[i] <= 1 for i in idx) / len(idx)) for v in by_mode.values())]
        )
    return table(["probe", "n", *by_mode], rows)


def miss_lines(
    engine: Engine, probes: Sequence[Probe], values: Sequence[float], per_type: int = 2
) -> list[str]:
    """A few top-1 misses per type with the hit that took first place."""
    shown: Counter[str] = Counter()
    lines = []
    for probe, rank in zip(probes, values, strict=True):
        if rank == 1 or shown[probe.type] >= per_type:
            continue
        shown[probe.type] += 1
        top = engine.search(probe.q, 1)
        wrong = f"{top[0].path} — {top[0].heading} ({top[0].similarity:.2f})" if top else "(no hits)"
        where = "not in top 10" if rank == float("inf") else f"gold at rank {int(rank)}"
        lines.append(f"- [{probe.type}] {probe.q!r}: gold {probe.breadcrumb}, {where}; first: {wrong}")
    return lines


def pct_of(values: Sequence[float], p: float) -> float:
    """threshold.ts's percentile: sorted[floor(p × (n − 1))]."""
    ordered = sorted(values)
    return ordered[int(p * (len(ordered) - 1))]


def stats_row(label: str, values: Sequence[float]) -> list[Any]:
    cells = [pct_of(values, 0.1), pct_of(values, 0.5), min(values), max(values)]
    return [label, len(values), *(f"{v:.3f}" for v in cells)]


def best_similarities(engine: Engine, queries: Sequence[str]) -> list[float]:
    """threshold.ts: the cosine of the first hit of `search(q, 1)`, 0 when there is none."""
    kwargs = policy_kwargs(engine, abstain=False)
    out = []
    for q in queries:
        hits = engine.search(q, 1, **kwargs)
        out.append(hits[0].similarity if hits else 0.0)
    return out


def open_index(docs: Path, data_dir: Path, embedder: str) -> tuple[Engine, float, int]:
    engine = Engine.open(docs, data_dir, embedder, watch=False)
    started = time.perf_counter()
    engine.sync()
    return engine, time.perf_counter() - started, engine.store.count_rows()


def write_corpora(corpus: Any, root: Path) -> tuple[Path, Path]:
    """The runbooks as Markdown under `root/runbooks`, and each with its alias under `root/aliased`."""
    docs, aliased = root / "runbooks", root / "aliased"
    docs.mkdir()
    aliased.mkdir()
    for d, alias in zip(corpus.docs, ALIASES, strict=True):
        (docs / f"{d.slug}.md").write_text(render_doc(d, "md"), encoding="utf-8")
        (aliased / f"{d.slug}.md").write_text(aliased_markdown(d, alias), encoding="utf-8")
    return docs, aliased


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--data-dir", type=Path, help="keep the indexes here (default: a temporary folder)")
    parser.add_argument(
        "--min-score", type=float, help="the hook sweep's only min_score (default: 0.30, 0.35 and 0.40)"
    )
    args = parser.parse_args()
    command = "bench/runbooks.py " + " ".join(sys.argv[1:])

    corpus = generate()
    probes = standard_probes(corpus, corpus.questions)
    hard = standard_probes(corpus, corpus.hard_questions)
    identifiers = identifier_probes(corpus)
    aliases = alias_probes(corpus)
    unanswerable = [q.q for q in corpus.questions if not q.section]

    with tempfile.TemporaryDirectory(prefix="ragdown-runbooks-") as tmp:
        root = Path(tmp)
        docs, aliased = write_corpora(corpus, root)
        data = args.data_dir or root / "data"
        engine, index_s, chunks = open_index(docs, data / "runbooks", args.embedder)
        started = time.perf_counter()

        retrieval = ranks(engine, [*probes, *hard])
        on_first60 = best_similarities(engine, [p.q for p in probes[:60]])
        on_all = best_similarities(engine, [p.q for p in probes])
        off = best_similarities(engine, OFF_TOPIC)
        off_unanswerable = best_similarities(engine, unanswerable)
        identifier_ranks = ranks(engine, identifiers)

        hybrid_misses = miss_lines(engine, probes, retrieval["hybrid"][: len(probes)])
        identifier_misses = miss_lines(engine, identifiers, identifier_ranks["hybrid"], per_type=3)
        embedder_min_score = float(getattr(engine.embedder, "min_score", 0.0))
        embedder_min_ratio = float(getattr(engine.embedder, "min_ratio", 0.95))
        embedder_name = engine.embedder.name

        # the hook at the embedder's defaults, each prompt searched afresh (no cache)
        defaults = engine.hook_settings()
        default_runs = [
            hook_run(
                engine,
                f"DEFAULTS min_score {defaults.min_score:.2f}, min_ratio {defaults.min_ratio:.2f}, "
                f"max_chars {HOOK_MAX_CHARS}",
                probes,
                {"max_chars": HOOK_MAX_CHARS},
            ),
            hook_run(
                engine,
                f"DEFAULTS as shipped (max_chars {defaults.max_chars})",
                probes,
                {},
            ),
        ]
        min_scores = [args.min_score] if args.min_score is not None else MIN_SCORES
        with memoized_search(engine):
            ungated = hook_run(engine, "ungated (min_score 0, min_ratio 0)", probes, hook_overrides(0.0, 0.0))
            sweep = {
                ms: {r: hook_run(engine, f"{r:.2f}", probes, hook_overrides(ms, r)) for r in RATIOS}
                for ms in min_scores
            }
            replay = hook_run(
                engine, "replayed", probes, hook_overrides(defaults.min_score, defaults.min_ratio)
            )
        # the hook at its defaults with abstention off, as ServerSettings(abstain=False) would build it
        policy = engine.searcher.policy
        engine.searcher.policy = dataclasses.replace(policy, abstain=False)
        default_runs.append(
            hook_run(engine, "DEFAULTS, abstention off", probes, {"max_chars": HOOK_MAX_CHARS})
        )
        engine.searcher.policy = policy

        abstention = abstention_rows(
            engine,
            probes,
            {
                "unanswerable (gen.ts)": unanswerable,
                "off-topic prompts": OFF_TOPIC,
                "nonsense / foreign": NONSENSE,
            },
        )
        nonsense_detail = [
            (q, not engine.search(q, ABSTAIN_DEPTH), *why_not_refused(engine, q)) for q in NONSENSE
        ]
        off_not_refused = [
            (q, *why_not_refused(engine, q)) for q in OFF_TOPIC if engine.search(q, ABSTAIN_DEPTH)
        ]
        engine.close()

        alias_engine, _, _ = open_index(aliased, data / "aliased", args.embedder)
        alias_ranks = ranks(alias_engine, aliases)
        alias_misses = miss_lines(alias_engine, aliases, alias_ranks["hybrid"], per_type=1)
        alias_engine.close()
        query_s = time.perf_counter() - started

    before = "hybrid (before)" in retrieval
    print(
        f"{date.today().isoformat()} · commit {commit()} · `.venv/bin/python {command.strip()}` · "
        f"embedder {embedder_name} · {len(corpus.docs)} runbooks, {chunks} chunks "
        f"indexed in {index_s:.1f} s · queries {query_s:.0f} s"
    )
    if not before:
        print("\n`engine.search` takes no `policy` here: only the current pipeline is measured.")
    print("\n## a. Retrieval per question type (hard questions listed, not in the total)\n")
    print(retrieval_tables([*probes, *hard], retrieval, [*STANDARD_TYPES, "multi-hop", "step-after"]))
    print("\nHybrid top-1 misses (up to 2 per type; `first` is the hit ranked first):\n")
    print("\n".join(hybrid_misses) or "- none")

    print("\n## b. min_score: best-hit cosine (`search(q, 1)`, abstention off)\n")
    rows = [
        stats_row("on-topic, first 60 (threshold.ts)", on_first60),
        stats_row("on-topic, all 210", on_all),
        stats_row("off-topic prompts", off),
        stats_row("unanswerable (gen.ts)", off_unanswerable),
    ]
    print(table(["prompts", "n", "p10", "median", "min", "max"], rows))
    top_off = sorted(zip(off, OFF_TOPIC, strict=True), reverse=True)[:5]
    print("\nStrongest off-topic prompts: " + "; ".join(f"{q!r} {s:.3f}" for s, q in top_off))
    # A floor halfway between the strongest unrelated prompt and the weakest tenth of real questions,
    # rounded to 0.05 as the README's per-model values are.
    suggested = round(round((max(off) + pct_of(on_all, 0.1)) / 2 / 0.05) * 0.05, 2)
    below = sum(s < suggested for s in on_all)
    above = sum(s >= suggested for s in off)
    print(
        f"\nSuggested min_score {suggested:.2f} (embedder's current {embedder_min_score:.2f}): "
        f"{below}/{len(on_all)} on-topic best hits fall below it, "
        f"{above}/{len(off)} off-topic prompts reach it."
    )

    print("\n## c. Identifier and alias questions: right chunk first\n")
    routed = f"; {sum(is_routed(p.q) for p in identifiers)}/{len(identifiers)} identifier queries route"
    print(f"{len(identifiers)} identifier queries, {len(aliases)} alias queries{routed}.\n")
    print(first_rate_table("identifier", identifiers, identifier_ranks))
    print()
    print(first_rate_table("alias", aliases, alias_ranks))
    print("\nIdentifier hybrid top-1 misses (up to 3 per kind):\n")
    print("\n".join(identifier_misses) or "- none")
    print("\nAlias hybrid top-1 misses (1 per type):\n")
    print("\n".join(alias_misses) or "- none")

    print(
        f"\n## d. The hook (`engine.context`): top_k {TOP_K}, max_chars {HOOK_MAX_CHARS}, "
        f"candidates search(q, {2 * TOP_K}), no session\n"
    )
    replay_same = replay.found == default_runs[0].found and replay.off_chunks == default_runs[0].off_chunks
    print(
        f"Recall: share of the {len(probes)} answerable questions whose gold section was injected. "
        f"recall / ungated: that share over the ungated hook's ({pct(sum(ungated.found) / len(probes))}). "
        "Off-target: injected chunks that are not the gold section; other runbooks: those of them "
        f"from another runbook. Off-topic: the {len(OFF_TOPIC)} prompts of table b. "
        f"Replaying cached searches reproduces the uncached defaults row: {'yes' if replay_same else 'NO'}.\n"
    )
    print(table(HOOK_HEAD, [ungated.row(None), *(run.row(ungated) for run in default_runs)]))
    for min_score, runs in sweep.items():
        print(f"\n**min_score {min_score:.2f}** (min_ratio sweep)\n")
        print(table(["min_ratio", *HOOK_HEAD[1:]], [run.row(ungated) for run in runs.values()]))
        best = recommend(runs, ungated)
        print(
            f"\nLargest min_ratio with recall ≥ {RELATIVE_TARGET:.0%} of ungated and no off-topic injection: "
            + (f"{best:.2f}" if best is not None else "none")
        )
    if RECOMMEND_AT in sweep:
        best = recommend(sweep[RECOMMEND_AT], ungated)
        shown = f"{best:.2f}" if best is not None else "none"
        print(
            f"\n**Recommendation ({embedder_name}, min_score {RECOMMEND_AT:.2f}): min_ratio {shown}** "
            f"(embedder default now {embedder_min_ratio:.2f})."
        )

    print(f"\n## e. Abstention: no hits at all, and the gold section in `search(q, {ABSTAIN_DEPTH})`\n")
    print(
        table(
            ["queries", "n", "no hits (abstain off)", "no hits (abstain on)",
             f"gold in top {ABSTAIN_DEPTH} (off)", f"gold in top {ABSTAIN_DEPTH} (on)", "gold lost"],
            abstention,
        )
    )  # fmt: skip
    print(
        "\nOff-topic prompts abstention lets through: "
        + (
            "; ".join(
                f"{q!r} ({lexical} lexical matches, best cosine {dense:.3f})"
                for q, lexical, dense in off_not_refused
            )
            or "none"
        )
    )
    print("\nNonsense / foreign-topic queries (refused = no hits with abstention on):\n")
    print(
        table(
            ["query", "refused", "lexical matches in pool", "best dense cosine"],
            [[f"`{q}`", "yes" if refused else "no", lexical, f"{dense:.3f}"]
             for q, refused, lexical, dense in nonsense_detail],
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
