"""A reader's engine answered from the search snapshot its primary writes, without LanceDB
(docs/design.md#readers-from-the-snapshot): searches, the hook, lists, reads and counts. What it
does not answer (a sync, a rebuild, a switch of model) is the index's, which `serving/node.py` opens
on first need behind `serving/deferred.DeferredEngine`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ragdown.engine.searcher import Searcher
from ragdown.engine.snapshot_engine import SnapshotEngine
from ragdown.indexing.active import meta_for
from ragdown.indexing.index_location import index_location
from ragdown.indexing.snapshot.follow import FollowedSnapshot
from ragdown.indexing.snapshot.store import SnapshotStore, current_snapshot
from ragdown.settings import ServerSettings

if TYPE_CHECKING:
    from ragdown.hook.session_memory import SessionMemory
    from ragdown.indexing.embedders import Embedder
    from ragdown.indexing.sync import SyncReport


class FollowedIndex:
    """What a searcher and a reader of documents use of an index, over the followed snapshot."""

    def __init__(self, followed: FollowedSnapshot, embedder: Embedder, source: str) -> None:
        self.followed = followed
        self.embedder = embedder
        self.source = source

    @property
    def store(self) -> SnapshotStore:
        return self.followed.current()

    def searched(self) -> tuple[SnapshotStore, Embedder]:
        return self.followed.current(), self.embedder


class SnapshotReader(SnapshotEngine):
    """The calls a reader answers, from the snapshot of the index its primary writes, the newest one
    each time. A reader never syncs: what a primary's engine reports of its syncs is constant here."""

    first_sync_done = True
    syncing = False
    pending_files = 0
    last_sync: SyncReport | None = None
    rebuilt_because: str | None = None

    def __init__(
        self,
        docs_dir: Path,
        data_dir: Path,
        index: FollowedIndex,
        settings: ServerSettings,
        *,
        memory: SessionMemory | None,
        folders_mode: bool = False,
        server_config: Path | None = None,
    ) -> None:
        self.docs_dir = docs_dir
        self.data_dir = data_dir
        self.folders_mode = folders_mode
        self.index = index
        super().__init__(
            Searcher(
                index,
                docs_dir,
                data_dir,
                settings,
                ready=lambda: None,  # the index's `searched()` follows the primary
                folders_mode=folders_mode,
                policy=None,
                memory=memory,
                server_config=server_config,
            )
        )

    @classmethod
    def following(
        cls,
        docs_dir: Path,
        data_dir: Path,
        loaded: tuple[Embedder, str],
        settings: ServerSettings,
        *,
        memory: SessionMemory | None,
        folders_mode: bool = False,
        server_config: Path | None = None,
    ) -> SnapshotReader | None:
        """None unless the index is on this disk, its snapshot answers for its newest version and was
        built by the embedder `loaded`, and no setting asks for what only the table answers."""
        location = index_location(data_dir, settings)
        if location.remote or settings.follow_links > 0:
            return None
        embedder, source = loaded
        wanted = meta_for(embedder, source)
        store = current_snapshot(location.data_dir, wanted)
        if store is None:
            return None
        followed = FollowedSnapshot(location.data_dir, store, wanted)
        index = FollowedIndex(followed, embedder, source)
        return cls(
            docs_dir,
            data_dir,
            index,
            settings,
            memory=memory,
            folders_mode=folders_mode,
            server_config=server_config,
        )

    @property
    def embedder(self) -> Embedder:
        return self.index.embedder

    def watch(self, lost: Callable[[], None]) -> Callable[[], None]:
        """`lost()` once no snapshot follows the index (FollowedSnapshot.watch)."""
        return self.index.followed.watch(lost)

    def see_latest(self) -> None:
        """A write made through this reader landed: the next search answers with it."""
        self.index.followed.see_latest()

    def follow_index(self) -> None:
        """Each search looks at the index already (FollowedSnapshot.current)."""

    def is_empty(self) -> bool:
        return self.index.store.count_rows() == 0
