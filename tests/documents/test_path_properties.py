"""Properties of the path rule (docs/security.md): for any string, `check_path` refuses it or yields
parts that stay inside the root; and whatever path an agent sends, `documents/files.py` never reads
or writes through a symlink to outside the folder."""

from __future__ import annotations

import contextlib
import os
import posixpath
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdown.documents import files
from ragdown.documents.files import Root
from ragdown.documents.paths import MAX_NAME_BYTES, MAX_PATH_BYTES, check_path, control_character
from ragdown.errors import Refusal

# Pieces hostile paths are made of, mixed with anything at all.
PIECES = st.sampled_from(
    [
        "..",
        ".",
        "",
        "/",
        "\\",
        "a",
        "ops",
        "etc",
        "out",
        "link",
        ".hidden",
        "node_modules",
        "x.md",
        "%2e%2e",
        "\uff0e\uff0e",
        "\u2025",
        "\uff0f",
        "\0",
        "\n",
        "C:",
        "a" * 300,
        "é" * 200,
    ]
)
PATHS = st.one_of(
    st.text(max_size=80),
    st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=12).map("/".join),
    st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=12).map("\\".join),
)
PROPERTY = settings(max_examples=600, deadline=None, derandomize=True, database=None)


def _refusal(path: str, markdown_only: bool) -> Refusal | None:
    try:
        check_path(path, markdown_only=markdown_only)
    except Refusal as refusal:
        return refusal
    return None


@PROPERTY
@given(PATHS, st.booleans())
def test_a_checked_path_never_leaves_the_root(path: str, markdown_only: bool) -> None:
    refusal = _refusal(path, markdown_only)
    if refusal is not None:
        assert refusal.status == 400
        assert control_character(str(refusal)) is None  # a refusal is one readable line
        return
    checked = check_path(path, markdown_only=markdown_only)
    root = "/srv/docs"
    joined = posixpath.normpath(posixpath.join(root, *checked.parts))
    assert joined.startswith(root + "/")
    for part in checked.parts:
        assert part not in ("", ".", "..")
        assert not part.startswith(".")
        assert not any(c in part for c in "/\\\0")
        assert control_character(part) is None
        assert len(part.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES
    assert len(checked.relative.encode("utf-8", "surrogatepass")) <= MAX_PATH_BYTES
    assert checked.relative == "/".join(checked.parts)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/ops with symlinks out of it at every level, and a secret outside."""
    base = tmp_path_factory.mktemp("paths")
    (base / "outside").mkdir()
    (base / "outside" / "secret.md").write_text("SECRET")
    ops = base / "docs" / "ops"
    (ops / "sub").mkdir(parents=True)
    (ops / "a.md").write_text("# A\n")
    (ops / "out").symlink_to(base / "outside")
    (ops / "sub" / "out").symlink_to("../../../outside")
    (ops / "secret.md").symlink_to(base / "outside" / "secret.md")
    (ops / "etc").symlink_to("/etc")
    return base


def _outside(base: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((base / "outside").iterdir())}


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.sampled_from(["out", "sub", "etc", "secret.md", "a.md", "..", "passwd", "x.md"]),
        min_size=1,
        max_size=5,
    )
)
def test_no_read_or_write_reaches_through_a_symlink(sandbox: Path, parts: list[str]) -> None:
    root = Root(Path(os.path.realpath(sandbox / "docs")), ("ops",))
    before = _outside(sandbox)
    try:
        checked = check_path("/".join(parts), markdown_only=False)
    except Refusal:
        return
    try:
        data = files.read_file(root, checked.parts)
    except Refusal:
        data = None
    assert data is None or (b"SECRET" not in data and b"root:" not in data)
    with contextlib.suppress(Refusal, OSError):
        files.update(root, checked.parts, lambda current: b"WRITTEN" if current is None else None)
    assert _outside(sandbox) == before
    assert not (sandbox / "outside" / "x.md").exists()
    created = Path(os.path.realpath(sandbox / "docs" / "ops")).joinpath(*checked.parts)
    if (
        created.exists()
        and not created.is_symlink()
        and created.is_file()
        and created.read_bytes() == b"WRITTEN"
    ):
        created.unlink()  # a legitimate write inside the folder: leave the sandbox as it was
