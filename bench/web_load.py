"""How fast the web UI shows a screen: a `ragdown serve` on a copy of the examples, headless Chromium
(Debian's, through Playwright), the page signed in once, then each screen opened `--runs` times.

    .venv/bin/python bench/web_load.py [--docs examples] [--runs 30] [--embedder minilm]

A load is timed from navigation start to the screen's content being on the page: a document's
rendered heading, a folder's list, a search's hits. The first load of a fresh page (script and
stylesheet fetched) and the in-page navigations (hash changes) are reported apart.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from _common import REPO, Server, commit, percentile

TOKEN, ADMIN = "bench-token", "bench-admin-token"
SCREENS = {
    "document": ("#/doc/notes/ops/postgres-backups.md", "article.doc h1"),
    "folder": ("#/folder/notes", "main h1"),
    "search": ("#/search/notes?q=restore%20a%20backup", "ol.hits li"),
    "settings": ("#/settings", "section[aria-label=Usage]"),
}


def timed(page: Page, url: str, selector: str, *, reload: bool) -> float:
    if reload:
        page.goto("about:blank")
    started = time.perf_counter()
    if reload:
        page.goto(url)
    else:
        page.evaluate(f"location.hash = {url.split('/', 3)[-1]!r}")
    page.wait_for_selector(selector)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=Path, default=REPO / "examples")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="ragdown-web-") as scratch:
        work = Path(scratch)
        shutil.copytree(args.docs, work / "docs")
        server = Server(work / "docs", work / "data", args.embedder, work, "serve", TOKEN, ADMIN)
        try:
            server.wait(lambda status: bool(status.get("ready")), "the first sync")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                page = browser.new_page()
                page.goto(server.url + "/")
                page.evaluate(f"localStorage.setItem('ragdown-token', {ADMIN!r})")
                rows = []
                for name, (route, selector) in SCREENS.items():
                    for reload in (True, False):
                        times = []
                        for _ in range(args.runs):
                            if not reload:
                                page.evaluate("location.hash = '#/'")
                                page.wait_for_selector("main h1")
                            times.append(timed(page, f"{server.url}/{route}", selector, reload=reload))
                        rows.append((name, "fresh page" if reload else "in the page", times))
                browser.close()
        finally:
            server.stop()
    print(f"commit {commit()}, embedder {args.embedder}, {args.runs} runs each, Chromium headless, loopback")
    print("\n| screen | load | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    for name, how, times in rows:
        p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
        print(f"| {name} | {how} | {p50:.0f} | {p95:.0f} | {max(times):.0f} |")


if __name__ == "__main__":
    main()
