"""Changing folders (`ragdown.folders.manage`, docs/tools.md#folder-routes), called directly on a
real docs dir: the folder name rule, exclusive creation, every setting validated before anything is
written, and the managed-folder rules the operator relies on — a manager adopts by naming itself,
releases only its own folders, deletes only the folders it created, and never renames one.

The same rules seen through `/api/folders` are in tests/serving/test_folders_api.py; these pin each
rule where it lives, including the cases HTTP does not reach."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ragdown.errors import Refusal
from ragdown.folders.manage import (
    FOLDER_TOOLS,
    FOLDER_WRITE_TOOLS,
    MAX_MANAGER,
    MAX_TOKENS,
    check_manager,
    create_folder,
    delete_folder,
    folder_name_error,
    managed_refusal,
    patch_folder,
)
from ragdown.folders.registry import Folder, read_folder

MANAGER = "RagdownFolder team/work"
OTHER = "RagdownFolder team/other"
DIGEST = hashlib.sha256(b"team-a-token").hexdigest()


def settings(docs: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((docs / name / ".ragdown.json").read_text(encoding="utf-8")))


def refused(call: Callable[[], object]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        call()
    return caught.value


def make(docs: Path, name: str, config: dict[str, Any] | None = None, **documents: str) -> Path:
    """A folder as a person makes one by hand: a directory, maybe a `.ragdown.json`, some documents."""
    folder = docs / name
    folder.mkdir()
    if config is not None:
        (folder / ".ragdown.json").write_text(json.dumps(config), encoding="utf-8")
    for document, text in documents.items():
        (folder / document).write_text(text, encoding="utf-8")
    return folder


def patch(docs: Path, name: str, changes: dict[str, Any], caller: str | None = None) -> Folder:
    folder, _ = patch_folder(docs, name, changes, caller=caller, can_rename=True)
    return folder


# --- the folder name ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "Ops", "My notes", "team_a.v2-old", "_private", "9", "x" * 64])
def test_valid_folder_names(name: str) -> None:
    assert folder_name_error(name) is None


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".hidden",
        "-dash",
        " pad",
        "pad ",
        "x" * 65,
        "a/b",
        "a\\b",
        "..",
        "node_modules",
        "café",
        "a:b",
        "tab\there",
        "a*",
    ],
)
def test_invalid_folder_names(name: str) -> None:
    assert folder_name_error(name) is not None


def test_the_name_message_says_the_rule_and_escapes_what_it_repeats() -> None:
    assert folder_name_error(".git") == (
        'not a valid folder name: ".git" (letters, digits, space, _ . -; up to 64; not starting with . or -)'
    )
    message = folder_name_error("a\nb\u202e")
    assert message is not None
    assert message.startswith('not a valid folder name: "a\\u000ab\\u202e" (')
    long = folder_name_error("x" * 500)
    assert long is not None
    assert len(long) < 250  # a wall of text is cut, with its length said
    assert "(500 characters)" in long


# --- create --------------------------------------------------------------------------------------------


def test_a_new_folder_always_says_whether_it_is_served(docs: Path) -> None:
    made = create_folder(docs, "Work", {"title": "  Work notes  "})
    assert made == Folder(name="Work", title="Work notes", mcp=False)
    assert settings(docs, "Work") == {"title": "Work notes", "mcp": False}
    assert create_folder(docs, "Served", {"mcp": True}).mcp is True
    assert settings(docs, "Served") == {"mcp": True}


def test_creation_records_who_made_it_and_a_managers_name_wins(docs: Path) -> None:
    create_folder(docs, "by-tool", {}, created_by="ragdown_create_folder")
    create_folder(docs, "by-operator", {"managed_by": MANAGER}, created_by="ignored", caller=MANAGER)
    assert settings(docs, "by-tool") == {"mcp": False, "created_by": "ragdown_create_folder"}
    assert settings(docs, "by-operator") == {"mcp": False, "managed_by": MANAGER, "created_by": MANAGER}


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (None, "name is required"),
        ("", "name is required"),
        (3, "name must be a string"),
        (["ops"], "name must be a string"),
        (".hidden", 'not a valid folder name: ".hidden"'),
    ],
)
def test_a_bad_name_creates_nothing(docs: Path, name: object, message: str) -> None:
    refusal = refused(lambda: create_folder(docs, name, {"mcp": True}))
    assert refusal.status == 400
    assert refusal.message.startswith(message), refusal.message
    assert list(docs.iterdir()) == []


@pytest.mark.parametrize(
    ("changes", "caller"),
    [
        ({"mcp": "yes"}, None),
        ({"tokens": "team-a"}, None),
        ({"colour": "red"}, None),
        ({"managed_by": MANAGER}, None),  # only a manager names itself
        ({"managed_by": MANAGER}, OTHER),
    ],
)
def test_bad_settings_create_no_folder(docs: Path, changes: dict[str, Any], caller: str | None) -> None:
    """The settings are checked before the directory is made: nothing is left half made."""
    assert refused(lambda: create_folder(docs, "new", changes, caller=caller)).status == 400
    assert not (docs / "new").exists()


def test_creation_never_takes_over_a_name_that_is_there(docs: Path, tmp_path: Path) -> None:
    make(docs, "ops", {"title": "Mine", "mcp": True}, **{"a.md": "# A\n"})
    (docs / "notes.md").write_text("# Notes\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (docs / "link").symlink_to(outside, target_is_directory=True)
    for name in ("ops", "notes.md", "link"):
        refusal = refused(partial(create_folder, docs, name, {"mcp": True}, caller=MANAGER))
        assert (refusal.status, refusal.message) == (409, f"already exists: {name}")
    assert settings(docs, "ops") == {"title": "Mine", "mcp": True}
    assert (docs / "notes.md").read_text(encoding="utf-8") == "# Notes\n"
    assert list(outside.iterdir()) == []  # nothing written through the symlink


def test_racing_creations_of_one_name_make_it_once(docs: Path) -> None:
    racers = 8
    start = threading.Barrier(racers)
    outcomes: list[str] = []

    def race(index: int) -> None:
        start.wait()
        try:
            create_folder(docs, "shared", {"title": f"racer {index}"})
            outcomes.append(f"made {index}")
        except Refusal as refusal:
            outcomes.append(f"{refusal.status}")

    threads = [threading.Thread(target=race, args=(index,)) for index in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    made = [outcome for outcome in outcomes if outcome.startswith("made")]
    assert len(made) == 1
    assert sorted(outcomes) == sorted([*made, *["409"] * (racers - 1)])
    assert settings(docs, "shared") == {"title": f"racer {made[0].split()[1]}", "mcp": False}


# --- patch: each key validated, nothing written when one is bad ----------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"title": ["Ops"]}, "title must be a string"),
        ({"title": "x" * 201}, "title must be at most 200 characters"),
        ({"title": "a\u2028b"}, "title must be plain text"),
        ({"mcp": None}, "mcp must be true or false"),
        ({"mcp": 1}, "mcp must be true or false"),
        ({"read_only": "false"}, "read_only must be true or false"),
        ({"hook": []}, "hook must be an object with any of top_k, min_score, min_ratio, max_chars"),
        ({"hook": {"topk": 2}}, "unknown hook setting: topk (one of top_k, min_score, min_ratio, max_chars)"),
        ({"hook": {"min_score": float("nan")}}, "hook.min_score must be a number"),
        ({"hook": {"top_k": -1}}, "hook.top_k must be from 0 to 50"),
        ({"hook": {"max_chars": True}}, "hook.max_chars must be a whole number from 0 to 100000"),
        ({"disabled_tools": "ragdown_stats"}, "disabled_tools must be a list of tool names"),
        ({"disabled_tools": ["ragdown_stats", 3]}, "disabled_tools must be a list of tool names"),
        (
            {"disabled_tools": ["ragdown_create_folder"]},
            "unknown tool in disabled_tools: ragdown_create_folder",
        ),
        ({"tokens": {"name": "a", "sha256": DIGEST}}, "tokens must be a list of at most 100"),
        ({"tokens": [{"name": "a", "sha256": DIGEST}] * 101}, "tokens must be a list of at most 100"),
        ({"tokens": [{"name": "a", "sha256": DIGEST, "note": "x"}]}, 'each token is {"name": …'),
        ({"tokens": [{"name": "a b", "sha256": DIGEST}]}, "a token name is 1 to 64 letters"),
        ({"tokens": [{"name": "x" * 65, "sha256": DIGEST}]}, "a token name is 1 to 64 letters"),
        ({"tokens": [{"name": "a", "sha256": DIGEST}, {"name": "a", "sha256": DIGEST}]}, "a token name"),
        ({"tokens": [{"name": "a", "sha256": DIGEST[:-1]}]}, "token a: sha256 must be the 64 hex digits"),
        ({"tokens": [{"name": "a", "sha256": "secret"}]}, "token a: sha256 must be the 64 hex digits"),
        ({"managed_by": OTHER}, "managed_by must equal the X-Ragdown-Manager header"),
        ({"name": ["ops2"]}, "name must be a string"),
        ({"colour": "red", "shade": 1}, "unknown folder setting: colour, shade"),
    ],
)
def test_each_bad_value_is_refused_and_nothing_is_written(
    docs: Path, changes: dict[str, Any], message: str
) -> None:
    folder = make(docs, "ops", {"title": "Ops", "mcp": True, "hook": {"top_k": 2}, "colour": "red"})
    before = (folder / ".ragdown.json").read_bytes()
    # A valid change and a rename beside the bad one: neither happens.
    bad = {"title": "Changed", "read_only": True, "name": "renamed", **changes}
    refusal = refused(lambda: patch(docs, "ops", bad))
    assert refusal.status == 400
    assert refusal.message.startswith(message), refusal.message
    assert (folder / ".ragdown.json").read_bytes() == before
    assert sorted(p.name for p in docs.iterdir()) == ["ops"]


def test_a_managers_name_is_bounded_and_printable(docs: Path) -> None:
    make(docs, "ops")
    for manager in ("x" * (MAX_MANAGER + 1), "RagdownFolder a/b\n"):
        refusal = refused(partial(patch, docs, "ops", {"managed_by": manager}, manager))
        assert refusal.message == f"managed_by must be a string of 1 to {MAX_MANAGER} printable characters"
    assert not (docs / "ops" / ".ragdown.json").exists()


def test_settings_are_stored_in_one_canonical_form(docs: Path) -> None:
    make(docs, "ops", {"mcp": True, "colour": "red"})
    folder = patch(
        docs,
        "ops",
        {
            "title": "  Ops  ",
            "read_only": True,
            "disabled_tools": ["ragdown_stats", "ragdown_list", "ragdown_stats"],
            "tokens": [{"name": "team-a", "sha256": DIGEST.upper()}],
            "hook": {"top_k": 3, "min_ratio": 0.5},
        },
    )
    assert settings(docs, "ops") == {
        "mcp": True,
        "colour": "red",  # a key ragdown does not know is kept
        "title": "Ops",
        "read_only": True,
        "hook": {"top_k": 3, "min_ratio": 0.5},
        "disabled_tools": ["ragdown_list", "ragdown_stats"],
        "tokens": [{"name": "team-a", "sha256": DIGEST}],
    }
    assert folder.token_digests == frozenset({DIGEST})


def test_defaults_and_empty_values_remove_their_keys_but_mcp_stays(docs: Path) -> None:
    make(
        docs,
        "ops",
        {
            "title": "Ops",
            "mcp": True,
            "read_only": True,
            "hook": {"top_k": 3},
            "disabled_tools": ["ragdown_stats"],
            "tokens": [{"name": "a", "sha256": DIGEST}],
        },
    )
    patch(
        docs,
        "ops",
        {"title": " ", "mcp": False, "read_only": False, "hook": None, "disabled_tools": [], "tokens": None},
    )
    assert settings(docs, "ops") == {"mcp": False}


def test_every_folder_tool_may_be_disabled_and_the_write_tools_are_among_them(docs: Path) -> None:
    make(docs, "ops", {"mcp": True})
    assert set(FOLDER_WRITE_TOOLS) < set(FOLDER_TOOLS)
    folder = patch(docs, "ops", {"disabled_tools": list(FOLDER_TOOLS)})
    assert folder.disabled_tools == frozenset(FOLDER_TOOLS)


def test_tokens_may_fill_the_limit(docs: Path) -> None:
    make(docs, "ops")
    tokens = [
        {"name": f"t{i}", "sha256": hashlib.sha256(str(i).encode()).hexdigest()} for i in range(MAX_TOKENS)
    ]
    assert len(patch(docs, "ops", {"tokens": tokens}).token_digests) == MAX_TOKENS


def test_a_change_that_changes_nothing_writes_nothing(docs: Path) -> None:
    """A resync of the operator sends the same settings again and again: the file is left alone."""
    make(docs, "ops", {"title": "Ops", "mcp": True})
    before = (docs / "ops" / ".ragdown.json").stat()
    folder, renamed = patch_folder(
        docs, "ops", {"title": "Ops", "mcp": True, "name": "ops"}, caller=None, can_rename=True
    )
    after = (docs / "ops" / ".ragdown.json").stat()
    assert (folder.title, renamed) == ("Ops", False)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_folder_that_is_not_there_is_404(docs: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (docs / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    for name in ("missing", "link", ".."):
        refusal = refused(partial(patch, docs, name, {"mcp": True}))
        assert refusal.status == 404
        assert refused(partial(delete_folder, docs, name, name, caller=None)).status == 404
    assert list((tmp_path / "outside").iterdir()) == []


# --- rename ----------------------------------------------------------------------------------------------


def test_a_rename_moves_the_folder_with_its_documents_and_settings(docs: Path) -> None:
    make(docs, "ops", {"title": "Ops", "mcp": True}, **{"a.md": "# A\n"})
    folder, renamed = patch_folder(
        docs, "ops", {"name": "runbooks", "mcp": False}, caller=None, can_rename=True
    )
    assert renamed
    assert (folder.name, folder.mcp) == ("runbooks", False)
    assert not (docs / "ops").exists()
    assert (docs / "runbooks" / "a.md").read_text(encoding="utf-8") == "# A\n"
    assert settings(docs, "runbooks") == {"title": "Ops", "mcp": False}


@pytest.mark.parametrize(
    ("new_name", "can_rename", "status", "message"),
    [
        ("private", True, 409, "already exists: private"),
        ("loose.md", True, 409, "already exists: loose.md"),
        (".ops", True, 400, 'not a valid folder name: ".ops"'),
        ("a/b", True, 400, 'not a valid folder name: "a/b"'),
        ("ops2", False, 403, "The server is read-only (RAGDOWN_READ_ONLY)"),
    ],
)
def test_a_rename_that_cannot_be_done_changes_nothing(
    docs: Path, new_name: str, can_rename: bool, status: int, message: str
) -> None:
    make(docs, "ops", {"title": "Ops", "mcp": True}, **{"a.md": "# A\n"})
    make(docs, "private", {"mcp": False})
    (docs / "loose.md").write_text("# Loose\n", encoding="utf-8")
    refusal = refused(
        lambda: patch_folder(
            docs, "ops", {"name": new_name, "mcp": False}, caller=None, can_rename=can_rename
        )
    )
    assert (refusal.status, refusal.message.split(" (letters")[0]) == (status, message)
    assert settings(docs, "ops") == {"title": "Ops", "mcp": True}
    assert settings(docs, "private") == {"mcp": False}
    assert sorted(p.name for p in docs.iterdir()) == ["loose.md", "ops", "private"]


def test_a_read_only_server_still_changes_settings(docs: Path) -> None:
    make(docs, "ops", {"mcp": True})
    folder, renamed = patch_folder(docs, "ops", {"mcp": False, "name": "ops"}, caller=None, can_rename=False)
    assert (folder.mcp, renamed) == (False, False)


# --- managed folders: adopt, release, delete only what was created, never rename -----------------------


def test_the_managed_refusal_names_the_resource_to_edit() -> None:
    refusal = managed_refusal(Folder(name="work", title="work", mcp=True, managed_by=MANAGER))
    assert (refusal.status, refusal.code) == (409, "managed")
    assert refusal.message == (
        "folder work is managed by RagdownFolder team/work: edit RagdownFolder team/work instead "
        "(kubectl edit ragdownfolder work -n team)"
    )
    # A manager that is not a RagdownFolder gets no kubectl line.
    other = managed_refusal(Folder(name="work", title="work", mcp=True, managed_by="a script"))
    assert other.message == "folder work is managed by a script: edit a script instead"


@pytest.mark.parametrize(
    ("managed_by", "caller", "adopting", "code"),
    [
        (None, None, False, None),  # a person edits an unmanaged folder
        (None, MANAGER, True, None),  # a manager adopts one by naming itself
        (None, MANAGER, False, "not_managed"),  # and otherwise leaves it alone
        (MANAGER, MANAGER, False, None),  # a manager edits its own
        (MANAGER, None, False, "managed"),  # a person is sent to the resource
        (MANAGER, OTHER, False, "managed"),  # another manager too
        (MANAGER, OTHER, True, "managed"),  # and cannot take it over
    ],
)
def test_who_may_change_a_folder(
    managed_by: str | None, caller: str | None, adopting: bool, code: str | None
) -> None:
    folder = Folder(name="work", title="work", mcp=True, managed_by=managed_by)
    if code is None:
        check_manager(folder, caller, adopting=adopting)
    else:
        refusal = refused(lambda: check_manager(folder, caller, adopting=adopting))
        assert (refusal.status, refusal.code) == (409, code)


def test_a_manager_adopts_a_folder_edits_it_and_releases_it_to_people(docs: Path) -> None:
    make(docs, "work", {"title": "Work", "mcp": False}, **{"a.md": "# A\n"})
    adopted = patch(docs, "work", {"managed_by": MANAGER, "mcp": True}, MANAGER)
    assert (adopted.managed_by, adopted.mcp) == (MANAGER, True)
    assert patch(docs, "work", {"title": "Work (operator)"}, MANAGER).title == "Work (operator)"
    before = settings(docs, "work")
    for caller in (None, OTHER):
        for changes in ({"mcp": False}, {"managed_by": None}, {"managed_by": caller}):
            refusal = refused(partial(patch, docs, "work", changes, caller))
            assert (refusal.status, refusal.code) == (409, "managed"), (caller, changes)
    assert settings(docs, "work") == before
    released = patch(docs, "work", {"managed_by": None}, MANAGER)
    assert released.managed_by is None
    assert settings(docs, "work") == {"title": "Work (operator)", "mcp": True}
    assert patch(docs, "work", {"mcp": False}).mcp is False  # people's again
    assert refused(lambda: patch(docs, "work", {"mcp": True}, MANAGER)).code == "not_managed"


def test_a_managed_folder_is_never_renamed_even_by_its_manager(docs: Path) -> None:
    make(docs, "work", {"mcp": True, "managed_by": MANAGER})
    for caller in (MANAGER, None):
        refusal = refused(partial(patch, docs, "work", {"name": "renamed"}, caller))
        assert (refusal.status, refusal.code) == (409, "managed")
    assert sorted(p.name for p in docs.iterdir()) == ["work"]


def test_a_manager_deletes_only_a_folder_it_created_and_still_holds(docs: Path) -> None:
    make(docs, "adopted", {"mcp": True}, **{"a.md": "# A\n"})
    patch(docs, "adopted", {"managed_by": MANAGER}, MANAGER)
    kept = refused(lambda: delete_folder(docs, "adopted", "adopted", caller=MANAGER))
    assert (kept.status, kept.code) == (409, "not_created")
    assert (docs / "adopted" / "a.md").is_file()

    create_folder(docs, "made", {"managed_by": MANAGER}, caller=MANAGER)
    assert refused(lambda: delete_folder(docs, "made", "made", caller=OTHER)).code == "managed"
    assert refused(lambda: delete_folder(docs, "made", "made", caller=None)).code == "managed"
    delete_folder(docs, "made", "made", caller=MANAGER)
    assert not (docs / "made").exists()

    create_folder(docs, "let-go", {"managed_by": MANAGER}, caller=MANAGER)
    patch(docs, "let-go", {"managed_by": None}, MANAGER)
    assert refused(lambda: delete_folder(docs, "let-go", "let-go", caller=MANAGER)).code == "not_managed"
    assert (docs / "let-go").is_dir()


def test_a_manager_that_created_another_managers_folder_name_cannot_delete_it(docs: Path) -> None:
    """`created_by` alone is not enough: the folder must still be managed by the caller."""
    make(docs, "work", {"mcp": True, "managed_by": OTHER, "created_by": MANAGER})
    assert refused(lambda: delete_folder(docs, "work", "work", caller=MANAGER)).code == "managed"
    assert read_folder(docs, "work") is not None


# --- delete ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("confirm", [None, "", "OPS", "ops ", "other"])
def test_delete_needs_the_name_repeated_exactly(docs: Path, confirm: str | None) -> None:
    make(docs, "ops", {"mcp": True}, **{"a.md": "# A\n"})
    refusal = refused(lambda: delete_folder(docs, "ops", confirm, caller=None))
    assert (refusal.status, refusal.message) == (400, "confirm must repeat the folder's name: ?confirm=ops")
    assert (docs / "ops" / "a.md").is_file()


def test_delete_removes_the_folder_but_nothing_a_symlink_in_it_points_at(docs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.md").write_text("# Keep\n", encoding="utf-8")
    folder = make(docs, "ops", {"mcp": True, "created_by": "ragdown_create_folder"}, **{"a.md": "# A\n"})
    (folder / "deep" / "er").mkdir(parents=True)
    (folder / "deep" / "er" / "b.md").write_text("# B\n", encoding="utf-8")
    (folder / "deep" / "escape").symlink_to(outside, target_is_directory=True)
    delete_folder(docs, "ops", "ops", caller=None)  # a person may delete what a tool created
    assert list(docs.iterdir()) == []
    assert (outside / "keep.md").read_text(encoding="utf-8") == "# Keep\n"
