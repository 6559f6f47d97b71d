"""ragdown: Markdown folders for AI agents, over MCP."""

import os

# Set before anything loads numpy: OpenBLAS reads it once, when it loads. Search's only BLAS work is
# one matrix-vector product per retrieval, far too small to split, and concurrent searches each asking
# OpenBLAS's shared thread pool for help cost 20x the single-threaded product (docs/design.md#blas-threads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
