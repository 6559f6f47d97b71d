"""What searches derive from the rows, the same whether the rows come from LanceDB or from the
search snapshot: the paths superseded documents hide, and each document's aliases."""

from __future__ import annotations

import pyarrow as pa

from ragdown.documents.metadata import supersedes_boundary, within


def superseded_in(rows: pa.Table, folders_mode: bool) -> frozenset[str]:
    """Every path some row's document supersedes inside its own boundary (folders_mode: its folder;
    documents/metadata.supersedes_boundary): rows an older version wrote are checked again here, so
    no folder's document hides another's. `rows` has `path` and `supersedes`."""
    sources, targets = (rows.column(c).to_pylist() for c in ("path", "supersedes"))
    return frozenset(
        target
        for source, value in zip(sources, targets, strict=True)
        if value
        for target in value.split("\n")
        if target and within(supersedes_boundary(source, folders_mode), target)
    )


def aliases_in(rows: pa.Table) -> dict[str, list[str]]:
    """Each document's aliases, from its first chunk's row (`rows`: `path` and `aliases`, chunk 0)."""
    paths, aliases = (rows.column(c).to_pylist() for c in ("path", "aliases"))
    return {path: [a for a in value.split("\n") if a] for path, value in zip(paths, aliases, strict=True)}
