"""The document routes of `/api` (docs/tools.md#document-routes) over real HTTP: what the web UI lists,
reads, saves, moves and shows, and each refusal: 401, 403, 404, 409 `changed`, 413, 400 bodies and
paths that try to leave the docs dir, and attachments holding HTML or SVG served inert."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.serving.conftest import Served

JSON = {"Content-Type": "application/json"}


def test_docs_are_listed_per_folder_with_their_metadata(served: Served) -> None:
    with served.admin() as http:
        ops = http.get("/api/docs", params={"folder": "ops"}).json()["docs"]
        everything = http.get("/api/docs").json()["docs"]
        missing = http.get("/api/docs", params={"folder": "nope"})
    assert [d["path"] for d in ops] == ["ops/backups.md", "ops/cache.md", "ops/db/vacuum.md"]
    backups = ops[0]
    assert (backups["folder"], backups["title"], backups["tags"], backups["aliases"]) == (
        "ops",
        "Backups",
        ["db", "ops"],
        ["Restores"],
    )
    assert backups["chunks"] >= 1
    # Human-only folders are the UI's too; loose files are no folder's document.
    assert {d["folder"] for d in everything} == {"ops", "private"}
    assert (missing.status_code, missing.json()) == (404, {"error": "no such folder: nope"})


def test_a_document_reads_with_its_hash_and_crlf_is_reported(served: Served) -> None:
    (served.docs / "ops" / "windows.md").write_bytes(b"# Windows\r\n\r\nLine one.\r\n")
    served.engine.sync()
    with served.admin() as http:
        read = http.get("/api/doc", params={"path": "ops/windows.md"}).json()
        missing = http.get("/api/doc", params={"path": "ops/none.md"})
        bare = http.get("/api/doc", params={"path": "windows.md"})
    assert read["text"] == "# Windows\n\nLine one.\n"
    assert read["crlf"] is True
    assert read["title"] == "Windows"
    assert read["indexed"] is True
    assert read["hash"] == hashlib.sha256(b"# Windows\r\n\r\nLine one.\r\n").hexdigest()
    assert (missing.status_code, missing.json()["error"]) == (404, "no such document: ops/none.md")
    assert bare.status_code == 400
    assert bare.json()["error"].startswith("a path names its folder first")


def test_save_creates_then_saves_against_the_opened_version(served: Served) -> None:
    with served.admin() as http:
        made = http.post("/api/doc", json={"path": "ops/new/plan.md", "text": "# Plan\n\nDraft.\n"})
        assert made.status_code == 201
        first = made.json()
        assert (first["path"], first["created"], first["indexed"]) == ("ops/new/plan.md", True, True)
        # The index has it before the answer: the next list shows it.
        assert "ops/new/plan.md" in [d["path"] for d in http.get("/api/docs").json()["docs"]]
        again = http.post("/api/doc", json={"path": "ops/new/plan.md", "text": "# Other"})
        assert (again.status_code, again.json()["error"]) == (409, "already exists: ops/new/plan.md")
        saved = http.post(
            "/api/doc",
            json={"path": "ops/new/plan.md", "text": "# Plan\n\nFinal.\n", "base_hash": first["hash"]},
        )
        assert saved.status_code == 200
        assert saved.json()["created"] is False
        # Someone edits the file on disk; a save against the old version is refused and says so.
        (served.docs / "ops" / "new" / "plan.md").write_text("# Plan\n\nTheirs.\n", encoding="utf-8")
        stale = http.post(
            "/api/doc", json={"path": "ops/new/plan.md", "text": "# Mine", "base_hash": saved.json()["hash"]}
        )
        assert stale.status_code == 409
        assert stale.json()["code"] == "changed"
    assert (served.docs / "ops" / "new" / "plan.md").read_text(encoding="utf-8") == "# Plan\n\nTheirs.\n"


def test_a_save_over_a_crlf_file_keeps_crlf(served: Served) -> None:
    path = served.docs / "ops" / "dos.md"
    path.write_bytes(b"# Dos\r\n\r\nOld.\r\n")
    with served.admin() as http:
        opened = http.get("/api/doc", params={"path": "ops/dos.md"}).json()
        saved = http.post(
            "/api/doc", json={"path": "ops/dos.md", "text": "# Dos\n\nNew.\n", "base_hash": opened["hash"]}
        )
    assert saved.status_code == 200
    assert path.read_bytes() == b"# Dos\r\n\r\nNew.\r\n"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"text": "# x"}, "path is required"),
        ({"path": "ops/a.md"}, "text is required"),
        ({"path": "ops/a.md", "text": "x", "overwrite": "yes"}, "overwrite must be true or false, got 'yes'"),
        ({"path": "ops/a.md", "text": "x", "colour": "red"}, "colour is not an argument this takes"),
        ({"path": "ops/a.txt", "text": "x"}, None),
        ({"path": "../escape.md", "text": "x"}, None),
        ({"path": "ops/../../escape.md", "text": "x"}, None),
        ({"path": "ops/.hidden/a.md", "text": "x"}, None),
        ({"path": "/etc/passwd.md", "text": "x"}, None),
        ({"path": "nope/a.md", "text": "x"}, "no such folder: nope"),
    ],
)
def test_bad_saves_are_refused_and_write_nothing(
    served: Served, body: dict[str, object], error: str | None
) -> None:
    before = sorted(p.relative_to(served.docs.parent) for p in served.docs.parent.rglob("*"))
    with served.admin() as http:
        refused = http.post("/api/doc", json=body)
    assert refused.status_code in (400, 404), refused.text
    if error is not None:
        assert refused.json()["error"] == error
    after = sorted(p.relative_to(served.docs.parent) for p in served.docs.parent.rglob("*"))
    assert after == before


def test_bodies_are_bounded(served: Served) -> None:
    with served.admin() as http:
        big = http.post("/api/doc", json={"path": "ops/big.md", "text": "x" * (4 * 1024 * 1024)})
        fits = http.post("/api/doc", json={"path": "ops/fits.md", "text": "x" * (3 * 1024 * 1024)})
    assert (big.status_code, big.json()) == (413, {"error": "Body too large"})
    assert fits.status_code == 201
    assert not (served.docs / "ops" / "big.md").exists()


def test_delete_takes_the_document_and_its_chunks(served: Served) -> None:
    with served.admin() as http:
        opened = http.get("/api/doc", params={"path": "ops/cache.md"}).json()
        (served.docs / "ops" / "cache.md").write_text("# Cache\n\nChanged on disk.\n", encoding="utf-8")
        stale = http.delete("/api/doc", params={"path": "ops/cache.md", "base_hash": opened["hash"]})
        assert (stale.status_code, stale.json()["code"]) == (409, "changed")
        gone = http.delete("/api/doc", params={"path": "ops/cache.md"})
        assert gone.json() == {"path": "ops/cache.md", "indexed": True}
        assert http.delete("/api/doc", params={"path": "ops/cache.md"}).status_code == 404
        assert "ops/cache.md" not in [d["path"] for d in http.get("/api/docs").json()["docs"]]


def test_search_stays_in_its_folder_and_reaches_human_only_ones(served: Served) -> None:
    with served.admin() as http:
        ops = http.get("/api/search", params={"folder": "ops", "q": "redis"}).json()["hits"]
        private = http.get("/api/search", params={"folder": "private", "q": "redis secrets"}).json()["hits"]
        tagged = http.get("/api/search", params={"folder": "ops", "q": "restore", "tag": "db"}).json()["hits"]
        bad = http.get("/api/search", params={"folder": "ops", "q": "x", "top_k": 0})
        no_query = http.get("/api/search", params={"folder": "ops"})
    assert ops
    assert {h["path"] for h in ops} <= {"ops/backups.md", "ops/cache.md", "ops/db/vacuum.md"}
    assert ops[0]["path"] == "ops/cache.md"
    assert {"line_start", "line_end", "heading", "similarity", "text"} <= set(ops[0])
    assert [h["path"] for h in private] == ["private/diary.md"]
    assert {h["path"] for h in tagged} == {"ops/backups.md"}
    assert (bad.status_code, bad.json()) == (400, {"error": "top_k must be at least 1, got 0"})
    assert (no_query.status_code, no_query.json()) == (400, {"error": "q is required"})


def test_wikilinks_resolve_within_the_folder(served: Served) -> None:
    with served.admin() as http:
        by_name = http.get("/api/resolve", params={"from": "ops/db/vacuum.md", "link": "backups"}).json()
        by_alias = http.get(
            "/api/resolve", params={"from": "ops/cache.md", "link": "Restores#Restore"}
        ).json()
        other_folder = http.get("/api/resolve", params={"from": "ops/cache.md", "link": "diary"})
    assert by_name == {"path": "ops/backups.md"}
    assert by_alias == {"path": "ops/backups.md", "anchor": "Restore"}
    assert other_folder.status_code == 404


def test_backlinks_and_a_move_that_rewrites_them(served: Served) -> None:
    with served.admin() as http:
        links = http.get("/api/backlinks", params={"path": "ops/backups.md"}).json()
        assert [b["path"] for b in links["backlinks"]] == ["ops/db/vacuum.md"]
        moved = http.post("/api/move", json={"from": "ops/backups.md", "to": "ops/runbooks/restores.md"})
        assert moved.status_code == 200
        assert moved.json() == {
            "from": "ops/backups.md",
            "to": "ops/runbooks/restores.md",
            "updated": ["ops/db/vacuum.md"],
            "indexed": True,
        }
        after = http.get("/api/backlinks", params={"path": "ops/runbooks/restores.md"}).json()
        across = http.post("/api/move", json={"from": "ops/cache.md", "to": "private/cache.md"})
    assert [b["path"] for b in after["backlinks"]] == ["ops/db/vacuum.md"]
    assert "[[backups]]" not in (served.docs / "ops" / "db" / "vacuum.md").read_text(encoding="utf-8")
    assert across.status_code == 400
    assert (served.docs / "ops" / "cache.md").exists()


def test_attachments_are_served_raw_and_inert(served: Served) -> None:
    (served.docs / "ops" / "img").mkdir()
    (served.docs / "ops" / "img" / "dot.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (served.docs / "ops" / "page.html").write_text("<script>alert(1)</script>", encoding="utf-8")
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    (served.docs / "ops" / "img" / "draw.svg").write_text(svg, encoding="utf-8")
    with served.admin() as http:
        png = http.get("/api/file", params={"path": "ops/img/dot.png"})
        html = http.get("/api/file", params={"path": "ops/page.html"})
        drawing = http.get("/api/file", params={"path": "ops/img/draw.svg"})
        missing = http.get("/api/file", params={"path": "ops/img/none.png"})
    assert png.content == b"\x89PNG\r\n\x1a\nfake"
    assert png.headers["content-type"] == "image/png"
    for answer in (png, html, drawing):
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert "sandbox" in answer.headers["content-security-policy"]
        assert "default-src 'none'" in answer.headers["content-security-policy"]
    # HTML is never a page from a folder: it comes back as its source text.
    assert html.headers["content-type"] == "text/plain; charset=utf-8"
    assert drawing.headers["content-type"] == "image/svg+xml"  # its script cannot run in the sandbox
    assert missing.status_code == 404


def test_no_route_leaves_the_docs_dir_or_follows_a_symlink(served: Served, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\ntop secret\n", encoding="utf-8")
    os.symlink(secret, served.docs / "ops" / "link.md")
    os.symlink(tmp_path, served.docs / "ops" / "out")
    attempts = [
        ("get", "/api/doc", {"path": "ops/link.md"}),
        ("get", "/api/doc", {"path": "ops/out/secret.md"}),
        ("get", "/api/doc", {"path": "ops/../../secret.md"}),
        ("get", "/api/file", {"path": "ops/out/secret.md"}),
        ("get", "/api/file", {"path": "ops/link.md"}),
        ("get", "/api/file", {"path": "loose.md"}),
        ("get", "/api/backlinks", {"path": "ops/out/secret.md"}),
        ("get", "/api/render", {"path": "ops/link.md"}),
        ("get", "/api/render", {"path": "ops/out/secret.md"}),
        ("delete", "/api/doc", {"path": "ops/link.md"}),
        ("delete", "/api/doc", {"path": "ops/out/secret.md"}),
    ]
    with served.admin() as http:
        for method, route, params in attempts:
            answer = http.request(method.upper(), route, params=params)
            assert answer.status_code in (400, 404), (route, params, answer.status_code)
            assert "top secret" not in answer.text
        saved = http.post("/api/doc", json={"path": "ops/out/secret.md", "text": "# Overwritten"})
        assert saved.status_code in (400, 404)
    assert secret.read_text(encoding="utf-8") == "# Secret\n\ntop secret\n"


def test_the_routes_need_the_admin_token_and_writes_a_writable_server(
    make_served: Callable[..., Served],
) -> None:
    served = make_served()
    with served.http(token=None) as http:
        assert http.get("/api/docs").status_code == 401
        assert http.get("/api/file", params={"path": "ops/backups.md"}).status_code == 401
    with served.http() as http:  # the agents' token: /mcp only
        assert http.get("/api/doc", params={"path": "ops/backups.md"}).status_code == 403
    read_only = make_served(read_only=True)
    with read_only.admin() as http:
        refused = http.post("/api/doc", json={"path": "ops/x.md", "text": "# X"})
        assert (refused.status_code, refused.json()) == (
            403,
            {"error": "The server is read-only (RAGDOWN_READ_ONLY)"},
        )
        assert http.delete("/api/doc", params={"path": "ops/backups.md"}).status_code == 403
        assert http.post("/api/move", json={"from": "ops/cache.md", "to": "ops/c.md"}).status_code == 403
        assert http.get("/api/doc", params={"path": "ops/backups.md"}).status_code == 200
    assert (read_only.docs / "ops" / "backups.md").exists()
    assert not (read_only.docs / "ops" / "x.md").exists()


def test_a_document_renders_with_links_resolved_and_its_backlinks(served: Served) -> None:
    (served.docs / "ops" / "img").mkdir()
    (served.docs / "ops" / "img" / "plan.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (served.docs / "ops" / "db" / "vacuum.md").write_text(
        "# Vacuum\n\nSee [[backups#Restore|the restore]] and [[nowhere]].\n\n![[plan.png]]\n\n"
        "<script>alert(1)</script>\n",
        encoding="utf-8",
    )
    served.engine.sync()
    with served.admin() as http:
        vacuum = http.get("/api/render", params={"path": "ops/db/vacuum.md"}).json()
        backups = http.get("/api/render", params={"path": "ops/backups.md"}).json()
    html = vacuum["html"]
    assert '<a class="wikilink" href="#/doc/ops/backups.md#restore"' in html
    assert 'class="wikilink missing"' in html
    assert 'data-src="ops/img/plan.png"' in html
    assert "<script" not in html
    assert " src=" not in html  # images load through the API with the token, never straight
    assert vacuum["headings"] == [{"level": 1, "text": "Vacuum", "id": "vacuum", "line": 1}]
    assert [b["path"] for b in backups["backlinks"]] == ["ops/db/vacuum.md"]
    assert backups["tags"] == ["db", "ops"]


def test_a_preview_renders_unsaved_text_and_writes_nothing(served: Served) -> None:
    before = (served.docs / "ops" / "cache.md").read_bytes()
    with served.admin() as http:
        preview = http.post("/api/preview", json={"path": "ops/cache.md", "text": "# Draft\n\n[[backups]]\n"})
        big = http.post("/api/preview", json={"path": "ops/cache.md", "text": "x" * (4 * 1024 * 1024)})
        bad = http.post("/api/preview", json={"path": "ops/cache.md"})
        escape = http.post("/api/preview", json={"path": "../x.md", "text": "# x"})
    assert preview.status_code == 200
    assert '<a class="wikilink" href="#/doc/ops/backups.md"' in preview.json()["html"]
    assert (big.status_code, bad.status_code, escape.status_code) == (413, 400, 400)
    assert bad.json()["error"] == "text is required"
    assert (served.docs / "ops" / "cache.md").read_bytes() == before
