"""ragdown: Markdown folders for AI agents, over MCP."""

import functools
import os
from importlib.metadata import PackageNotFoundError, version

# Set before anything loads numpy: OpenBLAS reads it once, when it loads. Search's only BLAS work is
# one matrix-vector product per retrieval, far too small to split, and concurrent searches each asking
# OpenBLAS's shared thread pool for help cost 20x the single-threaded product (docs/design.md#blas-threads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def __getattr__(name: str) -> str:
    """`__version__`: the installed distribution's, so pyproject.toml is the one place it is written
    (the Dockerfile's label and the chart's appVersion are checked against it). Looked up on first use:
    finding the distribution takes milliseconds a command that never shows it need not spend."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _installed_version()


@functools.cache
def _installed_version() -> str:
    try:
        return version("ragdown")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"
