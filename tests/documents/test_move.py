"""docs/documents.md#move moving a document or a subfolder and rewriting the links the move would break."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragdown.documents.move import MoveResult, execute_move, move, plan_move
from ragdown.errors import Refusal

INDEX = "\n".join(
    [
        "# Index",
        "",
        "[[ops/pg#Vacuum|vacuum]], [[pg]], ![[pg.md]] and [pg](ops/pg.md).",
        "`[[pg]]` stays, [[missing]] too.",
    ]
)
PG = "# Postgres\n\nSee [[kafka]] and [runbook](../run/book.md)."


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """The reference's folders: `work` with the documents that move, `home` with its own `[[pg]]`."""
    write(tmp_path / "work/ops/pg.md", PG)
    write(tmp_path / "work/kafka.md", "# Kafka")
    write(tmp_path / "work/run/book.md", "# Book")
    write(tmp_path / "work/index.md", INDEX)
    write(tmp_path / "work/other/pg.md", "# Another pg")
    write(tmp_path / "home/link.md", "[[pg]]")
    return tmp_path


@pytest.fixture
def work(docs: Path) -> Path:
    return docs / "work"


def refuse(work: Path, source: str, destination: str) -> Refusal:
    with pytest.raises(Refusal) as caught:
        move(work, source, destination)
    return caught.value


# --- the spec's vectors -----------------------------------------------------------------------


def test_vector_document_move_rewrites_links_to_it(docs: Path, work: Path) -> None:
    assert move(work, "ops/pg.md", "db/postgres.md") == MoveResult(
        "ops/pg.md", "db/postgres.md", ["index.md"]
    )
    assert read(work / "index.md") == "\n".join(
        [
            "# Index",
            "",
            "[[postgres#Vacuum|vacuum]], [[postgres]], ![[postgres.md]] and [pg](db/postgres.md).",
            "`[[pg]]` stays, [[missing]] too.",
        ]
    )
    # Its own relative link still holds from db/, so it is unchanged.
    assert read(work / "db/postgres.md") == PG
    assert not (work / "ops/pg.md").exists()
    # Another folder's links never resolved to it.
    assert read(docs / "home/link.md") == "[[pg]]"


def test_vector_keeps_as_much_path_as_the_new_name_needs(work: Path) -> None:
    result = move(work, "ops/pg.md", "db/deep/book.md")
    assert result.updated == ["index.md"]
    assert "[[deep/book#Vacuum|vacuum]], [[deep/book]], ![[deep/book.md]] and [pg](db/deep/book.md)." in read(
        work / "index.md"
    )
    # Its own relative link moved with it, so it is recomputed.
    assert read(work / "db/deep/book.md") == "# Postgres\n\nSee [[kafka]] and [runbook](../../run/book.md)."


def test_vector_subfolder_moves_with_its_attachments(work: Path) -> None:
    write(work / "ops/pg.png", "png")
    write(work / "ops/tuning.md", "# Tuning\n\n![[pg.png]], [pg](pg.md) and [[book]].")
    write(work / "gallery.md", "![chart](ops/pg.png)")

    result = move(work, "ops", "db/main")
    assert result == MoveResult("ops", "db/main", ["db/main/pg.md", "gallery.md", "index.md"])
    assert "[[main/pg#Vacuum|vacuum]], [[main/pg]], ![[main/pg.md]] and [pg](db/main/pg.md)." in read(
        work / "index.md"
    )
    assert read(work / "gallery.md") == "![chart](db/main/pg.png)"
    assert read(work / "db/main/pg.md") == "# Postgres\n\nSee [[kafka]] and [runbook](../../run/book.md)."
    # Links between files that moved together still hold as written.
    assert read(work / "db/main/tuning.md") == "# Tuning\n\n![[pg.png]], [pg](pg.md) and [[book]]."
    assert read(work / "db/main/pg.png") == "png"
    assert not (work / "ops").exists()

    assert refuse(work, "db", "db/main/db").status == 400
    assert refuse(work, "db", "run").status == 409


# --- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "destination", "status", "message"),
    [
        ("nope.md", "x.md", 404, "no such document or folder: nope.md"),
        ("ops/pg.md", "ops/pg.md", 400, "ops/pg.md is already there"),
        ("ops/pg.md", "./ops//pg.md", 400, "ops/pg.md is already there"),
        ("ops", "ops", 400, "ops is already there"),
        ("ops", "ops/deeper/ops", 400, "cannot move ops into itself"),
        ("ops/pg.md", "kafka.md", 409, "already exists: kafka.md"),
        ("ops", "run", 409, "already exists: run"),
        ("ops/pg.md", "../home/pg.md", 400, "path is outside the docs folder: ../home/pg.md"),
        ("../home/link.md", "x.md", 400, "path is outside the docs folder: ../home/link.md"),
        ("ops/pg.md", "/abs.md", 400, "path must be relative to the docs folder: /abs.md"),
        ("ops/pg.md", "C:/x.md", 400, "path must be relative to the docs folder: C:/x.md"),
        ("ops/pg.md", "", 400, "path must be relative to the docs folder: "),
        ("ops/pg.md", ".hidden/pg.md", 400, "path names a folder or file the index skips: .hidden/pg.md"),
        (
            "ops/pg.md",
            "node_modules/pg.md",
            400,
            "path names a folder or file the index skips: node_modules/pg.md",
        ),
        ("ops/pg.md", "pg.txt", 400, "only Markdown files (.md, .markdown, .mdx) can be written: pg.txt"),
        # Not a directory, so it must be a Markdown path.
        ("nope", "x.md", 400, "only Markdown files (.md, .markdown, .mdx) can be written: nope"),
        ("ops/pg.md", "kafka.md/pg.md", 400, "a folder on the path is a file or a symlink: kafka.md/pg.md"),
    ],
)
def test_refusals(work: Path, source: str, destination: str, status: int, message: str) -> None:
    before = {path: path.read_bytes() for path in work.rglob("*") if path.is_file()}
    error = refuse(work, source, destination)
    assert (error.status, error.message, str(error)) == (status, message, message)
    assert isinstance(error, Refusal)
    # Nothing was written or moved.
    assert {path: path.read_bytes() for path in work.rglob("*") if path.is_file()} == before


def test_a_folder_may_go_to_a_markdown_looking_name(work: Path) -> None:
    # Only a document's destination must be Markdown; a directory's name is free.
    assert move(work, "run", "runs.md").to_path == "runs.md"
    assert read(work / "runs.md/book.md") == "# Book"


def test_a_symlinked_document_is_no_document(work: Path) -> None:
    (work / "link.md").symlink_to(work / "kafka.md")
    assert refuse(work, "link.md", "x.md").status == 404


def test_same_inode_is_a_case_only_rename_not_a_conflict(work: Path) -> None:
    # A case-insensitive disk finds the source itself at the new name; a hard link stands in for it.
    os.link(work / "kafka.md", work / "KAFKA.md")
    plan = plan_move(work, "kafka.md", "KAFKA.md")
    assert plan.same_file
    assert (plan.from_path, plan.to_path) == ("kafka.md", "KAFKA.md")


# --- rewriting --------------------------------------------------------------------------------


def test_case_only_rename(work: Path) -> None:
    result = move(work, "ops/pg.md", "ops/PG.md")
    assert result == MoveResult("ops/pg.md", "ops/PG.md", ["index.md"])
    assert sorted(os.listdir(work / "ops")) == ["PG.md"]
    assert read(work / "ops/PG.md") == PG
    # Wikilinks resolve without regard to case; a Markdown link names the exact file.
    assert "[[ops/pg#Vacuum|vacuum]], [[pg]], ![[pg.md]] and [pg](ops/PG.md)." in read(work / "index.md")


def test_a_document_changed_between_read_and_write_keeps_its_version(work: Path) -> None:
    plan = plan_move(work, "ops/pg.md", "db/postgres.md")
    write(work / "index.md", "[[pg]] edited meanwhile")
    result = execute_move(plan)
    assert result.updated == []
    assert read(work / "index.md") == "[[pg]] edited meanwhile"
    assert (work / "db/postgres.md").exists()


def test_the_moved_document_changed_meanwhile_moves_as_it_is_now(work: Path) -> None:
    plan = plan_move(work, "ops/pg.md", "db/deep/book.md")
    write(work / "ops/pg.md", "[runbook](../run/book.md), edited")
    execute_move(plan)
    assert read(work / "db/deep/book.md") == "[runbook](../run/book.md), edited"
    assert not (work / "ops/pg.md").exists()


def test_a_destination_taken_between_plan_and_execute_is_a_409(work: Path) -> None:
    plan = plan_move(work, "ops/pg.md", "db/postgres.md")
    write(work / "db/postgres.md", "theirs")
    with pytest.raises(Refusal) as caught:
        execute_move(plan)
    assert (caught.value.status, caught.value.message) == (409, "already exists: db/postgres.md")
    assert read(work / "db/postgres.md") == "theirs"
    assert read(work / "ops/pg.md") == PG
    assert read(work / "index.md") == INDEX


def test_markdown_links_are_uri_encoded_with_parentheses(work: Path) -> None:
    move(work, "ops/pg.md", "db/my notes (v2).md")
    assert (
        "[[my notes (v2)#Vacuum|vacuum]], [[my notes (v2)]], ![[my notes (v2).md]] "
        "and [pg](db/my%20notes%20%28v2%29.md)." in read(work / "index.md")
    )


def test_anchor_title_and_angle_brackets_are_kept(work: Path) -> None:
    write(work / "more.md", '[a](ops/pg.md#Vacuum "t") and [b](<ops/pg.md>) and [[pg.md|shown]]')
    move(work, "ops/pg.md", "db/pg2.md")
    assert read(work / "more.md") == '[a](db/pg2.md#Vacuum "t") and [b](<db/pg2.md>) and [[pg2.md|shown]]'


def test_links_in_code_are_untouched(work: Path) -> None:
    text = "```\n[[pg]] [x](ops/pg.md)\n```\n`[y](ops/pg.md)` and [[ops/pg]]\n"
    write(work / "code.md", text)
    result = move(work, "ops/pg.md", "db/postgres.md")
    assert "code.md" in result.updated
    assert read(work / "code.md") == text.replace("[[ops/pg]]", "[[postgres]]")


def test_links_resolving_through_an_alias_stay(work: Path) -> None:
    write(work / "ops/pg.md", "---\naliases: [Elephant]\n---\n" + PG)
    write(work / "zoo.md", "[[Elephant]] and [[Elephant#Vacuum]]")
    result = move(work, "ops/pg.md", "db/postgres.md")
    assert result.updated == ["index.md"]
    assert read(work / "zoo.md") == "[[Elephant]] and [[Elephant#Vacuum]]"


def test_crlf_documents_stay_crlf(work: Path) -> None:
    write(work / "crlf.md", "# C\r\n\r\n[[ops/pg]]\r\n[p](ops/pg.md)\r\n")
    move(work, "ops/pg.md", "db/postgres.md")
    assert read(work / "crlf.md") == "# C\r\n\r\n[[postgres]]\r\n[p](db/postgres.md)\r\n"


def test_skipped_and_symlinked_files_are_not_rewritten(work: Path) -> None:
    write(work / ".obsidian/x.md", "[[ops/pg]]")
    write(work / "node_modules/x.md", "[[ops/pg]]")
    write(work.parent / "outside.md", "[[ops/pg]]")
    (work / "linked.md").symlink_to(work.parent / "outside.md")
    result = move(work, "ops/pg.md", "db/postgres.md")
    assert result.updated == ["index.md"]
    for path in (work / ".obsidian/x.md", work / "node_modules/x.md", work.parent / "outside.md"):
        assert read(path) == "[[ops/pg]]"


def test_links_the_move_makes_ambiguous_are_fixed(work: Path) -> None:
    # `[[book]]` named run/book.md; beside the linking document, the moved book would win.
    write(work / "run/notes.md", "[[book]]")
    write(work / "guide/x.md", "[[book]] from guide")
    move(work, "ops/pg.md", "guide/book.md")
    assert read(work / "guide/x.md") == "[[run/book]] from guide"
    assert read(work / "run/notes.md") == "[[book]]"


def test_moved_document_links_to_itself_hold(work: Path) -> None:
    write(work / "self.md", "[[#Top]] [me](self.md) [[self]]")
    result = move(work, "self.md", "deep/self.md")
    assert result.updated == []
    assert read(work / "deep/self.md") == "[[#Top]] [me](self.md) [[self]]"


def test_an_attachment_link_follows_a_moved_document(work: Path) -> None:
    write(work / "ops/pic.png", "png")
    write(work / "ops/note.md", "![p](pic.png) ![[pic.png]]")
    move(work, "ops/note.md", "db/note.md")
    assert read(work / "db/note.md") == "![p](../ops/pic.png) ![[pic.png]]"


def test_permissions_survive_the_move_and_the_rewrite(work: Path) -> None:
    os.chmod(work / "ops/pg.md", 0o640)
    os.chmod(work / "index.md", 0o604)
    move(work, "ops/pg.md", "db/postgres.md")
    assert (work / "db/postgres.md").stat().st_mode & 0o777 == 0o640
    assert (work / "index.md").stat().st_mode & 0o777 == 0o604
    assert not [path for path in work.rglob(".*")]  # no temp file left behind


def test_a_move_that_would_make_a_path_too_deep_or_long_is_refused(work: Path) -> None:
    """Moving a folder under a deep one must not carry files past the bounds every path is held to:
    a tree deeper than the walkers go would vanish from the index."""
    deep = "/".join(["n"] * 62)  # proj itself fits; proj/a/b.md would be 65 names
    (work / deep).mkdir(parents=True)
    (work / "proj").mkdir()
    (work / "proj" / "a").mkdir()
    (work / "proj" / "a" / "b.md").write_text("# B\n")
    with pytest.raises(Refusal) as caught:
        move(work, "proj", f"{deep}/proj")
    assert caught.value.status == 400
    assert "longer or deeper than a path may be (1,024 bytes, 64 names)" in str(caught.value)
    assert (work / "proj" / "a" / "b.md").exists()
