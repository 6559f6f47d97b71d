"""The generated runbook corpus of mcp-ragdown's `scripts/bench/gen.ts`, ported bit for bit.

    .venv/bin/python bench/runbooks_gen.py OUT_DIR

writes OUT_DIR/{md,html,txt}/<slug>.<fmt> and OUT_DIR/questions.json exactly as gen.ts does.

30 service runbooks ("Kestrel Ingest", ...) from one document model, with gold-answered questions
(7 types x 30, plus 30 unanswerable), harder corpus-wide questions and edit tasks. The random
draws must happen in gen.ts's order, one LCG call at a time, so that the questions (and with them
every number measured on them) stay comparable with the TypeScript benchmarks: never reorder a
draw, and never draw where gen.ts does not.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

Fmt = Literal["md", "html", "txt"]
FORMATS: tuple[Fmt, ...] = ("md", "html", "txt")
BREADCRUMB = " › "

T = TypeVar("T")


class Lcg:
    """gen.ts's generator. JS runs it in float64, where seed × 1103515245 can pass 2**53 and round;
    exact integer arithmetic would drift from the reference after a few draws, so do it in floats."""

    def __init__(self, seed: int = 1234567) -> None:
        self.seed = float(seed)

    def rnd(self) -> float:
        self.seed = math.fmod(self.seed * 1103515245.0 + 12345.0, 2147483648.0)
        return self.seed / 2147483648.0

    def pick(self, items: Sequence[T]) -> T:
        return items[math.floor(self.rnd() * len(items))]

    def int(self, lo: int, hi: int) -> int:
        return lo + math.floor(self.rnd() * (hi - lo + 1))

    def shuffle(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = math.floor(self.rnd() * (i + 1))
            out[i], out[j] = out[j], out[i]
        return out


# ---------- document model ----------
# Inline runs are (kind, text) with kind "text", "strong" or "code"; blocks are dicts keyed as in
# gen.ts ({"k": "p", "c": [...]}, {"k": "table", "head", "rows"}, ...), which keeps the port literal.
Inline = list[tuple[str, str]]
Block = dict[str, Any]


@dataclass
class Section:
    key: str
    path: list[str]  # heading path below the title
    blocks: list[Block]


@dataclass
class Doc:
    slug: str
    title: str
    tags: list[str]
    sections: list[Section]  # leaf sections in document order; parents have no own blocks

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)

    def breadcrumb(self, key: str) -> str:
        """`Title › Section…`: what a chunk of that section carries as its heading."""
        return BREADCRUMB.join([self.title, *self.section(key).path])


@dataclass
class Question:
    id: str
    type: str
    doc: str
    section: str | None  # gold section key; None = unanswerable
    q: str
    gold: list[str]  # any accepted
    numeric: bool | None = False  # None: the key is absent, as in gen.ts's multi-hop and step-after

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "doc": self.doc,
            "section": self.section,
            "q": self.q,
            "gold": self.gold,
        }
        if self.numeric is not None:
            out["numeric"] = self.numeric
        return out


@dataclass
class EditTask:
    id: str
    type: str
    doc: str
    instruction: str
    section: str
    expect: list[str]  # must appear in the section after the edit
    apply: Callable[[Doc], None]
    gone: str | None = None  # must no longer appear in the section

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "doc": self.doc,
            "section": self.section,
            "instruction": self.instruction,
            "expect": self.expect,
        }
        if self.gone is not None:
            out["gone"] = self.gone
        return out


@dataclass
class Corpus:
    docs: list[Doc] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    edits: list[EditTask] = field(default_factory=list)
    hard_questions: list[Question] = field(default_factory=list)

    def doc(self, slug: str) -> Doc:
        return next(d for d in self.docs if d.slug == slug)


def _t(v: str) -> tuple[str, str]:
    return ("text", v)


def _s(v: str) -> tuple[str, str]:
    return ("strong", v)


def _c(v: str) -> tuple[str, str]:
    return ("code", v)


def block_at(doc: Doc, section: int, block: int, kind: str) -> Block:
    found = doc.sections[section].blocks[block]
    if found["k"] != kind:
        raise ValueError(f"{doc.slug}: no {kind} block at section {section}, block {block}")
    return found


# ---------- renderers ----------
def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _inline(c: Inline, f: Fmt) -> str:
    out = []
    for kind, v in c:
        if f == "md":
            out.append(f"**{v}**" if kind == "strong" else f"`{v}`" if kind == "code" else v)
        elif f == "html":
            out.append(
                f"<strong>{_esc(v)}</strong>"
                if kind == "strong"
                else f"<code>{_esc(v)}</code>"
                if kind == "code"
                else _esc(v)
            )
        else:
            out.append(v)
    return "".join(out)


def render_blocks(blocks: list[Block], f: Fmt, ind: str = "") -> str:
    out: list[str] = []
    for b in blocks:
        k = b["k"]
        if k == "p":
            out.append(f"{ind}<p>{_inline(b['c'], f)}</p>" if f == "html" else _inline(b["c"], f))
        elif k == "table":
            head, rows = b["head"], b["rows"]
            if f == "md":
                lines = [f"| {' | '.join(head)} |", f"|{'|'.join('---' for _ in head)}|"]
                lines += [f"| {' | '.join(r)} |" for r in rows]
                out.append("\n".join(lines))
            elif f == "html":
                i2 = f"{ind}  "
                i3 = f"{i2}  "
                header = "".join(f'<th scope="col">{_esc(h)}</th>' for h in head)
                lines = [
                    f"{ind}<table>",
                    f"{i2}<thead>",
                    f"{i3}<tr>{header}</tr>",
                    f"{i2}</thead>",
                    f"{i2}<tbody>",
                ]
                for r in rows:
                    cells = "".join(f"<td>{_esc(c)}</td>" for c in r[1:])
                    lines.append(f'{i3}<tr><th scope="row">{_esc(r[0] if r else "")}</th>{cells}</tr>')
                lines += [f"{i2}</tbody>", f"{ind}</table>"]
                out.append("\n".join(lines))
            else:
                out.append("\n".join(["\t".join(head), *("\t".join(r) for r in rows)]))
        elif k == "ol":
            if f == "html":
                items = [f"{ind}  <li>{_inline(it, f)}</li>" for it in b["items"]]
                out.append("\n".join([f"{ind}<ol>", *items, f"{ind}</ol>"]))
            else:
                out.append("\n".join(f"{i + 1}. {_inline(it, f)}" for i, it in enumerate(b["items"])))
        elif k == "deps":
            if f == "md":
                out.append(
                    "\n".join(
                        "\n".join([f"- **{d['name']}**", *(f"  - {k2}: {v}" for k2, v in d["kv"])])
                        for d in b["items"]
                    )
                )
            elif f == "html":
                lines = [f"{ind}<ul>"]
                for d in b["items"]:
                    lines += [
                        f"{ind}  <li>",
                        f"{ind}    <strong>{_esc(d['name'])}</strong>",
                        f"{ind}    <dl>",
                    ]
                    lines += [f"{ind}      <dt>{_esc(k2)}</dt><dd>{_esc(v)}</dd>" for k2, v in d["kv"]]
                    lines += [f"{ind}    </dl>", f"{ind}  </li>"]
                lines.append(f"{ind}</ul>")
                out.append("\n".join(lines))
            else:
                out.append(
                    "\n".join(
                        "\n".join([d["name"], *(f"  {k2}: {v}" for k2, v in d["kv"])]) for d in b["items"]
                    )
                )
        elif k == "code":
            if f == "md":
                out.append(f"```{b['lang']}\n{b['text']}\n```")
            elif f == "html":
                out.append(f'{ind}<pre><code class="language-{b["lang"]}">{_esc(b["text"])}</code></pre>')
            else:
                out.append(b["text"])
        elif k == "incidents":
            if f == "md":
                out.append("\n".join(f"- {x['date']}: {x['text']}" for x in b["items"]))
            elif f == "html":
                items = [
                    f'{ind}  <li><time datetime="{x["date"]}">{x["date"]}</time>: {_esc(x["text"])}</li>'
                    for x in b["items"]
                ]
                out.append("\n".join([f"{ind}<ul>", *items, f"{ind}</ul>"]))
            else:
                out.append("\n".join(f"{x['date']}: {x['text']}" for x in b["items"]))
    return ("\n" if f == "html" else "\n\n").join(out)


def _id_of(path: list[str]) -> str:
    return "--".join(re.sub(r"[^a-z0-9]+", "-", x.lower()) for x in path)


def render_doc(doc: Doc, f: Fmt) -> str:
    if f in ("md", "txt"):
        lines = (
            ["---", f"title: {doc.title}", f"tags: [{', '.join(doc.tags)}]", "---", f"# {doc.title}", ""]
            if f == "md"
            else [doc.title, ""]
        )
        prev: list[str] = []
        for s in doc.sections:
            for depth, h in enumerate(s.path):
                # gen.ts compares the parents with Array.join(), i.e. comma-joined strings
                if (
                    depth < len(prev)
                    and prev[depth] == h
                    and ",".join(prev[:depth]) == ",".join(s.path[:depth])
                ):
                    continue
                lines += [f"{'#' * (depth + 2)} {h}" if f == "md" else h, ""]
            prev = s.path
            lines += [render_blocks(s.blocks, f), ""]
        return "\n".join(lines)
    # strict semantic HTML: nested <section>s, labelled by their headings
    out = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '  <meta charset="utf-8">',
        f"  <title>{_esc(doc.title)}</title>",
        f'  <meta name="keywords" content="{", ".join(doc.tags)}">',
        "</head>",
        "<body>",
        "<main>",
        "<article>",
        "  <header>",
        f"    <h1>{_esc(doc.title)}</h1>",
        "  </header>",
    ]
    open_: list[str] = []
    for s in doc.sections:
        common = 0
        while common < len(open_) and common < len(s.path) and open_[common] == s.path[common]:
            common += 1
        while len(open_) > common:
            open_.pop()
            out.append(f"{'  ' * (len(open_) + 1)}</section>")
        for d in range(common, len(s.path)):
            id_ = _id_of(s.path[: d + 1])
            ind = "  " * (d + 1)
            out += [
                f'{ind}<section id="{id_}" aria-labelledby="{id_}-h">',
                f'{ind}  <h{d + 2} id="{id_}-h">{_esc(s.path[d])}</h{d + 2}>',
            ]
            open_.append(s.path[d])
        out.append(render_blocks(s.blocks, "html", "  " * (len(s.path) + 1)))
    while open_:
        open_.pop()
        out.append(f"{'  ' * (len(open_) + 1)}</section>")
    out += ["</article>", "</main>", "</body>", "</html>", ""]
    return "\n".join(out)


# ---------- generation ----------
BIRDS = [
    "Kestrel",
    "Osprey",
    "Heron",
    "Marten",
    "Lynx",
    "Puffin",
    "Wren",
    "Bittern",
    "Ibis",
    "Stoat",
    "Vole",
    "Tern",
    "Egret",
    "Merlin",
    "Plover",
    "Shrike",
    "Curlew",
    "Dunlin",
    "Gannet",
    "Linnet",
    "Ermine",
    "Otter",
    "Badger",
    "Petrel",
    "Avocet",
    "Godwit",
    "Siskin",
    "Whimbrel",
    "Pipit",
    "Crake",
]
ROLES = [
    "Ingest",
    "Gateway",
    "Billing",
    "Scheduler",
    "Indexer",
    "Notifier",
    "Ledger",
    "Router",
    "Archiver",
    "Resolver",
]
PURPOSE = {
    "Ingest": "accepts event batches from edge collectors and writes them to the event log",
    "Gateway": "terminates client connections and routes API calls to internal services",
    "Billing": "computes usage charges and emits invoices at the end of each cycle",
    "Scheduler": "places recurring jobs onto worker pools and tracks their leases",
    "Indexer": "builds search indexes from the event log and publishes snapshots",
    "Notifier": "fans out email, SMS and push notifications with per-tenant rate limits",
    "Ledger": "keeps the double-entry record of account balances",
    "Router": "decides which region serves each tenant and rewrites requests accordingly",
    "Archiver": "moves cold data to object storage and serves restores",
    "Resolver": "maps customer identifiers across legacy and current account systems",
}
TEAMS = [
    "Harbor",
    "Lantern",
    "Quarry",
    "Meridian",
    "Foundry",
    "Beacon",
    "Orchard",
    "Summit",
    "Tidewater",
    "Juniper",
]
FIRST = [
    "Priya",
    "Tomasz",
    "Adaeze",
    "Hiroshi",
    "Marisol",
    "Kwame",
    "Ingrid",
    "Rafael",
    "Soo-jin",
    "Dmitri",
    "Leilani",
    "Olumide",
    "Freya",
    "Anand",
    "Catalina",
    "Bogdan",
    "Yuki",
    "Tendai",
    "Margit",
    "Emeka",
]
LAST = [
    "Okonkwo",
    "Lindqvist",
    "Ferreira",
    "Nakashima",
    "Abernathy",
    "Castellanos",
    "Varga",
    "Mbeki",
    "Halvorsen",
    "Iyer",
    "Dubois",
    "Kowalczyk",
    "Achterberg",
    "Rosales",
    "Takahashi",
    "Ndlovu",
]
LANGS = ["Go", "Rust", "Kotlin", "Elixir", "TypeScript", "Java", "Python"]
DEPS: list[tuple[str, str]] = [
    ("postgres", "primary relational store"),
    ("redis", "lease and rate-limit cache"),
    ("kafka", "event log transport"),
    ("nats", "internal request bus"),
    ("elasticsearch", "search backend"),
    ("clickhouse", "analytics store"),
    ("etcd", "leader election"),
    ("minio", "object storage"),
]
CAUSE_A = [
    "an expired TLS certificate",
    "an exhausted connection pool",
    "a runaway cron job",
    "a misconfigured feature flag",
    "clock skew",
    "a full disk",
    "leaked file descriptors",
    "a stale config map",
    "a bad schema migration",
    "a retry storm",
]
CAUSE_B = [
    "on the metrics sidecar",
    "in the eu-west replica",
    "after the 4.2 release",
    "on the batch workers",
    "in the primary region",
    "during nightly compaction",
]
MEM = ["256Mi", "512Mi", "768Mi", "1Gi", "2Gi", "3Gi", "4Gi", "6Gi", "8Gi", "12Gi"]
DB = [
    "db.t3.medium",
    "db.t4g.large",
    "db.m6g.large",
    "db.m6g.xlarge",
    "db.r6g.large",
    "db.r6g.xlarge",
    "db.r6g.2xlarge",
    "db.r7g.4xlarge",
]
CONFIG_NOTE = "Values per environment. Change them through the deploy config, never by hand."
WINDOWS = [
    "Tuesday 14:00–16:00 UTC",
    "Wednesday 09:00–11:00 UTC",
    "Thursday 13:00–15:00 UTC",
    "Monday 15:00–17:00 UTC",
]


def _settings_rows(r: Lcg) -> list[list[str]]:
    """The Configuration table; each row's draws in gen.ts's left-to-right order."""
    rows = [["Replicas", str(r.int(1, 4)), str(r.int(6, 48))]]
    a = r.int(0, 4)
    rows.append(["Memory limit", MEM[a], MEM[r.int(a + 2, 9)]])
    rows.append(["Queue timeout", f"{r.int(2, 9) * 5}s", f"{r.int(10, 36) * 5}s"])
    rows.append(["Max batch size", str(r.int(1, 9) * 50), str(r.int(10, 80) * 50)])
    a = r.int(0, 3)
    rows.append(["DB instance class", DB[a], DB[r.int(a + 2, 7)]])
    return rows


def _version(r: Lcg) -> str:
    return f"{r.int(3, 17)}.{r.int(0, 9)}.{r.int(0, 12)}"


def generate() -> Corpus:
    """The whole corpus, from a fresh generator: the same result on every call."""
    r = Lcg()
    corpus = Corpus()
    causes = r.shuffle([f"{a} {b}" for a in CAUSE_A for b in CAUSE_B])
    names = r.shuffle([f"{f} {last}" for f in FIRST for last in LAST])
    roles = r.shuffle([ROLES[i % len(ROLES)] for i in range(len(BIRDS))])

    for i, bird in enumerate(BIRDS):
        role = roles[i]
        title = f"{bird} {role}"
        slug = f"{bird}-{role}".lower()
        team = r.pick(TEAMS)
        year = r.int(2014, 2023)
        lang = r.pick(LANGS)
        approver_s = names.pop()
        approver_p = names.pop()
        rows = _settings_rows(r)
        health_port = r.int(8000, 8999)
        metrics_port = r.int(9000, 9999)
        cmds = [
            f"veltra build {slug}",
            f"veltra migrate {slug}",
            f"veltra smoke {slug}",
            f"veltra snapshot db-{slug}",
            f"veltra canary {slug} --percent=5",
            f"veltra promote {slug}",
            f"veltra drain {slug}",
            f"veltra notify #{team.lower()}-deploys",
        ]
        prod_steps = r.shuffle(cmds)[:6]
        staging_steps = r.shuffle(prod_steps)[:4]
        shuffled_deps = r.shuffle(DEPS)  # gen.ts shuffles before it draws the count
        deps = [
            {"name": n, "kv": [("version", _version(r)), ("purpose", p)]}
            for n, p in shuffled_deps[: r.int(3, 4)]
        ]
        inc = []
        for _ in range(2):
            date = f"20{r.int(21, 25)}-{r.int(1, 12):02d}-{r.int(1, 28):02d}"
            inc.append({"date": date, "cause": causes.pop()})
        window = r.pick(WINDOWS)
        staging_p = f"Staging deploys run on every merge to main. Approval comes from {approver_s}."
        production_p = f"Production deploys need sign-off from {approver_p} and run only {window}."

        doc = Doc(
            slug,
            title,
            ["runbook", role.lower()],
            [
                Section(
                    "overview",
                    ["Overview"],
                    [
                        {
                            "k": "p",
                            "c": [
                                _t(f"{title} {PURPOSE[role]}. It is owned by the "),
                                _s(team),
                                _t(f" team and was first deployed in {year}."),
                            ],
                        },
                        {
                            "k": "p",
                            "c": [
                                _t(f"The service is written in {lang}. Its on-call rotation pages "),
                                _c(f"#{slug}-oncall"),
                                _t("."),
                            ],
                        },
                    ],
                ),
                Section(
                    "config",
                    ["Configuration"],
                    [
                        {
                            "k": "p",
                            "c": [_t(CONFIG_NOTE)],
                        },
                        {"k": "table", "head": ["Setting", "Staging", "Production"], "rows": rows},
                    ],
                ),
                Section(
                    "deploy-staging",
                    ["Deployment", "Staging"],
                    [
                        {
                            "k": "p",
                            "c": [_t(staging_p)],
                        },
                        {"k": "ol", "items": [[_t("Run "), _c(c), _t(".")] for c in staging_steps]},
                    ],
                ),
                Section(
                    "deploy-production",
                    ["Deployment", "Production"],
                    [
                        {
                            "k": "p",
                            "c": [_t(production_p)],
                        },
                        {"k": "ol", "items": [[_t("Run "), _c(c), _t(".")] for c in prod_steps]},
                    ],
                ),
                Section("deps", ["Dependencies"], [{"k": "deps", "items": deps}]),
                Section(
                    "troubleshooting",
                    ["Troubleshooting"],
                    [
                        {
                            "k": "p",
                            "c": [_t("Check liveness first, then scrape metrics to see queue depth.")],
                        },
                        {
                            "k": "code",
                            "lang": "sh",
                            "text": f"curl -s http://localhost:{health_port}/healthz\n"
                            f"curl -s http://localhost:{metrics_port}/metrics | grep queue_depth\n"
                            f'journalctl -u {slug} --since "1 hour ago"',
                        },
                    ],
                ),
                Section(
                    "incidents",
                    ["Incidents"],
                    [
                        {
                            "k": "incidents",
                            "items": [
                                {"date": x["date"], "text": f"Outage caused by {x['cause']}."} for x in inc
                            ],
                        }
                    ],
                ),
            ],
        )
        corpus.docs.append(doc)

        def add(type_: str, section: str | None, q: str, gold: list[str], numeric: bool = False) -> None:
            corpus.questions.append(Question(f"{slug}:{type_}", type_, slug, section, q, gold, numeric))  # noqa: B023

        add("prose-owner", "overview", f"Which team owns {title}?", [team])
        row = r.pick(rows)
        env = 1 if r.rnd() < 0.5 else 2
        add(
            "table-cell",
            "config",
            f"What is the {'staging' if env == 1 else 'production'} {row[0].lower()} for {title}?",
            [row[env]],
        )
        scoped_prod = r.rnd() < 0.5
        add(
            "scoped-section",
            "deploy-production" if scoped_prod else "deploy-staging",
            f"Who approves {'production' if scoped_prod else 'staging'} deploys of {title}?",
            [approver_p if scoped_prod else approver_s],
        )
        dep = r.pick(deps)
        add(
            "nested-list",
            "deps",
            f"Which version of {dep['name']} does {title} depend on?",
            [dep["kv"][0][1]],
        )
        shared = staging_steps[r.int(0, 3)]
        step_prod = r.rnd() < 0.5
        steps = prod_steps if step_prod else staging_steps
        add(
            "ordered-step",
            "deploy-production" if step_prod else "deploy-staging",
            f"In the {'production' if step_prod else 'staging'} deployment of {title}, "
            f"which step number runs `{shared}`?",
            [str(steps.index(shared) + 1)],
            True,
        )
        add(
            "code-block",
            "troubleshooting",
            f"Which local port does the {title} health check (healthz) use?",
            [str(health_port)],
            True,
        )
        incident = r.pick(inc)
        add(
            "reverse-lookup",
            "incidents",
            f"Which service had an outage caused by {incident['cause']}?",
            [title],
        )
        add(
            "unanswerable",
            None,
            f"What canary percentage does {title} use for its blue-green database failover?",
            ["NOT FOUND"],
        )

        # edit tasks (memory writes); the closures bind this iteration's values through defaults
        new_rep = str(r.int(49, 99))
        old_rep = rows[0][2]

        def edit_cell(d: Doc, new_rep: str = new_rep) -> None:
            block_at(d, 1, 1, "table")["rows"][0][2] = new_rep

        corpus.edits.append(
            EditTask(
                f"{slug}:edit-cell",
                "edit-cell",
                slug,
                f"Production replicas for {title} are now {new_rep}.",
                "config",
                [new_rep],
                edit_cell,
                gone=old_rep,
            )
        )
        new_dep = next(x for x in DEPS if not any(y["name"] == x[0] for y in deps))
        new_ver = _version(r)

        def edit_dep(d: Doc, new_dep: tuple[str, str] = new_dep, new_ver: str = new_ver) -> None:
            block_at(d, 4, 0, "deps")["items"].append(
                {"name": new_dep[0], "kv": [("version", new_ver), ("purpose", new_dep[1])]}
            )

        corpus.edits.append(
            EditTask(
                f"{slug}:edit-dep",
                "edit-add-dep",
                slug,
                f"{title} now also depends on {new_dep[0]} version {new_ver} (purpose: {new_dep[1]}). "
                "Add it to the end of the dependency list in the same style as the others.",
                "deps",
                [new_dep[0], new_ver],
                edit_dep,
            )
        )
        new_approver = names.pop()

        def edit_approver(d: Doc, new_approver: str = new_approver) -> None:
            block_at(d, 2, 0, "p")["c"] = [
                _t(f"Staging deploys run on every merge to main. Approval comes from {new_approver}.")
            ]

        corpus.edits.append(
            EditTask(
                f"{slug}:edit-approver",
                "edit-scoped",
                slug,
                f"Staging deploys of {title} are now approved by {new_approver} instead of {approver_s}.",
                "deploy-staging",
                [new_approver],
                edit_approver,
                gone=approver_s,
            )
        )

    corpus.hard_questions = _hard_questions(corpus.docs)
    return corpus


def _hard_questions(docs: list[Doc]) -> list[Question]:
    """Harder, corpus-wide questions (haystack only). Derived from the models, no extra randomness."""
    out: list[Question] = []
    info = []
    for d in docs:
        cfg = block_at(d, 1, 1, "table")
        prod_p = block_at(d, 3, 0, "p")["c"][0][1]
        match = re.search(r"sign-off from (.+?) and run", prod_p)
        info.append(
            {
                "d": d,
                "team": block_at(d, 0, 0, "p")["c"][1][1],
                "prod_replicas": float(cfg["rows"][0][2]),
                "approver_p": match.group(1) if match else "",
                "prod": [it[1][1] for it in block_at(d, 3, 1, "ol")["items"]],
                "deps": [x["name"] for x in block_at(d, 4, 0, "deps")["items"]],
                "causes": [
                    re.sub(r"^Outage caused by |\.$", "", x["text"])
                    for x in block_at(d, 6, 0, "incidents")["items"]
                ],
            }
        )
    for i, x in enumerate(info):
        d = x["d"]
        out.append(
            Question(
                f"{d.slug}:multi-hop",
                "multi-hop",
                d.slug,
                "deploy-production",
                "Who signs off production deploys of the service that had an outage caused by "
                f"{x['causes'][i % 2]}?",
                [x["approver_p"]],
                None,
            )
        )
        j = i % 5
        out.append(
            Question(
                f"{d.slug}:step-after",
                "step-after",
                d.slug,
                "deploy-production",
                f"In the production deployment of {d.title}, which command is run immediately after "
                f"`{x['prod'][j]}`?",
                [x["prod"][j + 1]],
                None,
            )
        )
    for team in dict.fromkeys(x["team"] for x in info):
        n = sum(1 for x in info if x["team"] == team and x["prod_replicas"] > 20)
        out.append(
            Question(
                f"{team}:count-table",
                "count-table",
                "",
                "config",
                f"How many services owned by the {team} team run more than 20 replicas in production? "
                "Answer with a number.",
                [str(n)],
                True,
            )
        )
    for dep, _ in DEPS:
        n = sum(1 for x in info if dep in x["deps"])
        out.append(
            Question(
                f"{dep}:count-list",
                "count-list",
                "",
                "deps",
                f"How many services list {dep} as a dependency? Answer with a number.",
                [str(n)],
                True,
            )
        )
    return out


def edited(doc: Doc, task: EditTask) -> Doc:
    """A copy of `doc` with the edit applied: what the document should look like after the task."""
    clone = copy.deepcopy(doc)
    task.apply(clone)
    return clone


def to_json(value: Any) -> str:
    """JSON.stringify(value, null, 2): two-space indent, non-ASCII characters kept as they are."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def write_corpus(corpus: Corpus, root: Path, formats: Sequence[Fmt] = FORMATS) -> None:
    """gen.ts's output: <root>/<fmt>/<slug>.<fmt> and <root>/questions.json."""
    for f in formats:
        (root / f).mkdir(parents=True, exist_ok=True)
        for d in corpus.docs:
            (root / f / f"{d.slug}.{f}").write_text(render_doc(d, f), encoding="utf-8", newline="")
    (root / "questions.json").write_text(
        to_json([q.to_json() for q in corpus.questions]), encoding="utf-8", newline=""
    )


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    corpus = generate()
    write_corpus(corpus, Path(sys.argv[1]))
    sizes = [[f, sum(len(render_doc(d, f)) for d in corpus.docs)] for f in FORMATS]
    print(
        "docs",
        len(corpus.docs),
        "questions",
        len(corpus.questions),
        "edits",
        len(corpus.edits),
        "chars",
        sizes,
    )


if __name__ == "__main__":
    main()
