"""`ragdown doctor` on what the documents say: one file crowding its folder, symlinks passed over,
documents hidden by supersedes, broken wikilinks, dates in the future (docs/doctor.md)."""

from __future__ import annotations

import os
import time

from tests.doctor.conftest import Server


def test_one_file_holding_a_fifth_of_its_folders_sections_warns(server: Server) -> None:
    for number in range(10):
        server.write(f"notes/n{number}.md", f"# Note {number}\nText.\n")
    server.write("notes/big.md", "# Big\n" + "".join(f"## Part {n}\nText {n}.\n" for n in range(12)))
    found = server.doctor()
    assert found.code == 0
    assert found.lines["crowding"].startswith(
        "warn  crowding: notes/big.md holds 12 of folder notes's 23 sections; split such a file"
    )


def test_three_files_holding_half_warn(server: Server) -> None:
    for number in range(12):
        server.write(f"notes/n{number}.md", f"# Note {number}\nText.\n")
    for name in ("a", "b", "c"):
        server.write(f"notes/{name}.md", f"# {name}\n" + "".join(f"## P{n}\nT.\n" for n in range(6)))
    found = server.doctor()
    assert (
        "notes/a.md, notes/b.md, notes/c.md hold 18 of folder notes's 31 sections" in found.lines["crowding"]
    )


def test_a_symlink_is_named_as_passed_over(server: Server) -> None:
    os.symlink(server.docs / "ops" / "backups.md", server.docs / "notes" / "backups.md")
    found = server.doctor()
    assert found.code == 0
    assert found.lines["skipped"] == (
        "warn  skipped: 1 symlink(s), never followed: notes/backups.md; copy what a symlink points at into "
        "the folder if it should be indexed; flatten deep trees"
    )


def test_documents_hidden_by_supersedes_are_named_with_who_hides_them(server: Server) -> None:
    server.write("ops/failover-v2.md", "---\nsupersedes: failover.md\n---\n# Failover\nNew way.\n")
    found = server.doctor()
    assert found.code == 0
    assert found.lines["superseded"] == (
        "warn  superseded: 1 document(s) hidden from searches by supersedes: ops/failover.md (by "
        "ops/failover-v2.md); if one should be found again, remove it from the superseding document's "
        "supersedes"
    )


def test_broken_wikilinks_are_counted_per_folder(server: Server) -> None:
    server.write("ops/links.md", "# Links\n[[nowhere]] and [[backups]] and ![[diagram.png]]\n")
    server.write("notes/more.md", "# More\n[[failover]]\n")  # ops' document: not this folder's
    found = server.doctor()
    assert found.code == 0
    assert found.lines["wikilinks"] == (
        "warn  wikilinks: links to no document: folder notes: 1 ([[failover]] in notes/more.md); folder ops: "
        "2 ([[nowhere]] in ops/links.md, [[diagram.png]] in ops/links.md); correct the target, add the "
        "document it names, or give a document that alias"
    )
    server.write("ops/diagram.png", "png")
    assert "[[diagram.png]]" not in server.doctor().lines["wikilinks"]


def test_a_file_dated_in_the_future_warns(server: Server) -> None:
    ahead = time.time() + 3600
    os.utime(server.docs / "ops" / "failover.md", (ahead, ahead))
    found = server.doctor()
    assert found.code == 0
    assert found.lines["clock"] == (
        "warn  clock: 1 file(s) changed in the future: ops/failover.md; check this host's clock (NTP), then "
        "`touch` the files so their dates are right"
    )
