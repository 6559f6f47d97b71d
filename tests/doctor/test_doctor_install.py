"""`ragdown doctor` on the install: the embedder's files, the data dir, tokens and a reader's primary
(docs/doctor.md)."""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ragdown.indexing.embedders.hub import model_dir
from ragdown.indexing.embedders.hub_models import BGE_SMALL
from tests.doctor.conftest import Server, status


def test_a_healthy_server_is_ok_on_every_line(server: Server) -> None:
    found = server.doctor()
    assert found.code == 0
    assert {c["check"]: c["status"] for c in found.checks if c["status"] != "ok"} == {}
    assert found.lines["indexed files"] == "ok    indexed files: all 3 files are indexed as they are on disk"


def test_the_packaged_minilm_matches_its_pins(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_EMBEDDER", "minilm")
    found = server.doctor()
    assert found.lines["embedder files"] == (
        "ok    embedder files: minilm's model and tokenizer match their pinned SHA-256"
    )


def test_a_hub_model_missing_or_altered_fails(
    server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    monkeypatch.setenv("RAGDOWN_MODELS", str(models))
    monkeypatch.setenv("RAGDOWN_EMBEDDER", "bge-small")
    missing = server.doctor()
    assert missing.code == 1
    where = model_dir(models, BGE_SMALL)
    model = where / "onnx" / "model_quantized.onnx"
    assert missing.lines["embedder files"].startswith(
        f"fail  embedder files: bge-small: {model} is missing; delete the file"
    )
    (where / "onnx").mkdir(parents=True)
    (where / "onnx" / "model_quantized.onnx").write_bytes(b"not the model")
    altered = server.doctor()
    assert altered.code == 1
    assert "does not match its pinned SHA-256 (expected 6c9c6101" in altered.lines["embedder files"]


def test_a_data_dir_open_to_others_fails(server: Server) -> None:
    os.chmod(server.data, 0o755)
    (server.data / "meta.json").chmod(0o644)
    found = server.doctor()
    assert found.code == 1
    line = found.lines["data dir modes"]
    assert line.startswith("fail  data dir modes: 2 entr(ies) in the data dir are open to others: ")
    assert f"{server.data} (0755)" in line
    assert f"{server.data / 'meta.json'} (0644)" in line
    assert line.endswith(f"run `chmod -R go-rwx {server.data}` (ragdown serve also tightens them at start)")


def test_a_data_dir_that_is_a_file_fails(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("RAGDOWN_DATA_DIR", str(tmp_path / "afile"))
    found = server.doctor()
    assert found.code == 1
    assert found.lines["data dir"] == (
        f"fail  data dir: {tmp_path / 'afile'} is a file; point RAGDOWN_DATA_DIR at a directory"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_data_dir_this_user_cannot_write_fails(server: Server) -> None:
    os.chmod(server.data, 0o500)
    try:
        found = server.doctor()
    finally:
        os.chmod(server.data, 0o700)
    assert found.code == 1
    assert found.lines["data dir"].startswith(f"fail  data dir: {server.data} is not writable by this user")


def test_one_token_for_two_server_roles_fails(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_TOKEN", "same-secret")
    monkeypatch.setenv("RAGDOWN_ADMIN_TOKEN", "same-secret")
    found = server.doctor()
    assert found.code == 1
    assert found.lines["tokens"] == (
        "fail  tokens: one token serves two roles: RAGDOWN_TOKEN and RAGDOWN_ADMIN_TOKEN; give each role and "
        "each folder a token of its own (`ragdown token NAME` makes a folder's)"
    )
    assert "same-secret" not in "\n".join(found.lines.values())


def test_a_folder_token_equal_to_another_folders_or_the_servers_fails(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdown.folders.registry import token_digest

    entry = f'{{"name": "team", "sha256": "{token_digest("shared")}"}}'
    server.write("ops/.ragdown.json", f'{{"mcp": true, "tokens": [{entry}]}}')
    server.write("notes/.ragdown.json", f'{{"tokens": [{entry}]}}')
    found = server.doctor()
    assert found.code == 1
    assert (
        "one token serves two roles: folder notes's tokens and folder ops's tokens" in found.lines["tokens"]
    )
    server.write("notes/.ragdown.json", "{}")
    monkeypatch.setenv("RAGDOWN_TOKEN", "shared")
    again = server.doctor()
    assert "RAGDOWN_TOKEN and folder ops's tokens" in again.lines["tokens"]
    assert status(again, "tokens") == "fail"


def test_a_reader_whose_primary_is_away_fails(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_ROLE", "reader")
    found = server.doctor()
    assert found.code == 1
    assert found.lines["primary"].startswith(
        f"fail  primary: the primary at unix://{server.data / 'primary.sock'} does not answer"
    )


def test_a_non_reader_has_no_primary_to_reach(server: Server) -> None:
    assert server.doctor().lines["primary"] == (
        "ok    primary: this server is not a reader (RAGDOWN_ROLE=auto): nothing to reach"
    )


class Ping(BaseHTTPRequestHandler):
    """A primary's internal API as far as a probe goes: /internal/ping answers 200."""

    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/internal/ping" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


def test_a_reader_names_the_primary_and_the_index_it_serves(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    primary = ThreadingHTTPServer(("127.0.0.1", 0), Ping)
    thread = threading.Thread(target=primary.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{primary.server_address[1]}"
    monkeypatch.setenv("RAGDOWN_ROLE", "reader")
    monkeypatch.setenv("RAGDOWN_PRIMARY_URL", url)
    monkeypatch.setenv("RAGDOWN_INTERNAL_TOKEN", "internal-secret")
    try:
        found = server.doctor()
    finally:
        primary.shutdown()
        primary.server_close()
    assert found.lines["primary"] == (
        f"ok    primary: the primary at {url} answers; this reader serves index table lance version "
        f"{found.lines['index'].rsplit('version ', 1)[1]}, built with hash"
    )
