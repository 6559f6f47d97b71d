"""What a doctor run looks at: the docs dir (one folder, or the server's directory of folders), the
data dir its index lives in, and the settings in effect (docs/doctor.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragdown.settings import ServerSettings

if TYPE_CHECKING:
    from ragdown.indexing.sync import SyncReport


@dataclass(frozen=True)
class Target:
    """`folders_mode`: `docs_dir` holds folders (the server's RAGDOWN_DOCS_DIR); else it is one
    folder (`ragdown doctor FOLDER`, as `ragdown index FOLDER`). `last_sync`: a running server's
    latest sync report, whose failed files are named."""

    docs_dir: Path
    data_dir: Path
    folders_mode: bool
    settings: ServerSettings
    last_sync: SyncReport | None = None
