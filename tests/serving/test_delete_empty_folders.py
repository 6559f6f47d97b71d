"""Deleting a document from the web UI (`DELETE /api/doc`) removes the sub-folders it leaves empty, up
to the folder, never the folder itself, and never a sub-folder that still holds anything
(docs/web.md#screens)."""

from __future__ import annotations

from tests.serving.conftest import Served


def write(served: Served, files: dict[str, str | bytes]) -> None:
    for relative, content in files.items():
        path = served.docs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    served.engine.sync()


def delete(served: Served, path: str) -> None:
    with served.admin() as http:
        answer = http.delete("/api/doc", params={"path": path})
    assert answer.status_code == 200, answer.text


def test_the_last_document_of_a_sub_folder_takes_the_empty_folders_with_it(served: Served) -> None:
    write(served, {"ops/deep/er/note.md": "# Note\n"})
    delete(served, "ops/deep/er/note.md")
    assert not (served.docs / "ops" / "deep").exists()
    delete(served, "ops/db/vacuum.md")
    assert not (served.docs / "ops" / "db").exists()
    assert (served.docs / "ops" / "backups.md").exists()
    with served.admin() as http:
        paths = [d["path"] for d in http.get("/api/docs", params={"folder": "ops"}).json()["docs"]]
    assert paths == ["ops/backups.md", "ops/cache.md"]


def test_a_sub_folder_that_still_holds_anything_stays(served: Served) -> None:
    write(
        served,
        {
            "ops/pics/shot.md": "# Shot\n",
            "ops/pics/shot.png": b"\x89PNG\r\n",
            "ops/two/one.md": "# One\n",
            "ops/two/other.md": "# Other\n",
            "ops/two/empty/.keep": "",
        },
    )
    delete(served, "ops/pics/shot.md")
    delete(served, "ops/two/one.md")
    assert (served.docs / "ops" / "pics" / "shot.png").exists()
    assert (served.docs / "ops" / "two" / "other.md").exists()
    assert (served.docs / "ops" / "two" / "empty" / ".keep").exists()


def test_the_folder_itself_stays_when_its_last_document_goes(served: Served) -> None:
    write(served, {"solo/only.md": "# Only\n"})
    delete(served, "solo/only.md")
    assert (served.docs / "solo").is_dir()
    delete(served, "private/diary.md")
    assert (served.docs / "private").is_dir()
