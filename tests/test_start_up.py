"""Start-up: what a command imports before it answers, and the warm-up (docs/design.md#start-up)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.engine import Engine
from ragdown.indexing.embedders.base import Embedder
from ragdown.settings import ServerSettings
from tests.conftest import WriteDoc, run_cli

HEAVY = ["numpy", "pyarrow", "lancedb", "onnxruntime", "tokenizers"]


def loaded_after(script: str, modules: list[str], env: dict[str, str] | None = None) -> dict[str, bool]:
    """Run `script` in a fresh interpreter and say which of `modules` it left imported."""
    probe = f"{script}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {modules!r}}}))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.slow  # a real process (or the real S3 API) for seconds: the slow tier
def test_the_stdio_handshake_needs_none_of_the_engines_stack() -> None:
    """What `ragdown stdio` imports before it answers `initialize`: the CLI, the folder checks, the
    deferred engine and the tools, with their MCP server built."""
    script = (
        "from ragdown import cli\n"
        "from ragdown.folders.dir_checks import check_docs_dir\n"
        "from ragdown.folders.scope import Scope\n"
        "from ragdown.serving.deferred import DeferredEngine\n"
        "from ragdown.serving.tools import Endpoint, build_server\n"
        "build_server(Endpoint(engine=None, scope=Scope(), name='n', title='t', local=True))\n"
        # The embedder's name is checked before the answer: numpy comes with the embedder, not its name.
        "from ragdown.indexing.embedders.registry import check_embedder_name\n"
        "check_embedder_name('minilm')\n"
        "from ragdown.serving.stdio_session import stdio_engine, serve_stdio"
    )
    assert loaded_after(script, HEAVY) == dict.fromkeys(HEAVY, False)


SCORING = ["ragdown.evaluation.command", "ragdown.evaluation.golden", "ragdown.evaluation.run"]


@pytest.mark.slow  # a real process (or the real S3 API) for seconds: the slow tier
def test_the_parser_takes_evals_options_without_its_scoring() -> None:
    """Every command builds the whole parser: `eval`'s options come without the modules that score."""
    script = "from ragdown.cli import build_parser\nbuild_parser()"
    assert loaded_after(script, SCORING) == dict.fromkeys(SCORING, False)


# The index's own modules: a search answered from the snapshot imports none of them.
INDEX_PARTS = [
    "lancedb",
    "ragdown.indexing.store",
    "ragdown.indexing.sync",
    "ragdown.indexing.watcher",
    "ragdown.engine.lifecycle",
    "ragdown.catalog",
]


@pytest.mark.slow  # a real process (or the real S3 API) for seconds: the slow tier
def test_a_search_from_the_snapshot_imports_none_of_the_index() -> None:
    """What `ragdown search` imports to answer from the snapshot (docs/design.md#start-up): the
    search, the snapshot and the embedder's loading, not the store, the syncer or the lifecycle."""
    script = (
        "from ragdown import cli\n"
        "from ragdown.engine import Engine, index_location, load_embedder\n"
        "from ragdown.engine.snapshot_engine import SnapshotEngine\n"
        "from ragdown.indexing.embedder_loading import load_beside\n"
    )
    assert loaded_after(script, INDEX_PARTS) == dict.fromkeys(INDEX_PARTS, False)


@pytest.mark.slow  # a real process (or the real S3 API) for seconds: the slow tier
def test_lancedb_imports_without_its_rest_client_and_still_works(tmp_path: Path) -> None:
    script = (
        "from ragdown.indexing.lance_import import import_lancedb\n"
        "import sys\n"
        "lancedb = import_lancedb()\n"
        f"db = lancedb.connect({str(tmp_path / 'db')!r})\n"
        "table = db.create_table('t', data=[{'id': 1, 'text': 'a deferred package'}])\n"
        "from lancedb.index import FTS\n"
        "table.create_index('text', config=FTS())\n"
        "found = table.search('deferred', query_type='fts').limit(1).to_list()\n"
        "assert [row['id'] for row in found] == [1], found\n"
        "assert 'lance_namespace_urllib3_client.api' not in sys.modules\n"
        "import lance_namespace_urllib3_client as client\n"
        "assert client.TableApi.__name__ == 'TableApi'  # the deferred __init__ runs on first use\n"
    )
    loaded = loaded_after(script, ["lance_namespace_urllib3_client.api", "lancedb"])
    assert loaded == {"lance_namespace_urllib3_client.api": True, "lancedb": True}


@pytest.mark.slow  # a real process (or the real S3 API) for seconds: the slow tier
def test_a_deferred_package_refuses_a_name_it_does_not_have() -> None:
    script = (
        "from ragdown.indexing.lance_import import import_lancedb\n"
        "import_lancedb()\n"
        "import lance_namespace_urllib3_client as client\n"
        "try:\n"
        "    client.NoSuchName\n"
        "except AttributeError as error:\n"
        "    assert 'NoSuchName' in str(error)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    assert loaded_after(script, ["lance_namespace_urllib3_client.api"]) == {
        "lance_namespace_urllib3_client.api": True
    }


def test_the_warm_up_search_is_not_logged(
    make_engine: Callable[..., Engine], write: WriteDoc, data_dir: Path
) -> None:
    write("ops/backup.md", "# Backups\n\nRestore from the nightly snapshot.\n")
    engine = make_engine(settings=ServerSettings(query_log=True))
    engine.sync()
    engine.warm()
    log = data_dir / "query-log.jsonl"
    assert not log.exists() or "warm-up" not in log.read_text(encoding="utf-8")
    engine.recall("nightly snapshot", 3)
    assert "nightly snapshot" in log.read_text(encoding="utf-8")


@pytest.mark.slow
def test_an_unchanged_folder_is_synced_without_loading_the_model(
    minilm: Embedder, write: WriteDoc, docs: Path, data_dir: Path
) -> None:
    """The real model, as `ragdown index` loads it: the ONNX session is made on the first embedding,
    so a second sync of the same files never imports ONNX Runtime."""
    write("a.md", "# A\n\nThe first note.\n")
    first = run_cli("index", str(docs), "--data-dir", str(data_dir))
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["added"] == 1
    script = (
        "from ragdown.cli import main\n"
        f"assert main(['index', {str(docs)!r}, '--data-dir', {str(data_dir)!r}]) == 0\n"
    )
    loaded = loaded_after(script, ["onnxruntime", "lancedb"], env=dict(os.environ))
    # Nor LanceDB: the search snapshot says nothing changed (docs/design.md#search-snapshot).
    assert loaded == {"onnxruntime": False, "lancedb": False}
    write("b.md", "# B\n\nA second note.\n")
    assert loaded_after(script, ["onnxruntime"], env=dict(os.environ)) == {"onnxruntime": True}
