"""Following links (docs/search.md#following-links): a hit's own wikilinks bring the linked documents' closest
sections.

An incident note that links its runbook answers "what do we do" only together with the runbook;
the link says so more reliably than similarity does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ragdown.documents.link_finder import find_links
from ragdown.documents.links import LinkIndex, resolve_wikilink
from ragdown.indexing.derived import vector_matrix
from ragdown.indexing.schema import sql_string
from ragdown.indexing.searched import SearchedStore
from ragdown.search.fusion import Candidate
from ragdown.search.hybrid import HIT_COLUMNS, Hit, to_hit

SECTIONS_PER_LINK = 2

FolderOf = Callable[[str], str]


def whole_index(_path: str) -> str:
    """Single-folder mode: every path is in the one folder, whose prefix is empty."""
    return ""


class LinkResolver:
    """Resolves wikilinks within the linking document's folder (`folder_of` gives its path prefix)."""

    def __init__(self, aliases: Mapping[str, list[str]], folder_of: FolderOf = whole_index) -> None:
        self.aliases = aliases
        self.folder_of = folder_of
        self._indexes: dict[str, LinkIndex] = {}

    def _index(self, prefix: str) -> LinkIndex:
        index = self._indexes.get(prefix)
        if index is None:
            index = self._indexes[prefix] = LinkIndex.of_folder(self.aliases, prefix)
        return index

    def linked_documents(self, hit: Hit) -> list[str]:
        """The documents the hit's own chunk links to, in link order, itself excluded."""
        prefix = self.folder_of(hit.path)
        index = self._index(prefix)
        found: dict[str, None] = {}
        for link in find_links(hit.text, wiki_only=True):
            resolved = resolve_wikilink(index, link.raw, hit.path[len(prefix) :])
            if resolved is not None and prefix + resolved.path != hit.path:
                found.setdefault(prefix + resolved.path, None)
        return list(found)


def closest_sections(
    store: SearchedStore, path: str, where: str | None, vector: np.ndarray, exclude: set[str]
) -> list[tuple[dict[str, object], float]]:
    """The linked document's chunks nearest the query, from the stored vectors; `where` keeps every
    search filter (a superseded or filtered-out document yields nothing)."""
    clause = f"path = {sql_string(path)}" + (f" AND ({where})" if where else "")
    table = store.chunks([*HIT_COLUMNS, "vector"], clause)
    if table.num_rows == 0:
        return []
    similarities = (vector_matrix(table) @ vector).tolist()
    rows = table.drop_columns(["vector"]).to_pylist()
    ranked = sorted(zip(rows, similarities, strict=True), key=lambda pair: pair[1], reverse=True)
    return [(row, sim) for row, sim in ranked if row["id"] not in exclude][:SECTIONS_PER_LINK]


def follow_links(
    hits: list[Hit],
    count: int,
    resolver: LinkResolver,
    store: SearchedStore,
    where: str | None,
    vector: np.ndarray,
    limit: int,
) -> list[Hit]:
    """Each of the first `count` hits is followed by its linked documents' closest sections, scored
    like the hit (`sources: ["link"]`, their own similarity); the list is cut to `limit`."""
    if count <= 0:
        return hits
    present = {h.id for h in hits}
    result: list[Hit] = []
    for position, hit in enumerate(hits):
        result.append(hit)
        if position >= count:
            continue
        for path in resolver.linked_documents(hit):
            for row, similarity in closest_sections(store, path, where, vector, present):
                present.add(str(row["id"]))
                result.append(to_hit(Candidate(row, similarity, hit.score, ["link"])))
    return result[:limit]
