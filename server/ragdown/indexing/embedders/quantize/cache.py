"""The cache of int8 builds: where a build lives, its JSON record, and reuse or rebuild on load.

The file is `<cache dir>/<stem>-<12 hex of the source SHA-256>.onnx` beside `<file>.json` (its
SHA-256, the source's, the recipe version, the MatMuls left in float32, the quality figures). A load
re-hashes the file and rebuilds it when it changed or another recipe or source made it. Builds are
deterministic, so concurrent builders write identical files and the last rename wins harmlessly.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragdown.atomic import atomic_file, write_atomic
from ragdown.indexing.embedders.model_files import sha256_file
from ragdown.indexing.embedders.quantize.calibration import Feed
from ragdown.indexing.embedders.quantize.quality import MIN_COSINE, MIN_MEAN_COSINE, QualityReport
from ragdown.indexing.embedders.quantize.quantizer import RECIPE_VERSION, fallback_plans, quantize_model
from ragdown.release_memory import release_free_memory

log = logging.getLogger(__name__)


def cached_model_path(cache_dir: Path, stem: str, source_sha256: str) -> Path:
    return cache_dir / f"{stem}-{source_sha256[:12]}.onnx"


def record_path(model_path: Path) -> Path:
    """The JSON record beside a cached model: its SHA-256, the recipe and the quality figures."""
    return model_path.with_name(model_path.name + ".json")


@dataclass(frozen=True)
class QuantizedModel:
    """A verified quantized model file; `built` says whether this call wrote it."""

    path: Path
    sha256: str
    built: bool
    keep_float: tuple[str, ...]
    quality: QualityReport


def _reuse(path: Path, source_sha256: str) -> QuantizedModel | None:
    """The cached file, if its record matches this source and recipe and its bytes match the record."""
    if not path.is_file():
        return None
    try:
        record = json.loads(record_path(path).read_text(encoding="utf-8"))
        expected = str(record["sha256"])
        quality = QualityReport(
            float(record["quality"]["mean"]), float(record["quality"]["min"]), int(record["quality"]["count"])
        )
        keep_float = tuple(str(name) for name in record["keep_float"])
        matches = record["recipe"] == RECIPE_VERSION and record["source_sha256"] == source_sha256
    except (OSError, ValueError, KeyError, TypeError):
        log.warning("the int8 model %s has no readable record beside it; rebuilding it", path)
        return None
    if not matches:
        log.info("the int8 model %s was built by another recipe or from another source; rebuilding it", path)
        return None
    actual = sha256_file(path)
    if actual != expected:
        log.warning(
            "the int8 model %s does not match its recorded SHA-256 (expected %s, found %s); rebuilding it",
            path,
            expected,
            actual,
        )
        return None
    return QuantizedModel(path, actual, False, keep_float, quality)


def _build(
    source: Path,
    source_sha256: str,
    path: Path,
    check: Callable[[Path], QualityReport],
    calibration: Sequence[Feed],
) -> QuantizedModel | None:
    import onnx

    path.parent.mkdir(parents=True, exist_ok=True)
    for keep_float in fallback_plans(onnx.load(str(source))):
        data = quantize_model(source, keep_float, calibration=calibration).SerializeToString(
            deterministic=True
        )
        with atomic_file(path) as candidate:
            candidate.write(data)
            candidate.sync()
            quality = check(candidate.path)
            if not quality.passed:
                candidate.discard()
        if not quality.passed:
            log.warning(
                "the int8 model with %d MatMuls left in float32 falls short of cosine mean %.2f / "
                "min %.2f against the packaged one (%s)",
                len(keep_float),
                MIN_MEAN_COSINE,
                MIN_COSINE,
                quality,
            )
            continue
        digest = hashlib.sha256(data).hexdigest()
        record = {
            "sha256": digest,
            "source_sha256": source_sha256,
            "recipe": RECIPE_VERSION,
            "keep_float": list(keep_float),
            "quality": {"mean": quality.mean, "min": quality.minimum, "count": quality.count},
        }
        write_atomic(record_path(path), (json.dumps(record, indent=2) + "\n").encode())
        log.info("built the int8 model %s: %s", path, quality)
        return QuantizedModel(path, digest, True, keep_float, quality)
    return None


def ensure_quantized(
    source: Path,
    source_sha256: str,
    cache_dir: Path,
    check: Callable[[Path], QualityReport],
    *,
    stem: str,
    calibration: Callable[[], Sequence[Feed]] = tuple,
    bundled: Sequence[Path] = (),
) -> QuantizedModel | None:
    """The cached int8 model of `source` (verified `source_sha256`), built when missing or changed.

    A verified build in one of the `bundled` folders (an image's, read-only) is used first.

    A build writes each candidate beside its final path, runs `check` on it, and renames the first
    that passes into place before recording its digest. None, with a warning, when no candidate
    passes or the build fails: the caller then runs `source` itself.
    """
    for folder in bundled:
        found = _reuse(cached_model_path(folder, stem, source_sha256), source_sha256)
        if found is not None:
            return found
    path = cached_model_path(cache_dir, stem, source_sha256)
    reused = _reuse(path, source_sha256)
    if reused is not None:
        return reused
    log.info("building the int8 model %s from %s (first use: a few seconds)", path, source)
    try:
        built = _build(source, source_sha256, path, check, calibration())
    except OSError as error:
        log.warning(
            "cannot write the int8 model to %s (%s); running the packaged model (point RAGDOWN_MODELS "
            "at a writable folder to cache it)",
            cache_dir,
            error,
        )
        return None
    except Exception as error:  # a model the quantizer cannot handle must not stop the embedder loading
        log.warning("cannot build the int8 model (%s); running the packaged model", error)
        return None
    finally:
        release_free_memory()  # the build's graphs and sessions are garbage now
    if built is None:
        log.warning("no int8 build of %s passed the quality check; running the packaged model", source)
    return built
