"""docs/documents.md#remember `ragdown_remember`: where it writes, the name, supersedes and the exact front
matter."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ragdown.documents.remember import RememberResult, remember, slug
from ragdown.errors import Refusal

DAY = date(2026, 3, 14)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "embedder.md").write_text("# Embedder\n\nbge-small.")
    (folder / "ops").mkdir()
    return folder


def note(root: Path, **kwargs: Any) -> RememberResult:
    args: dict[str, Any] = {"title": "Kafka retention", "content": "Retention is seven days."}
    args.update(notes_dir="notes", at_folder_root=True, today=DAY)
    args.update(kwargs)
    return remember(root, **args)


def refused(call: Callable[[], object]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        call()
    return caught.value


def test_exact_front_matter_and_never_overwriting(root: Path) -> None:
    first = note(root, tags=["ops"], name="kafka")
    second = note(root, tags=["ops"], name="kafka")
    third = note(root, tags=["ops"], name="kafka")
    assert [first.path, second.path, third.path] == ["notes/kafka.md", "notes/kafka-2.md", "notes/kafka-3.md"]
    assert (root / "notes" / "kafka.md").read_text() == (
        '---\ntitle: "Kafka retention"\ndate: 2026-03-14\ntags: ["ops"]\n'
        "created_by: ragdown_remember\n---\nRetention is seven days.\n"
    )


def test_every_optional_line_in_order_and_content_trimmed(root: Path) -> None:
    result = note(
        root,
        title='Say "hi" — café',
        content="\nBody.  \n\n\n",
        tags=["a", "b/c"],
        name="all",
        supersedes=["notes/embedder.md"],
        session_id="session-1",
    )
    assert result == RememberResult("notes/all.md", ["notes/embedder.md"])
    assert (root / "notes" / "all.md").read_text() == (
        '---\ntitle: "Say \\"hi\\" — café"\ndate: 2026-03-14\ntags: ["a", "b/c"]\n'
        'supersedes: ["embedder.md"]\ncreated_by: ragdown_remember\nsession: "session-1"\n---\n\nBody.\n'
    )


def test_supersedes_is_written_relative_to_the_new_documents_folder(root: Path) -> None:
    (root / "ops" / "old.md").write_text("# Old")
    result = note(root, name="deep/new", supersedes=["ops/old.md", "./notes/embedder.md"])
    assert result == RememberResult("notes/deep/new.md", ["ops/old.md", "notes/embedder.md"])
    text = (root / "notes" / "deep" / "new.md").read_text()
    assert 'supersedes: ["../../ops/old.md", "../embedder.md"]\n' in text


def test_supersedes_is_checked_before_anything_is_written(root: Path) -> None:
    outside = refused(lambda: note(root, name="x", supersedes=["notes/embedder.md", "../outside.md"]))
    assert str(outside) == "supersedes is outside the documents folder: ../outside.md"
    missing = refused(lambda: note(root, name="x", supersedes=["notes/missing.md"]))
    assert str(missing) == "supersedes names no document in this folder: notes/missing.md"
    assert refused(lambda: note(root, name="x", supersedes=["ops"])).message.startswith("supersedes names no")
    assert str(refused(lambda: note(root, name="x", supersedes=["/etc/passwd"]))).endswith(": /etc/passwd")
    assert sorted(p.name for p in (root / "notes").iterdir()) == ["embedder.md"]


def test_a_name_that_escapes_the_notes_dir_is_refused(root: Path) -> None:
    for name in ("../../outside", "../ops/x", "/tmp/x"):
        error = refused(partial(note, root, name=name))
        assert str(error) == f"document name escapes the documents folder: {name}"
    assert not (root.parent / "outside.md").exists()
    assert not (root / "ops" / "x.md").exists()


def test_default_name_is_the_utc_date_and_a_slug(root: Path) -> None:
    assert note(root, title="Kafka: retention & lag!").path == "notes/2026-03-14-kafka-retention-lag.md"
    assert note(root, title="Kafka: retention & lag!").path == "notes/2026-03-14-kafka-retention-lag-2.md"
    assert note(root, title="🎉🎉", name="").path == "notes/2026-03-14-note.md"
    today = remember(root, title="T", content="c", notes_dir="notes", at_folder_root=True)
    assert len(today.path) == len("notes/YYYY-MM-DD-t.md")


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Café Déjà vu", "cafe-de-ja-vu"),  # NFKD splits the accent off, and a mark is a separator
        ("Ünïcödé", "u-ni-co-de"),
        ("  --Hello,   World--  ", "hello-world"),
        ("🎉 Launch 🚀 day 🎉", "launch-day"),
        ("ﬁle ①", "file-1"),  # compatibility forms decompose
        ("Straße 2024", "straße-2024"),
        ("日本語のメモ", "日本語のメモ"),
        ("", "note"),
        ("!!!", "note"),
        ("🎉", "note"),
    ],
)
def test_slug(title: str, expected: str) -> None:
    assert slug(title) == expected


def test_long_titles_are_cut_to_60_characters() -> None:
    assert slug("a" * 100) == "a" * 60
    cut = slug("word " * 30)
    assert len(cut) == 60
    assert cut.startswith("word-word")


def test_a_folder_scope_uses_the_notes_dir_and_a_subfolder_scope_itself(root: Path) -> None:
    assert note(root, name="root", notes_dir=".").path == "root.md"
    assert note(root, name="n", notes_dir="memory/agent/").path == "memory/agent/n.md"
    assert (root / "memory" / "agent" / "n.md").is_file()
    sub = note(root / "ops", name="ops-note", at_folder_root=False)
    assert sub.path == "ops-note.md"
    assert (root / "ops" / "ops-note.md").is_file()
    # At a subfolder scope supersedes still resolve against the scope, not the folder.
    (root / "ops" / "old.md").write_text("# Old")
    assert note(root / "ops", name="new", at_folder_root=False, supersedes=["old.md"]).supersedes == [
        "old.md"
    ]
    above = refused(
        lambda: note(root / "ops", name="y", at_folder_root=False, supersedes=["../notes/embedder.md"])
    )
    assert str(above) == "supersedes is outside the documents folder: ../notes/embedder.md"
