"""docs/documents.md#write `ragdown_write`, docs/documents.md#how-a-change-is-written save, delete and remove:
every vector and refusal message."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.hashes import file_hash
from ragdown.documents.provenance import Writer, with_provenance
from ragdown.documents.text_edits import Edit
from ragdown.documents.writes import (
    WriteResult,
    delete_document,
    edit_document,
    remove,
    save,
    write_document,
)
from ragdown.errors import Refusal

BACKUPS = "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice."
BACKUPS_HASH = file_hash(BACKUPS.encode())  # a `changed` refusal names the version on disk now


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "ops").mkdir(parents=True)
    (folder / "ops" / "backups.md").write_text(BACKUPS)
    return folder


def refused(call: Callable[[], object]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        call()
    return caught.value


def on_disk(root: Path, path: str) -> bytes:
    return (root / path).read_bytes()


def hash_of(root: Path, path: str) -> str:
    return file_hash(on_disk(root, path))


# --- provenance stamping (docs/documents.md#provenance) ---


def test_with_provenance_vectors() -> None:
    stamp = ["created_by: ragdown_write", 'session: "s9"']
    assert with_provenance("# Plain\n\nText.", stamp) == (
        '---\ncreated_by: ragdown_write\nsession: "s9"\n---\n# Plain\n\nText.'
    )
    assert with_provenance("---\ntitle: Front\n---\nText.", stamp[:1]) == (
        "---\ntitle: Front\ncreated_by: ragdown_write\n---\nText."
    )
    assert (
        with_provenance("# A\r\n\r\nB\r\n", ["created_by: x"])
        == "---\r\ncreated_by: x\r\n---\r\n# A\r\n\r\nB\r\n"
    )
    assert with_provenance("---\r\ntitle: T\r\n...\r\nB", ["created_by: x", 'session: "q"']) == (
        '---\r\ntitle: T\r\ncreated_by: x\r\nsession: "q"\r\n...\r\nB'
    )
    # No closing marker: no front matter, so a new block goes first.
    assert with_provenance("---\nnot closed", ["created_by: x"]) == "---\ncreated_by: x\n---\n---\nnot closed"
    # A claim the text makes (an empty one, a block scalar) is replaced; nothing to stamp leaves none.
    claimed = "---\ntitle: T\ncreated_by: |\n  alice\n  really\nsession: ''\ntags: [a]\n---\nB"
    assert with_provenance(claimed, ["created_by: y"]) == "---\ntitle: T\ntags: [a]\ncreated_by: y\n---\nB"
    assert with_provenance(claimed, []) == "---\ntitle: T\ntags: [a]\n---\nB"
    exact = "---\r\ncreated_by: y\r\n---\r\nB"
    assert with_provenance(exact, ["created_by: y"]) is exact


# --- ragdown_write: replace ---


def test_a_new_document_is_stamped_and_its_hash_is_of_the_bytes_written(root: Path) -> None:
    result = write_document(root, "./new//plain.md", "# Plain\n\nText.", session_id="s9")
    expected = '---\ncreated_by: ragdown_write\nsession: "s9"\n---\n# Plain\n\nText.'
    assert on_disk(root, "new/plain.md").decode() == expected
    assert result == WriteResult("new/plain.md", True, hash_of(root, "new/plain.md"))

    write_document(root, "new/front.md", "---\ntitle: Front\n---\nText.", writer=Writer("token team-b"))
    assert on_disk(root, "new/front.md").decode() == (
        "---\ntitle: Front\ncreated_by: ragdown_write (token team-b)\n---\nText."
    )


@pytest.mark.parametrize(
    "claim",
    [
        "created_by: importer",
        "created_by:",
        'created_by: ""',
        "created_by: alice\nsession: forged",
        "created_by: ''",
    ],
)
def test_a_new_document_never_keeps_the_claim_its_text_makes(root: Path, claim: str) -> None:
    """docs/security.md#tenants: an agent cannot pass its write off as a person's or another's."""
    write_document(root, "new/own.md", f"---\n{claim}\ntitle: T\n---\nText.", writer=Writer("agent token"))
    assert on_disk(root, "new/own.md").decode() == (
        "---\ntitle: T\ncreated_by: ragdown_write (agent token)\n---\nText."
    )


def test_replacing_keeps_the_agents_provenance_and_the_users_ownership(root: Path) -> None:
    first = write_document(root, "new/plain.md", "# Plain\n\nText.", session_id="s9")
    forged = "---\ncreated_by: alice\n---\n# Plain\n\nRewritten."
    write_document(root, "new/plain.md", forged, base_hash=first.hash, session_id="other")
    assert on_disk(root, "new/plain.md").decode() == (
        '---\ncreated_by: ragdown_write\nsession: "s9"\n---\n# Plain\n\nRewritten.'
    )
    mine = hash_of(root, "ops/backups.md")
    result = write_document(
        root, "ops/backups.md", "---\ncreated_by: bot\n---\n# Backups\n\nWeekly.", base_hash=mine[:12]
    )
    assert on_disk(root, "ops/backups.md").decode() == "---\n---\n# Backups\n\nWeekly."
    assert not result.created


def test_appends_and_edits_cannot_change_provenance(root: Path) -> None:
    first = write_document(root, "new/plain.md", "# Plain\n\nText.", writer=Writer("agent token"))
    stamped = on_disk(root, "new/plain.md").decode()
    edit_document(
        root, "new/plain.md", [Edit("created_by: ragdown_write (agent token)", "created_by: alice")]
    )
    assert on_disk(root, "new/plain.md").decode() == stamped
    edit_document(root, "new/plain.md", [Edit("created_by: ragdown_write (agent token)\n", "")])
    assert on_disk(root, "new/plain.md").decode() == stamped
    assert first.hash == hash_of(root, "new/plain.md")
    # An empty document of the user's: an append cannot give it front matter that claims an author.
    (root / "ops" / "empty.md").write_text("")
    write_document(root, "ops/empty.md", "---\ncreated_by: alice\n---\nHi", append=True)
    assert on_disk(root, "ops/empty.md").decode() == "---\n---\nHi\n"


def test_supersedes_must_stay_in_the_documents_folder(tmp_path: Path) -> None:
    """docs/security.md#tenants item 1: one folder's document cannot hide another folder's."""
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "teamb").mkdir()
    (docs / "teamb" / "secret.md").write_text("# Secret")
    notes = Root(docs.resolve(), ("notes",))
    writer = Writer("agent token", "notes")
    for entry in ("../teamb/secret.md", "/teamb/secret.md", "sub/../../teamb/secret.md", "../../etc/passwd"):
        text = f"---\nsupersedes: [{entry}]\n---\nNew"
        message = str(refused(partial(write_document, notes, "new.md", text, writer=writer)))
        assert message.startswith("supersedes leaves this folder: ")
        assert not (docs / "notes" / "new.md").exists()
    created = write_document(notes, "new.md", "---\nsupersedes: old.md, sub/x.md\n---\nNew", writer=writer)
    assert refused(
        lambda: edit_document(notes, "new.md", [Edit("old.md", "../teamb/secret.md")], writer=writer)
    ).message.startswith("supersedes leaves this folder")
    assert created.hash == hash_of(docs, "notes/new.md")


def test_replacing_needs_the_hash_and_heading_needs_append(root: Path) -> None:
    blind = refused(lambda: write_document(root, "ops/./backups.md", "# Gone"))
    assert (blind.status, str(blind)) == (
        409,
        "ops/backups.md exists: pass the hash ragdown_read_doc returned as base_hash to replace it",
    )
    heading = refused(lambda: write_document(root, "ops/backups.md", "x", heading="Backups"))
    assert (heading.status, str(heading)) == (400, "heading is for append: true")
    assert on_disk(root, "ops/backups.md").decode() == BACKUPS


def test_a_stale_or_short_hash_is_a_change(root: Path) -> None:
    full = hash_of(root, "ops/backups.md")
    for stale in ("0" * 64, full[:6]):
        error = refused(partial(write_document, root, "ops/backups.md", "# x", base_hash=stale))
        assert (error.status, error.code, str(error)) == (
            409,
            "changed",
            f"ops/backups.md was changed on disk since it was opened (hash now {BACKUPS_HASH[:12]})",
        )
    (root / "ops" / "backups.md").unlink()
    gone = refused(lambda: write_document(root, "ops/backups.md", "# x", base_hash=full))
    assert (gone.status, gone.code, str(gone)) == (
        409,
        "changed",
        "ops/backups.md was deleted since it was opened",
    )


def test_paths_are_validated_as_for_every_write(root: Path) -> None:
    assert str(refused(lambda: write_document(root, ".obsidian/x.md", "x"))) == (
        "path names a folder or file the index skips: .obsidian/x.md"
    )
    assert refused(lambda: write_document(root, "ops/diagram.png", "x")).status == 400
    assert not (root / ".obsidian").exists()


# --- ragdown_write: append ---


def test_append_vector_keeps_the_next_heading(root: Path) -> None:
    (root / "a.md").write_text("# A\n\n## One\n\nfirst\n\n\n## Two\n\nsecond\n")
    result = write_document(root, "a.md", "more", append=True, heading="One")
    assert on_disk(root, "a.md").decode() == "# A\n\n## One\n\nfirst\n\nmore\n\n## Two\n\nsecond\n"
    assert result == WriteResult("a.md", False, hash_of(root, "a.md"))


def test_append_under_a_heading_whose_section_runs_to_the_end_then_at_the_end(root: Path) -> None:
    read = hash_of(root, "ops/backups.md")
    write_document(
        root, "ops/backups.md", "Check the checksum first.", append=True, heading="Backups", base_hash=read
    )
    write_document(root, "ops/backups.md", "## Offsite\n\nS3, weekly.\n\n", append=True)
    assert on_disk(root, "ops/backups.md").decode() == (
        "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n\n"
        "Check the checksum first.\n\n## Offsite\n\nS3, weekly.\n"
    )
    # Appending leaves the document the user's: no provenance is stamped.
    assert b"created_by" not in on_disk(root, "ops/backups.md")


def test_append_keeps_crlf_and_to_an_empty_file_adds_no_leading_blank(root: Path) -> None:
    (root / "crlf.md").write_bytes(b"# A\r\n\r\nfirst\r\n")
    write_document(root, "crlf.md", "more\nlines", append=True)
    assert on_disk(root, "crlf.md") == b"# A\r\n\r\nfirst\r\n\r\nmore\r\nlines\r\n"
    (root / "empty.md").write_bytes(b"")
    write_document(root, "empty.md", "first  \n", append=True)
    assert on_disk(root, "empty.md") == b"first\n"


def test_append_refusals(root: Path) -> None:
    missing = refused(lambda: write_document(root, "ops/none.md", "x", append=True))
    assert (missing.status, str(missing)) == (404, "no such document: ops/none.md")
    heading = refused(lambda: write_document(root, "ops/backups.md", "x", append=True, heading="Nope"))
    assert (heading.status, str(heading)) == (404, 'no heading "Nope" in ops/backups.md')
    stale = refused(lambda: write_document(root, "ops/backups.md", "x", append=True, base_hash="0" * 12))
    assert (stale.status, stale.code, str(stale)) == (
        409,
        "changed",
        f"ops/backups.md was changed on disk since it was opened (hash now {BACKUPS_HASH[:12]})",
    )
    assert on_disk(root, "ops/backups.md").decode() == BACKUPS


def test_an_append_waits_for_a_writer_holding_the_file_and_adds_to_its_version(root: Path) -> None:
    """Read, merge and write are one step under the file's lock: an append that starts while another
    writer holds the file lands on that writer's version instead of overwriting it."""
    appended = threading.Event()

    def append() -> None:
        write_document(root, "ops/backups.md", "mine", append=True)
        appended.set()

    with files.locked(Root.at(root), ("ops", "backups.md")) as held:
        assert held.parent is not None
        thread = threading.Thread(target=append)
        thread.start()
        assert not appended.wait(0.3)  # still waiting for the lock
        files._replace(held.parent, held.name, b"# Someone else's\n", None)
    thread.join(timeout=30)
    assert on_disk(root, "ops/backups.md").decode() == "# Someone else's\n\nmine\n"


# --- save (docs/documents.md#how-a-change-is-written) ---


def test_save_creates_with_folders_and_refuses_an_existing_file(root: Path) -> None:
    result = save(root, "sub/deeper/kafka.md", "# Kafka\n")
    assert result == WriteResult("sub/deeper/kafka.md", True, file_hash(b"# Kafka\n"))
    taken = refused(lambda: save(root, "sub/deeper/kafka.md", "# Other"))
    assert (taken.status, str(taken)) == (409, "already exists: sub/deeper/kafka.md")
    shown = refused(lambda: save(root, "ops/backups.md", "x", display_path="work/ops/backups.md"))
    assert str(shown) == "already exists: work/ops/backups.md"
    assert save(root, "sub/deeper/kafka.md", "# Other", overwrite=True).created is False
    assert on_disk(root, "sub/deeper/kafka.md") == b"# Other"


def test_save_refuses_a_folder_where_the_file_would_go(root: Path) -> None:
    (root / "dir.md").mkdir()
    error = refused(lambda: save(root, "dir.md", "x", overwrite=True))
    assert (error.status, str(error)) == (409, "not a file: dir.md")


def test_save_keeps_crlf_and_accepts_12_or_64_hash_characters(root: Path) -> None:
    (root / "crlf.md").write_bytes(b"# Backups\r\n\r\nNightly.\r\n")
    opened = hash_of(root, "crlf.md")
    result = save(root, "crlf.md", "# Backups\n\nHourly.\n", base_hash=opened)
    assert on_disk(root, "crlf.md") == b"# Backups\r\n\r\nHourly.\r\n"
    assert result.hash == hash_of(root, "crlf.md")
    save(root, "crlf.md", "# Backups\r\nDaily.\n", base_hash=result.hash[:12])
    assert on_disk(root, "crlf.md") == b"# Backups\r\nDaily.\r\n"


def test_save_with_a_stale_short_or_vanished_hash_is_refused_with_code_changed(root: Path) -> None:
    full = hash_of(root, "ops/backups.md")
    short = refused(lambda: save(root, "ops/backups.md", "x", base_hash=full[:6]))
    assert (short.status, short.code, str(short)) == (
        409,
        "changed",
        f"ops/backups.md was changed on disk since it was opened (hash now {BACKUPS_HASH[:12]})",
    )
    gone = refused(lambda: save(root, "new/x.md", "x", base_hash=full))
    assert (gone.code, str(gone)) == ("changed", "new/x.md was deleted since it was opened")
    assert not (root / "new").exists()  # nothing made for a refused write
    assert on_disk(root, "ops/backups.md").decode() == BACKUPS


def test_save_losing_a_create_race_is_already_exists(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = files._create

    def racing(parent: int, name: str, data: bytes, mode: int | None) -> bool:
        (root / "race.md").write_bytes(b"the other writer's")
        return real(parent, name, data, mode)

    monkeypatch.setattr(files, "_create", racing)
    error = refused(lambda: save(root, "race.md", "mine"))
    assert (error.status, str(error)) == (409, "already exists: race.md")
    assert on_disk(root, "race.md") == b"the other writer's"


def test_a_failed_rename_leaves_the_original_and_no_temp_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("no space left")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="no space left"):
        write_document(root, "ops/backups.md", "new", base_hash=hash_of(root, "ops/backups.md"))
    assert on_disk(root, "ops/backups.md").decode() == BACKUPS
    assert sorted(os.listdir(root / "ops")) == ["backups.md"]


def test_save_through_a_symlinked_folder_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "link").symlink_to(root / "ops")
    error = refused(lambda: save(root, "link/x.md", "x"))
    assert (error.status, str(error)) == (400, "a folder on the path is a file or a symlink: link/x.md")
    assert not (root / "ops" / "x.md").exists()


# --- delete_document and remove (docs/documents.md#how-a-change-is-written) ---


def test_delete_document(root: Path) -> None:
    full = hash_of(root, "ops/backups.md")
    for stale in ("0" * 64, full[:6]):
        error = refused(partial(delete_document, root, "ops/backups.md", base_hash=stale))
        assert (error.status, error.code, str(error)) == (
            409,
            "changed",
            "ops/backups.md changed since it was read, so it was not deleted: "
            f"read it again and decide on what it says now (hash now {BACKUPS_HASH[:12]})",
        )
    assert delete_document(root, "ops//backups.md", base_hash=full[:12]) == "ops/backups.md"
    assert not (root / "ops" / "backups.md").exists()
    missing = refused(lambda: delete_document(root, "ops/backups.md"))
    assert (missing.status, str(missing)) == (404, "no such document: ops/backups.md")
    assert refused(lambda: delete_document(root, "ops")).status == 400  # Markdown only


def test_remove_a_document_or_an_attachment(root: Path) -> None:
    (root / "ops" / "diagram.png").write_bytes(b"png")
    attachment = refused(lambda: remove(root, "ops/diagram.png"))
    assert (attachment.status, str(attachment)) == (
        400,
        "only Markdown files (.md, .markdown, .mdx) can be written: ops/diagram.png",
    )
    assert remove(root, "ops/backups.md", base_hash=hash_of(root, "ops/backups.md")) == "ops/backups.md"


def test_remove_a_subfolder(root: Path) -> None:
    (root / "ops" / "old").mkdir()
    (root / "ops" / "old" / "pg.md").write_text("# Postgres")
    subfolder = refused(lambda: remove(root, "ops/old", base_hash="0" * 64))
    assert (subfolder.status, str(subfolder)) == (
        400,
        "ops/old is a subfolder: base_hash guards one document, so leave it out to delete a subfolder",
    )
    full = refused(lambda: remove(root, "ops"))
    assert (full.status, str(full)) == (
        409,
        "ops is not empty: pass recursive: true to delete everything in it",
    )
    assert remove(root, "ops/old/pg.md") == "ops/old/pg.md"
    assert remove(root, "ops/old/") == "ops/old"
    assert remove(root, "ops", recursive=True) == "ops"
    assert os.listdir(root) == []


@pytest.mark.parametrize("path", [".", ".."])
def test_remove_refuses_the_scope_itself_and_above(root: Path, path: str) -> None:
    error = refused(lambda: remove(root, path, recursive=True))
    assert (error.status, str(error)) == (400, f"path is outside the docs folder: {path}")
    assert (root / "ops" / "backups.md").exists()


def test_remove_does_not_follow_a_symlinked_folder(root: Path) -> None:
    (root / "link.md").symlink_to(root / "ops")
    error = refused(lambda: remove(root, "link.md", recursive=True))
    assert (error.status, str(error)) == (404, "no such document: link.md")
    assert (root / "ops" / "backups.md").exists()


def test_a_lone_surrogate_in_sent_text_is_refused_and_nothing_is_written(root: Path) -> None:
    before = on_disk(root, "ops/backups.md")
    for call, char in (
        (lambda: write_document(root, "ops/new.md", "bad \ud800 text"), "D800"),
        (lambda: write_document(root, "ops/backups.md", "bad \udfff", append=True), "DFFF"),
        (lambda: save(root, "ops/backups.md", "\ud801", overwrite=True), "D801"),
    ):
        error = refused(call)
        assert (error.status, str(error)) == (
            400,
            f"the text holds a lone surrogate (U+{char}), which is not Unicode text: remove it",
        )
    assert on_disk(root, "ops/backups.md") == before
    assert not (root / "ops" / "new.md").exists()
