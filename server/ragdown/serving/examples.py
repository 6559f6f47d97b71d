"""`ragdown serve --examples`: the bundled example folders served from a copy of their own
(docs/design.md#where-state-lives), so that what a person or an agent writes while trying ragdown
never lands in the clone's tracked `examples/`.

The copy is made once, at `<cache>/ragdown/examples`; later runs serve it as they find it, with
what was written there. Deleting it starts afresh from the bundled version.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ragdown.errors import CliError

# A clone (an editable install): server/ragdown/serving/examples.py → the repository's examples/, beside
# its pyproject.toml. An installed wheel has none.
BUNDLED = Path(__file__).resolve().parents[3] / "examples"


def examples_copy(cache: Path, bundled: Path = BUNDLED) -> tuple[Path, bool]:
    """The folder to serve (`<cache>/ragdown/examples`), copied from `bundled` when it is not there
    yet, and whether this call made it."""
    target = cache / "ragdown" / "examples"
    if target.exists() or target.is_symlink():
        return target, False
    if not bundled.is_dir() or not (bundled.parent / "pyproject.toml").is_file():
        raise CliError(
            f"--examples serves the examples/ of a clone of the repository, and {bundled} is not one: "
            "set RAGDOWN_DOCS_DIR to the directory that holds your folders instead"
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Copied beside the target and renamed into place: an interrupted copy is never served.
        staging = Path(tempfile.mkdtemp(prefix=".examples-", dir=target.parent))
        try:
            shutil.copytree(bundled, staging / "examples", symlinks=True)
            os.rename(staging / "examples", target)
        except OSError:
            if not target.is_dir():  # another `serve --examples` made it first: serve that one
                raise
            return target, False
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except OSError as error:
        raise CliError(f"cannot copy the examples to {target}: {error.strerror or error}") from None
    return target, True
