"""Fusion experiments on SciFact and the runbooks at once (issue 15): a fusion rule is only worth
shipping when it holds on both, so every candidate is scored on both from cached pools.

    .venv/bin/python bench/fusion_experiments.py cache-runbooks [--data-dir DIR]
    .venv/bin/python bench/fusion_experiments.py cache-scifact --data-dir DIR [--split train|test]
    .venv/bin/python bench/fusion_experiments.py eval [--split train] [--rm3 TAG] NAME[:JSON] ...
    .venv/bin/python bench/fusion_experiments.py sweep [--rm3 TAG] NAME[:JSON] --axis 'key=[...]' ...
    .venv/bin/python bench/fusion_experiments.py paired NAME[:JSON] NAME[:JSON]   # bootstrap CI, SciFact
    .venv/bin/python bench/fusion_experiments.py misses NAME[:JSON]               # runbook top-1 misses
    .venv/bin/python bench/fusion_experiments.py rm3 --tag TAG [--bench scifact runbooks] JSON

`cache-*` runs the real retrieval (`ragdown.search.hybrid.retrieve`, the pools `engine.search` takes:
60 deep for the runbooks' `search(q, 10)`, 400 for SciFact's `search(q, 100)`) once per query and
pickles the two pools into $FUSION_WORK (default /tmp/fusion); the SciFact index is the one
`bench/scifact.py --data-dir DIR` built. `eval` then fuses those pools the way `pipeline.fuse` does
(routed queries by the variant's routed setting, the alias boost for the others) and prints SciFact
nDCG@10 (a document ranks at its best chunk among the first 100) next to runbook top-1 (the 210
answerable questions, then per type), identifier first and alias first. Variants: `shipped` (RRF +
`ev` × evidence, lexical weight `w`, routed `routed_w`), `spec` (RRF, min–max for routed queries),
`pipeline` (the shipped `pipeline.fuse` with MiniLM's settings), `rrf`, `dense`, `lexical`,
`convex` (`(1 − w)` × cosine + `w` × BM25/top), `adaptive` / `aconvex`
(the evidence weight or the convex lexical weight following one query feature: `dgap`, `lgap`, …,
see `features`), `gap` (the rule of docs/search.md#evidence-follows-the-dense-gap), `wrrf` (weighted
RRF); `lam` adds a document's next-best chunk to each chunk's score. `rm3` runs a second BM25 pass
with terms from the first pass's best chunks (through `store.lexical`, as the pipeline would) and
caches it under TAG as a third pool (`rm3`) for `convex3` / `rm3only`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import paired_bootstrap
from ragdown.search.aliases import boost_aliases
from ragdown.search.filters import Prefilter, SearchFilters
from ragdown.search.fusion import (
    RRF_K,
    Candidate,
    Rankings,
    Retrieved,
    by_score,
    evidence,
    merge,
    rrf,
    rrf_with_evidence,
    score_fusion,
)
from ragdown.search.hybrid import pool_size, retrieve
from ragdown.search.routing import is_routed

WORK = Path(os.environ.get("FUSION_WORK", "/tmp/fusion"))
KEEP = ("id", "path", "title", "heading", "aliases")


def lite(rankings: Rankings) -> Rankings:
    return {
        side: [Retrieved({k: e.row.get(k, "") for k in KEEP}, e.similarity, e.raw) for e in ranked]
        for side, ranked in rankings.items()
    }


def save(name: str, value: Any) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    with (WORK / name).open("wb") as handle:
        pickle.dump(value, handle)


def load(name: str) -> Any:
    with (WORK / name).open("rb") as handle:
        return pickle.load(handle)


# --- caches ----------------------------------------------------------------------------------------


def pools(engine: Any, queries: list[str], limit: int) -> dict[str, Rankings]:
    prefilter = Prefilter(SearchFilters(), engine.store.superseded_paths())
    out: dict[str, Rankings] = {}
    for q in queries:
        if q not in out:
            vector = engine.embedder.embed_query(q)
            out[q] = lite(retrieve(engine.store, q, vector, pool_size(limit), prefilter))
    return out


def open_runbooks(data: Path) -> tuple[Any, Any, dict[str, Any]]:
    from runbooks import alias_probes, identifier_probes, open_index, standard_probes, write_corpora
    from runbooks_gen import generate

    corpus = generate()
    sets = {
        "standard": standard_probes(corpus, corpus.questions),
        "identifier": identifier_probes(corpus),
        "alias": alias_probes(corpus),
    }
    docs, aliased = write_corpora(corpus, Path(tempfile.mkdtemp(prefix="fusion-runbooks-")))
    engine, _, _ = open_index(docs, data / "runbooks", "minilm")
    alias_engine, _, _ = open_index(aliased, data / "aliased", "minilm")
    return engine, alias_engine, sets


def cmd_cache_runbooks(args: argparse.Namespace) -> None:
    data = args.data_dir or WORK / "runbooks-data"
    engine, alias_engine, sets = open_runbooks(data)
    probes = {name: [(p.q, p.path, p.breadcrumb, p.type) for p in ps] for name, ps in sets.items()}
    cached = {
        "standard": pools(engine, [p.q for p in sets["standard"]], 10),
        "identifier": pools(engine, [p.q for p in sets["identifier"]], 10),
        "alias": pools(alias_engine, [p.q for p in sets["alias"]], 10),
    }
    save("runbooks.pkl", {"probes": probes, "pools": cached})
    print({k: len(v) for k, v in probes.items()})


def scifact_engine(data_dir: Path) -> Any:
    from ragdown.engine import Engine
    from ragdown.indexing.embedders import create_embedder
    from scifact import write_corpus

    docs = Path(tempfile.mkdtemp(prefix="fusion-scifact-")) / "scifact"
    docs.mkdir()
    write_corpus(docs)
    engine = Engine(docs, data_dir, create_embedder("minilm"), source="minilm")
    engine.sync()
    return engine


def cmd_cache_scifact(args: argparse.Namespace) -> None:
    from scifact import load_queries

    engine = scifact_engine(args.data_dir)
    for split in args.split:
        queries, qrels = load_queries(split)
        started = time.perf_counter()
        cached = pools(engine, list(queries.values()), 100)
        save(f"scifact_{split}.pkl", {"queries": queries, "qrels": qrels, "pools": cached})
        print(f"{split}: {len(queries)} queries in {time.perf_counter() - started:.0f} s")
    engine.close()


# --- fusion variants -------------------------------------------------------------------------------

Fusion = Callable[[Rankings, str, dict[str, Any]], list[Candidate]]
VARIANTS: dict[str, Fusion] = {}


def variant(name: str) -> Callable[[Fusion], Fusion]:
    def register(func: Fusion) -> Fusion:
        VARIANTS[name] = func
        return func

    return register


@variant("rrf")
def _rrf(rankings: Rankings, _query: str, p: dict[str, Any]) -> list[Candidate]:
    return rrf(rankings, p.get("k", RRF_K))


@variant("lexical")
def _lexical_only(rankings: Rankings, _query: str, _p: dict[str, Any]) -> list[Candidate]:
    return rrf({"lexical": rankings.get("lexical", [])})


@variant("dense")
def _dense_only(rankings: Rankings, _query: str, _p: dict[str, Any]) -> list[Candidate]:
    return rrf({"dense": rankings["dense"]})


@variant("convex3")
def _convex3(rankings: Rankings, _query: str, p: dict[str, Any]) -> list[Candidate]:
    """Convex with the BM25 part mixed from the first and the expanded (rm3) pass."""
    w = p.get("routed_w", p.get("w", 0.3)) if p["_routed"] else p.get("w", 0.3)
    m = p.get("m", 0.5)
    a = evidence({k: v for k, v in rankings.items() if k != "rm3"}, 1.0)
    b = evidence({"dense": [], "lexical": rankings.get("rm3", [])}, 1.0)
    cands = merged(rankings)
    for c in cands:
        bm = (1 - m) * a.get(c.id, 0.0) + m * b.get(c.id, 0.0)
        c.score = (1 - w) * c.similarity + w * bm
    return by_score(cands)


@variant("rm3only")
def _rm3_only(rankings: Rankings, _query: str, _p: dict[str, Any]) -> list[Candidate]:
    return rrf({"lexical": rankings.get("rm3", [])})


@variant("aconvex")
def _aconvex(rankings: Rankings, query: str, p: dict[str, Any]) -> list[Candidate]:
    """Convex whose lexical weight follows a query feature: w = clip(w0 + s × (f − c), 0, 1)."""
    f = features(rankings, query)
    w = p.get("w", 0.3) + p.get("s", 0.0) * (f[p.get("feat", "lgap")] - p.get("c", 0.0))
    if p.get("feat2"):
        w += p.get("s2", 0.0) * (f[p["feat2"]] - p.get("c2", 0.0))
    w = min(1.0, max(0.0, w))
    s = evidence(rankings, w)
    cands = merged(rankings)
    for c in cands:
        c.score = s[c.id]
    return by_score(cands)


@variant("wrrf")
def _wrrf(rankings: Rankings, query: str, p: dict[str, Any]) -> list[Candidate]:
    """Weighted RRF (dense wd, lexical 2 − wd) plus evidence."""
    wd = p.get("wd", 1.0)
    weights = {"dense": wd, "lexical": 2 - wd}
    k = p.get("k", RRF_K)
    out = merge(rankings, lambda side, rank, _entry: weights.get(side, 0.0) / (k + rank + 1))
    ev = p.get("ev", 0.04)
    w = p.get("routed_w", 0.6) if p["_routed"] else p.get("w", 0.3)
    s = evidence(rankings, w)
    for c in out:
        c.score += ev * s[c.id]
    return by_score(out)


def names_alias(rankings: Rankings, query: str) -> bool:
    from ragdown.search.aliases import named_alias, row_aliases

    return any(named_alias(query, row_aliases(e.row)) for side in rankings.values() for e in side)


def ramp(x: float, lo: float, hi: float, a: float, b: float) -> float:
    """`a` at x ≤ lo, `b` at x ≥ hi, log-linear between."""
    t = min(1.0, max(0.0, (x - lo) / (hi - lo)))
    return math.exp(math.log(a) * (1 - t) + math.log(b) * t)


@variant("gap")
def _gap(rankings: Rankings, query: str, p: dict[str, Any]) -> list[Candidate]:
    """RRF + e × evidence, e following how far the dense top-1 stands above the top-10 (`dgap`):
    `flat` at gap ≤ lo, `clear` at gap ≥ hi. Routed queries: `ev_r`, `w_r` (fixed) unless `r_same`."""
    f = features(rankings, query)
    if p["_routed"] and not p.get("r_same"):
        ev, w = p.get("ev_r", 0.06), p.get("w_r", 0.5)
    else:
        ev = ramp(
            f[p.get("feat", "dgap")],
            p.get("lo", 0.1),
            p.get("hi", 0.2),
            p.get("flat", 2.0),
            p.get("clear", 0.005),
        )
        w = p.get("w_r", 0.5) if p["_routed"] else p.get("w", 0.3)
        if p.get("alias_rank") and names_alias(rankings, query):
            ev = p.get("alias_ev", p.get("clear", 0.005))
    p["_ev"], p["_w"] = ev, w
    return rrf_with_evidence(rankings, ev, w)


@variant("spec")
def _spec(rankings: Rankings, _query: str, p: dict[str, Any]) -> list[Candidate]:
    """Plain RRF; routed queries by min–max score fusion (what embedders without evidence get)."""
    return score_fusion(rankings) if p["_routed"] else rrf(rankings, p.get("k", RRF_K))


@variant("shipped")
def _shipped(rankings: Rankings, query: str, p: dict[str, Any]) -> list[Candidate]:
    w = p.get("routed_w", 0.6) if p["_routed"] else p.get("w", 0.3)
    return rrf_with_evidence(rankings, p.get("ev", 0.04), w, p.get("k", RRF_K))


def merged(rankings: Rankings) -> list[Candidate]:
    """One candidate per chunk, dense first, sources recorded, score 0."""
    return merge(rankings, lambda _side, _rank, _entry: 0.0)


@variant("convex")
def _convex(rankings: Rankings, _query: str, p: dict[str, Any]) -> list[Candidate]:
    w = p.get("routed_w", p.get("w", 0.3)) if p["_routed"] else p.get("w", 0.3)
    s = evidence(rankings, w)
    cands = merged(rankings)
    for c in cands:
        c.score = s[c.id]
    return by_score(cands)


def gap(values: list[float], k: int) -> float:
    if not values:
        return 0.0
    return values[0] - values[min(k, len(values)) - 1]


def features(rankings: Rankings, query: str) -> dict[str, float]:
    dense = [e.similarity for e in rankings.get("dense", [])]
    lex = [e.raw for e in rankings.get("lexical", [])]
    top = lex[0] if lex else 0.0
    return {
        "dcos1": dense[0] if dense else 0.0,
        "dgap": gap(dense, 10),
        "dgap2": gap(dense, 2),
        "lgap": gap(lex, 10) / top if top else 0.0,
        "lgap2": gap(lex, 2) / top if top else 0.0,
        "ltop": top,
        "ltopn": top / max(1, len(query.split())),
        "nterms": float(len(query.split())),
        "agree": float(
            bool(dense) and bool(lex) and rankings["dense"][0].row["id"] == rankings["lexical"][0].row["id"]
        ),
    }


@variant("adaptive")
def _adaptive(rankings: Rankings, query: str, p: dict[str, Any]) -> list[Candidate]:
    """RRF + evidence whose weight follows a query feature: ev = ev0 + ev1 × clamp((f − lo)/(hi − lo))."""
    f = features(rankings, query)[p.get("feat", "dgap")]
    lo, hi = p.get("lo", 0.0), p.get("hi", 0.2)
    t = min(1.0, max(0.0, (f - lo) / (hi - lo))) if hi != lo else 0.0
    if p.get("invert"):
        t = 1 - t
    ev = p.get("ev0", 0.0) + p.get("ev1", 0.1) * t
    w = p.get("routed_w", 0.6) if p["_routed"] else p.get("w", 0.3)
    return rrf_with_evidence(rankings, ev, w)


def with_document(fused: list[Candidate], lam: float, how: str = "next") -> list[Candidate]:
    """A chunk also gets `lam` × its document's other evidence: the next-best chunk's score (`next`) or the
    sum of the others (`sum`)."""
    if lam == 0:
        return fused
    per: dict[str, list[float]] = {}
    for c in fused:
        per.setdefault(c.path, []).append(c.score)
    out = []
    for c in fused:
        scores = per[c.path]
        if how == "sum":
            extra = sum(scores) - c.score
        else:
            others = sorted(scores, reverse=True)
            others.remove(c.score)
            extra = others[0] if others else 0.0
        out.append((c, c.score + lam * extra))
    for c, s in out:
        c.score = s
    return by_score(fused)


def minilm_settings() -> Any:
    """An embedder stand-in carrying MiniLM's measured search settings (no model loaded)."""
    from types import SimpleNamespace

    from ragdown.indexing.embedders.minilm import MINILM

    keys = ("score_evidence", "lexical_weight", "routed_lexical_weight", "gap_evidence")
    return SimpleNamespace(**{k: getattr(MINILM, k) for k in keys})


def with_headings(
    fused: list[Candidate], query: str, params: dict[str, Any], routed: bool
) -> list[Candidate]:
    """`head`: search/headings.boost_headings at that weight (`head_routed` false: not for routed queries)."""
    if params.get("title"):
        fused = with_titles(fused, query, params["title"], params.get("title_min", 1))
    if not params.get("head") or (routed and not params.get("head_routed", True)):
        return fused
    from ragdown.search.headings import boost_headings

    return boost_headings(fused, query, params["head"], params.get("head_min", 1))


def with_titles(fused: list[Candidate], query: str, weight: float, min_terms: int) -> list[Candidate]:
    """Each chunk plus `weight` × the share of the query's terms its document's title holds."""
    from ragdown.indexing.lexicon import ANALYZER

    terms = set(ANALYZER.terms(query))
    if not terms:
        return fused
    for c in fused:
        named = len(terms & set(ANALYZER.terms(str(c.row["title"]))))
        c.score += weight * named / len(terms) if named >= min_terms else 0.0
    return by_score(fused)


def fuse(
    name: str, params: dict[str, Any], rankings: Rankings, query: str, alias_boost: bool = True
) -> list[Candidate]:
    if name == "pipeline":  # the shipped rule itself, with MiniLM's measured settings
        from ragdown.search import pipeline
        from ragdown.search.policy import SearchPolicy

        policy = SearchPolicy(**params.get("policy", {}))
        fused, routed = pipeline.fuse(rankings, query, policy, minilm_settings())
        return with_headings(fused, query, params, routed)
    routed = is_routed(query)
    p = {**params, "_routed": routed}
    if routed and "routed" in params:
        sub = params["routed"]
        return VARIANTS[sub.get("name", name)](rankings, query, {**sub, "_routed": True})
    fused = VARIANTS[name](rankings, query, p)
    if params.get("lam"):
        fused = with_document(fused, params["lam"], params.get("how", "next"))
    fused = with_headings(fused, query, params, routed)
    if routed or not alias_boost:
        return fused
    if params.get("alias_scaled") and "_ev" in p:  # one rank-1 share: RRF's plus the BM25 top's evidence
        from ragdown.search import aliases as aliases_module

        old = aliases_module.ALIAS_BOOST
        aliases_module.ALIAS_BOOST = old + p["_ev"] * p["_w"]
        try:
            return boost_aliases(fused, query)
        finally:
            aliases_module.ALIAS_BOOST = old
    return boost_aliases(fused, query)


# --- metrics ---------------------------------------------------------------------------------------


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def doc_ranking(cands: list[Candidate], limit: int = 100) -> list[str]:
    seen: dict[str, None] = {}
    for c in cands[:limit]:
        seen.setdefault(Path(c.path).stem, None)
    return list(seen)


@dataclass
class Result:
    scifact: float
    standard: float
    identifier: float
    alias: float
    by_type: dict[str, float]

    def line(self) -> str:
        return (
            f"scifact {self.scifact:.4f}  runbook top-1 {self.standard:.3f} ({round(self.standard * 210)})  "
            f"ident {self.identifier:.3f}  alias {self.alias:.3f}  "
            + " ".join(f"{t[:6]}={v:.2f}" for t, v in self.by_type.items())
        )


def crumb(row: dict[str, Any]) -> str:
    from ragdown.documents.chunks import breadcrumb

    return breadcrumb(row["title"], row["heading"])


def first_is_gold(cands: list[Candidate], path: str, want: str) -> bool:
    if not cands:
        return False
    c = cands[0]
    got = crumb(c.row)
    return c.path == path and (got == want or got.startswith(want + " ›"))


class Bench:
    def __init__(self, split: str, rm3: str | None = None) -> None:
        self.runbooks = load("runbooks.pkl")
        have = (WORK / f"scifact_{split}.pkl").exists()
        self.scifact = load(f"scifact_{split}.pkl") if have else {"queries": {}, "qrels": {}, "pools": {}}
        if rm3:
            for name in ("standard", "identifier", "alias"):
                if (WORK / f"rm3_{rm3}_rb_{name}.pkl").exists():
                    self.runbooks["pools"][name] = load(f"rm3_{rm3}_rb_{name}.pkl")
            if (WORK / f"rm3_{rm3}_scifact_{split}.pkl").exists():
                self.scifact["pools"] = load(f"rm3_{rm3}_scifact_{split}.pkl")

    def scifact_ndcg(self, name: str, params: dict[str, Any], per_query: bool = False) -> Any:
        values = []
        for qid, text in self.scifact["queries"].items():
            fused = fuse(name, params, self.scifact["pools"][text], text)
            values.append(ndcg_at(doc_ranking(fused), self.scifact["qrels"][qid]))
        return values if per_query else sum(values) / max(1, len(values))

    def runbook_hits(self, name: str, params: dict[str, Any], which: str) -> list[tuple[str, bool]]:
        pools_ = self.runbooks["pools"][which]
        out = []
        for q, path, want, kind in self.runbooks["probes"][which]:
            fused = fuse(name, params, pools_[q], q)
            out.append((kind, first_is_gold(fused, path, want)))
        return out

    def run(self, name: str, params: dict[str, Any]) -> Result:
        std = self.runbook_hits(name, params, "standard")
        by_type: dict[str, list[bool]] = {}
        for kind, ok in std:
            by_type.setdefault(kind, []).append(ok)
        ident = self.runbook_hits(name, params, "identifier")
        alias = self.runbook_hits(name, params, "alias")
        return Result(
            self.scifact_ndcg(name, params),
            sum(ok for _, ok in std) / len(std),
            sum(ok for _, ok in ident) / len(ident),
            sum(ok for _, ok in alias) / len(alias),
            {t: sum(v) / len(v) for t, v in by_type.items()},
        )


def parse(spec: str) -> tuple[str, dict[str, Any]]:
    name, _, rest = spec.partition(":")
    return name, (json.loads(rest) if rest else {})


def cmd_eval(args: argparse.Namespace) -> None:
    bench = Bench(args.split, args.rm3)
    for spec in args.configs:
        name, params = parse(spec)
        print(f"{bench.run(name, params).line()}  {spec}", flush=True)


def cmd_sweep(args: argparse.Namespace) -> None:
    bench = Bench(args.split, args.rm3)
    name, base = parse(args.base)
    configs = [dict(base)]
    for axis in args.axis:
        key, _, values = axis.partition("=")
        configs = [{**c, key: v} for c in configs for v in json.loads(values)]
    for cfg in configs:
        print(f"{bench.run(name, cfg).line()}  {json.dumps(cfg)}", flush=True)


def cmd_paired(args: argparse.Namespace) -> None:
    """Paired bootstrap of SciFact nDCG@10 between two configurations (per query)."""
    import numpy as np

    bench = Bench(args.split, args.rm3)
    a = np.array(bench.scifact_ndcg(*parse(args.a), per_query=True))
    b = np.array(bench.scifact_ndcg(*parse(args.b), per_query=True))
    print(paired_bootstrap(a, b))


def cmd_misses(args: argparse.Namespace) -> None:
    bench = Bench(args.split)
    name, params = parse(args.config)
    pools_ = bench.runbooks["pools"]["standard"]
    counts: Counter[str] = Counter()
    for q, path, want, kind in bench.runbooks["probes"]["standard"]:
        fused = fuse(name, params, pools_[q], q)
        if not first_is_gold(fused, path, want):
            counts[kind] += 1
            rank = next(
                (i + 1 for i, c in enumerate(fused[:10]) if c.path == path and crumb(c.row).startswith(want)),
                None,
            )
            top = fused[0]
            f = features(pools_[q], q)
            print(
                f"[{kind}] {q!r} gold {want} at {rank}; first {top.path} {crumb(top.row)} "
                f"(cos {top.similarity:.2f}) dgap {f['dgap']:.3f} lgap {f['lgap']:.2f}"
            )
    print(counts)


# --- RM3: a second BM25 pass with terms from the first pass's best chunks -------------------------

STOP = set(
    """a an and are as at be but by for if in into is it no not of on or such that the their then there
    these they this to was will with we our us you your he she his her its from have has had were
    been being which who whom what when where why how all any both each few more most other some
    than too very can could may might must shall should would do does did done also only same so
    just over under between after before during about above below up down out off again further once
    here both whether while""".split()  # noqa: SIM905 - a word list, not 100 lines of literals
)


def words(text: str) -> list[str]:
    import re

    return [
        w for w in re.findall(r"[^\W_]+", text.lower()) if len(w) > 2 and w not in STOP and not w.isdigit()
    ]


def expand(
    query: str, feedback: list[tuple[str, float]], terms: int, orig: int, idf: Callable[[str], float] | None
) -> str:
    """RM3-style: P(w|R) = Σ_d P(w|d) · weight(d), optionally × idf(w); the top `terms` words not in the query
    are appended once each after the query repeated `orig` times (repetition = weight in LanceDB's BM25)."""
    mass: defaultdict[str, float] = defaultdict(float)
    total = sum(w for _, w in feedback) or 1.0
    for text, weight in feedback:
        ws = words(text)
        if not ws:
            continue
        for w, n in Counter(ws).items():
            mass[w] += n / len(ws) * weight / total
    qwords = set(words(query))
    if idf is not None:
        mass = defaultdict(float, {w: m * idf(w) for w, m in mass.items()})
    ranked = sorted(mass.items(), key=lambda item: item[1], reverse=True)  # as Counter.most_common orders
    picked = [w for w, _ in ranked if w not in qwords][:terms]
    return " ".join([query] * orig + picked)


def cmd_rm3(args: argparse.Namespace) -> None:
    """Second-pass lexical pools for SciFact (and the runbooks) under one RM3 setting, cached for `eval`."""
    from ragdown.search.hybrid import _lexical_ranking, _lexical_rows

    cfg = json.loads(args.config)
    tag = args.tag
    targets: list[tuple[str, Any, dict[str, Rankings]]] = []
    if "scifact" in args.bench:
        engine = scifact_engine(args.data_dir)
        cached = load(f"scifact_{args.split}.pkl")
        targets.append((f"scifact_{args.split}", engine, cached["pools"]))
    if "runbooks" in args.bench:
        rb_engine, alias_engine, _ = open_runbooks(WORK / "runbooks-data")
        rb = load("runbooks.pkl")["pools"]
        targets += [
            ("rb_standard", rb_engine, rb["standard"]),
            ("rb_identifier", rb_engine, rb["identifier"]),
        ]
        targets.append(("rb_alias", alias_engine, rb["alias"]))
    for name, engine, pools_ in targets:
        table = engine.store.table.search().select(["id", "text", "title", "heading"]).limit(None).to_arrow()
        text_of = dict(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True))
        n_docs = len(text_of)
        df: Counter[str] = Counter()
        if cfg.get("idf") == "corpus":
            for t in text_of.values():
                df.update(set(words(t)))
        out: dict[str, Rankings] = {}
        started = time.perf_counter()
        for q, rankings in pools_.items():
            if cfg.get("source", "fused") == "lexical":
                ranked = [(e.row["id"], e.raw) for e in rankings.get("lexical", [])]
            else:
                fused = fuse(
                    cfg.get("fusion", "shipped"), cfg.get("params", {}), rankings, q, alias_boost=False
                )
                ranked = [(c.id, c.score) for c in fused]
            top = ranked[: cfg.get("docs", 5)]
            if cfg.get("weights") == "flat":
                fb = [(text_of[i], 1.0) for i, _ in top]
            else:
                hi = top[0][1] if top else 1.0
                fb = [(text_of[i], s / hi) for i, s in top]
            idf = None
            if cfg.get("idf") == "corpus":
                idf = lambda w, df=df, n_docs=n_docs: math.log(1 + n_docs / (1 + df[w]))  # noqa: E731
            elif cfg.get("idf") == "pool":
                pool_ids = {e.row["id"] for side in rankings.values() for e in side}
                pdf: Counter[str] = Counter()
                for i in pool_ids:
                    pdf.update(set(words(text_of[i])))
                n_pool = len(pool_ids)
                idf = lambda w, pdf=pdf, n_pool=n_pool: math.log(1 + n_pool / (1 + pdf[w]))  # noqa: E731
            expanded = expand(q, fb, cfg.get("terms", 10), cfg.get("orig", 2), idf)
            vector = engine.embedder.embed_query(q)
            n = len(rankings.get("lexical", [])) or len(rankings["dense"])
            pool = max(n, len(rankings["dense"]))
            rows = _lexical_rows(engine.store, expanded, pool, None, None)
            second = lite({"lexical": _lexical_ranking(rows, vector, None)})
            out[q] = {**rankings, "rm3": second["lexical"] or rankings.get("lexical", [])}
        ms = (time.perf_counter() - started) / max(1, len(pools_)) * 1000
        save(f"rm3_{tag}_{name}.pkl", out)
        print(f"{name}: {len(out)} queries, {ms:.1f} ms/query; e.g. {expanded[:200]!r}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("cache-runbooks")
    p.add_argument("--data-dir", type=Path)
    p.set_defaults(func=cmd_cache_runbooks)
    p = sub.add_parser("cache-scifact")
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--split", nargs="+", default=["train"], choices=["train", "test"])
    p.set_defaults(func=cmd_cache_scifact)
    p = sub.add_parser("eval")
    p.add_argument("--split", default="train", choices=["train", "test"])
    p.add_argument("--rm3", help="use the second-pass lexical pools cached under this tag")
    p.add_argument("configs", nargs="+")
    p.set_defaults(func=cmd_eval)
    p = sub.add_parser("sweep")
    p.add_argument("--split", default="train", choices=["train", "test"])
    p.add_argument("--rm3", help="use the second-pass lexical pools cached under this tag")
    p.add_argument("base")
    p.add_argument("--axis", action="append", default=[])
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser("rm3")
    p.add_argument("--data-dir", type=Path, default=Path("/tmp/wtq/scifact-data"))
    p.add_argument("--split", default="train", choices=["train", "test"])
    p.add_argument("--bench", nargs="+", default=["scifact", "runbooks"])
    p.add_argument("--tag", required=True)
    p.add_argument("config")
    p.set_defaults(func=cmd_rm3)
    p = sub.add_parser("paired")
    p.add_argument("--split", default="train", choices=["train", "test"])
    p.add_argument("--rm3", help="use the second-pass lexical pools cached under this tag")
    p.add_argument("a")
    p.add_argument("b")
    p.set_defaults(func=cmd_paired)
    p = sub.add_parser("misses")
    p.add_argument("--split", default="train", choices=["train", "test"])
    p.add_argument("config")
    p.set_defaults(func=cmd_misses)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
