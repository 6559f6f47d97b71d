"""ragdown: Markdown folders for AI agents, over MCP."""

import os

# numpy's OpenBLAS starts a thread per core for every matrix product; ragdown's products are one
# query against a few thousand rows, which one thread does in well under a millisecond, while the
# threads' wake-ups contend with ONNX Runtime and BM25 for the same cores (docs/search.md#pools).
# Set before any module imports numpy; a value the user set wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
