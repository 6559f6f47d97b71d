"""What the docs say that could drift from the code is made or checked, never copied by hand: the
README's configuration table is the settings classes' (`ragdown/settings_table.py`), the version is
written once (pyproject.toml) and the image and chart agree with it, and every link to a heading of
docs/ — from code, tests or the docs themselves — reaches a heading that exists."""

from __future__ import annotations

import re
import subprocess
import tomllib
import unicodedata
from functools import cache
from pathlib import Path

import pytest
import yaml

from ragdown.settings_table import with_table

REPO = Path(__file__).resolve().parents[1]
# `docs/<page>.md#<anchor>` as code, tests, the chart or the README name it.
NAMED = re.compile(r"\bdocs/([\w./-]+\.md)#([\w-]+)")
# A Markdown link's target inside docs/: `(page.md#anchor)` or `(#anchor)`.
LINKED = re.compile(r"\]\(((?:[\w./-]+\.md)?)#([\w-]+)\)")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
EXPLICIT = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")


def test_the_readme_settings_table_is_the_settings_classes() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert with_table(readme) == readme, (
        "the README's settings table differs from ragdown/settings.py: run "
        "`python -m ragdown.settings_table README.md` (descriptions live in the settings classes)"
    )


def project_version() -> str:
    with (REPO / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def test_the_image_and_the_chart_carry_the_projects_version() -> None:
    version = project_version()
    label = re.search(r'org\.opencontainers\.image\.version="([^"]+)"', (REPO / "Dockerfile").read_text())
    assert label is not None, "Dockerfile has no org.opencontainers.image.version label"
    assert label.group(1) == version, "Dockerfile's image.version label"
    chart = yaml.safe_load((REPO / "charts/ragdown/Chart.yaml").read_text(encoding="utf-8"))
    assert chart["appVersion"] == version, "charts/ragdown/Chart.yaml appVersion"


def test_the_version_is_written_once_in_the_code() -> None:
    """The package asks its installed metadata; no module spells the version out."""
    version = project_version()
    spelled = [
        str(path.relative_to(REPO))
        for root in ("server", "operator")
        for path in (REPO / root).rglob("*.py")
        if f'"{version}"' in path.read_text(encoding="utf-8")
    ]
    assert spelled == []


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text (links and code spans as their text) lowercased,
    anything but letters, marks, digits, `_`, `-` and spaces dropped, spaces made `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    kept = "".join(
        c
        for c in text
        if c in " -_" or unicodedata.category(c)[0] in "LMN" or unicodedata.category(c) == "Pc"
    )
    return kept.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """Every anchor `page` has: one per heading outside code fences (a repeat gets `-1`, `-2`…), and
    each explicit `<a id=…>`."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        found |= set(EXPLICIT.findall(line))
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    paths = [REPO / name for name in listed.stdout.splitlines()]
    return [
        p
        for p in paths
        if p.suffix in {".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".tpl", ".txt", ".js", ".html", ".css"}
        or p.name == "Dockerfile"
    ]


def doc_links() -> list[tuple[str, Path, str]]:
    """(where, page, anchor) for every link to a heading of docs/."""
    links: list[tuple[str, Path, str]] = []
    for path in tracked_text_files():
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        where = str(path.relative_to(REPO))
        links += [(where, REPO / "docs" / page, anchor) for page, anchor in NAMED.findall(text)]
        if path.parent == REPO / "docs" and path.suffix == ".md":
            links += [
                (where, (path.parent / page) if page else path, anchor)
                for page, anchor in LINKED.findall(text)
            ]
    return links


def test_every_link_to_a_docs_heading_resolves() -> None:
    links = doc_links()
    assert len(links) > 200  # the pattern still finds them
    broken = sorted(
        {
            f"{where}: {page.relative_to(REPO)}#{anchor}"
            for where, page, anchor in links
            if not page.is_file() or anchor not in anchors(page.resolve())
        }
    )
    assert broken == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Readers degrade", "readers-degrade"),
        ("`ragdown_context`: the hook", "ragdown_context-the-hook"),
        ("Index on object storage (S3, GCS, Azure)", "index-on-object-storage-s3-gcs-azure"),
        ("Sections and breadcrumbs", "sections-and-breadcrumbs"),
        ("[Tools](tools.md) and routes", "tools-and-routes"),
    ],
)
def test_anchors_are_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor
